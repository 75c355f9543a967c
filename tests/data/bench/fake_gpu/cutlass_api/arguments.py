class GemmArguments:
    def __init__(self, a, b, out, accumulator_type=None):
        self.a, self.b, self.out = a, b, out
