"""The target interpreter named by --python: checked before anything runs in it."""

from __future__ import annotations

import os
import shutil
import sys
from typing import TYPE_CHECKING, Optional

from ..errors import UsageError

if TYPE_CHECKING:
    from ..model import Interpreter

__all__ = ["resolve_python", "read_target", "unreadable", "require_interpreter"]


def resolve_python(flag: Optional[str]) -> str:
    """The absolute path of the interpreter to act on (default: the one running envcheck).

    Symbolic links are kept: a virtual environment's bin/python is a link, and following it would leave the venv.
    """
    if flag is None:
        return sys.executable
    path = flag if os.sep in flag else shutil.which(flag)
    if path is None or not os.path.isfile(path) or not os.access(path, os.X_OK):
        raise UsageError(
            f"--python {flag}: no executable interpreter there; expected the path of a python executable, "
            f"such as .venv/bin/python"
        )
    return os.path.abspath(path)


def read_target(flag: Optional[str]) -> Interpreter:
    """The target interpreter's facts, for a command that cannot go on without them: unreadable is a usage error."""
    from .interpreter import gather_interpreter

    python = resolve_python(flag)
    try:
        return gather_interpreter(python)
    except RuntimeError as exc:
        raise unreadable(python, str(exc)) from None


def unreadable(python: str, why: str) -> UsageError:
    """The usage error for a target interpreter that could not be read at all: nothing can be checked in it."""
    return UsageError(f"--python {python}: the target interpreter could not be read: {why}")


def require_interpreter(python: str, found: object) -> "Interpreter":
    """The gathered interpreter facts, or the usage error when gathering could not read the target."""
    from ..model import Interpreter

    if isinstance(found, Interpreter):
        return found
    raise unreadable(python, getattr(found, "message", None) or "no answer")
