"""smoke: prove the stack by compiling and running one CuteDSL GEMM in the target interpreter.

  run.py     the orchestration: preflight, the child process and its log, the result read back, `envcheck smoke`
  causes.py  why a run failed and what to do about it: failure signatures -> causes and remedies (pure)
  child.py   the script run in the target interpreter: standard library only at module level; read as a file and
             copied into each run directory, not imported there
"""

from .run import (
    DEFAULT_TIMEOUT,
    LOOKUP_MARKER,
    SmokeResult,
    SmokeShape,
    child_environment,
    parse_child_output,
    render_text,
    run_child,
    run_smoke,
    smoke_backends,
    smoke_command,
)

__all__ = [
    "SmokeResult",
    "SmokeShape",
    "run_smoke",
    "smoke_command",
    "child_environment",
    "parse_child_output",
    "smoke_backends",
    "DEFAULT_TIMEOUT",
    "LOOKUP_MARKER",
    "render_text",
    "run_child",
]
