"""Known failures, shared by smoke, bench and explain: the signature table (`signatures.toml`), the explanation of
each known cause with its remedy, why a child run failed, and what a log shows.
"""

from .explanations import (
    SIGNATURES,
    Cause,
    Context,
    Evidence,
    context_from,
    diagnose,
    explain_match,
    preflight,
)

__all__ = ["Cause", "Context", "Evidence", "context_from", "diagnose", "preflight", "explain_match", "SIGNATURES"]
