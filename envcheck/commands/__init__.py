"""One module per command (doctor fix smoke bench lock verify bundle diff fleet explain dockerfile), each a function
that returns the exit code; cli.py parses the options and calls it. No command imports another: what two commands
share lives below them (diagnose.py, runner.py, render/, ...).
"""
