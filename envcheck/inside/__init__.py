"""What runs inside the target interpreter: the probe, the smoke and bench children, and what they share.

These files are run by path in another interpreter (the one being checked, maybe broken, maybe older than
envcheck's), so each imports only the standard library at module level, in Python 3.8 syntax (the probe: 3.6);
torch and the stack are imported inside functions. envcheck copies a child and its helpers into a run folder of its
own (the script under the name users see in logs, each helper as `envcheck_<name>.py`, so that no top-level module
torch or the DSL imports is shadowed) and runs it there; each file imports its siblings as `from . import x` when
envcheck's own process imports it, else as the `envcheck_x` copy beside it.
"""
