cuda = "13.0"
