"""fix: turn failing findings into an ordered plan, show it, apply it when asked, and undo it.

  plan.py      findings + facts + policy -> an immutable Plan of steps with their exact commands (pure)
  pip.py       validated pip sources and requirements, and the argv of every pip call
  cutlass.py   the shallow, blob-filtered, sparse CUTLASS fetch with GitPython, and its undo
  preflight.py every step's preconditions, checked before the first change
  promise.py   what a plain fix would fix, for doctor's "envcheck fix can fix" line
  apply.py     runs a plan's steps with an injected process runner: progress, a log, a clear account
  snapshot.py  the environment before the first change, wheels of what was replaced, the undo plan
  host.py      how pip runs for the target, PEP 668, the other interpreters on this machine
  render.py    a plan and an outcome as text for people
  command.py   `envcheck fix`: run_fix(FixOptions) -> exit code; orchestration only
"""

__all__ = ["FixOptions", "run_fix"]


def __getattr__(name: str):
    """`envcheck fix`'s entry points, imported on first use: doctor's promise needs only plan.py, and the rest of
    the fixer (snapshot, apply, GitPython) is not doctor's start-up."""
    if name in __all__:
        from . import command

        return getattr(command, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
