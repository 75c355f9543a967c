"""What fix needs to know of the host beyond the gathered facts: how to run pip for the target, and whether its
distribution manages it (PEP 668). The other Python interpreters on this machine are gathered facts
(gather/pythons.py)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Optional

from packaging.version import InvalidVersion, Version

from .. import DISTRIBUTION, shell
from ..errors import UsageError
from ..model import Interpreter
from ..uvenv import UV_TOOL, UV_VENV, UVX, uv_environment
from .pip import pip_prefix

__all__ = ["pip_for", "no_pip", "externally_managed"]


def pip_for(interpreter: Interpreter, own_pip: Optional[str] = "", environment: Optional[str] = None) -> tuple[str, ...]:
    """The target's own pip, or envcheck's driving it with --python (a venv made without pip). own_pip: the version
    of the pip beside envcheck (None: none; "" read it); environment: how uv made envcheck's (uvenv.uv_environment)."""
    if interpreter.dist("pip") is not None:
        return pip_prefix(interpreter.executable, True)
    own_pip = _own_pip() if own_pip == "" else own_pip
    if own_pip is not None and _release(own_pip) >= DRIVES:
        return pip_prefix(interpreter.executable, False)
    raise UsageError(no_pip(interpreter, own_pip, uv_environment() if environment is None else environment))


DRIVES = (22, 3)  # the first pip with --python: one pip installs into another interpreter


def no_pip(interpreter: Interpreter, own_pip: Optional[str], environment: str) -> str:
    """Why fix cannot run pip for a target without one, and what to run instead: where envcheck runs in uv's
    environments (which have no pip), the uv command that brings one (the README's `uvx --with pip`); never a pip put
    into uv's cache, which uv throws away."""
    target = interpreter.executable
    said = (f"--python {target}: this interpreter has no pip, and "
            + ("envcheck's own environment has none either" if own_pip is None else
               f"envcheck's own pip {own_pip} is too old to drive it (pip --python needs {DRIVES[0]}.{DRIVES[1]})"))
    own = os.path.realpath(interpreter.prefix) == os.path.realpath(sys.prefix)
    if environment == UVX:
        said += (f": envcheck runs in an environment uvx made in uv's cache. Run it with pip beside it, as the README "
                 f"says: `uvx --with pip --from ./envcheck envcheck fix ...` (`--from` what you ran it from: a clone, "
                 f"or {DISTRIBUTION})")
    elif environment == UV_TOOL:
        said += (f": envcheck was installed with `uv tool install`. Install it with pip beside it: "
                 f"`{shell.line(('uv', 'tool', 'install', '--with', 'pip', DISTRIBUTION))}`")
    elif environment == UV_VENV:
        said += f". Give envcheck's environment a pip: `{shell.line(('uv', 'pip', 'install', '--python', sys.executable, 'pip'))}`"
    elif own_pip is None:
        said += f". Give envcheck's environment a pip: `{shell.line((sys.executable, '-m', 'ensurepip'))}`"
    else:
        said += f". Upgrade it: `{shell.line((sys.executable, '-m', 'pip', 'install', '--upgrade', 'pip'))}`"
    if own and environment in (UVX, UV_TOOL):
        return said + (", with --python naming the environment to fix (this one is envcheck's own, which uv "
                       "manages).")
    if not own:
        said += f"; or give the target a pip of its own: `{shell.line((target, '-m', 'ensurepip'))}`"
    return said + "."


def _own_pip() -> Optional[str]:
    """The version of the pip beside envcheck; None: there is none."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("pip")
    except PackageNotFoundError:
        return None


def _release(text: str) -> tuple[int, ...]:
    """A pip version's (major, minor); (0, 0) for one that is not a version."""
    try:
        return Version(text).release[:2]
    except InvalidVersion:
        return (0, 0)


def externally_managed(interpreter: Interpreter) -> bool:
    major, minor = interpreter.version[:2]
    marker = Path(interpreter.base_prefix) / "lib" / f"python{major}.{minor}" / "EXTERNALLY-MANAGED"
    return not interpreter.in_venv and marker.is_file()
