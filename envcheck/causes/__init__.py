"""Known failures, shared by smoke, bench and explain: the signature table (`signatures.toml`), the explanation of
each known cause with its remedy, why a child run failed, and what a log shows.
"""
