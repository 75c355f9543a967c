"""What fix needs to know of the host beyond the gathered facts: how to run pip for the target, and whether its
distribution manages it (PEP 668). The other Python interpreters on this machine are gathered facts
(gather/pythons.py)."""

from __future__ import annotations

from pathlib import Path

from .. import shell
from ..errors import UsageError
from ..model import Interpreter
from .pip import pip_prefix

__all__ = ["pip_for", "externally_managed"]


def pip_for(interpreter: Interpreter) -> tuple[str, ...]:
    """The target's own pip, or envcheck's driving it with --python (a venv made without pip)."""
    if interpreter.dist("pip") is not None:
        return pip_prefix(interpreter.executable, True)
    try:
        from importlib.metadata import version

        own = tuple(int(x) for x in version("pip").split(".")[:2])
    except Exception:  # noqa: BLE001 - no pip next to envcheck, or an odd version
        own = (0, 0)
    if own < (22, 3):
        raise UsageError(
            f"--python {interpreter.executable}: this interpreter has no pip, and envcheck's own pip is too old to "
            f"drive it (pip --python needs 22.3). Run `{shell.line((interpreter.executable, '-m', 'ensurepip'))}` first."
        )
    return pip_prefix(interpreter.executable, False)


def externally_managed(interpreter: Interpreter) -> bool:
    major, minor = interpreter.version[:2]
    marker = Path(interpreter.base_prefix) / "lib" / f"python{major}.{minor}" / "EXTERNALLY-MANAGED"
    return not interpreter.in_venv and marker.is_file()
