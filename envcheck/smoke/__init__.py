"""smoke: prove the stack by compiling and running one CuteDSL GEMM in the target interpreter.

  run.py        the run: preflight, the child process and its log (through runner.py), the result read back
  forensics.py  what the child really loaded, judged (smoke.libraries)

The child itself is envcheck/inside/smoke_child.py; why a run failed, envcheck/causes/; the command,
commands/smoke.py; its text, render/smoke.py.
"""

from .run import DEFAULT_TIMEOUT, SmokeShape, child_environment, parse_child_output, run_smoke, smoke_backends

__all__ = ["run_smoke", "SmokeShape", "smoke_backends", "child_environment", "parse_child_output", "DEFAULT_TIMEOUT"]
