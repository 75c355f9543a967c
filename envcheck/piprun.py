"""piprun: the rule every pip envcheck starts follows, whatever it does (fix's installs, bundle's downloads).

pip runs `--isolated`, which skips the PIP_* variables and the user's configuration files, and without
PIP_CONFIG_FILE in its environment, so that no file a variable names applies. What is left is what an administrator
set for the machine: the global files ($XDG_CONFIG_DIRS/pip/pip.conf, by default /etc/xdg/pip/pip.conf, then
/etc/pip.conf) and the environment's own (sys.prefix/pip.conf), where a cluster's package mirror, CA bundle and
proxy live; a user's or a variable's file cannot inject options. fix/pipconfig says which files those are here.

pip runs in a private, empty folder of its own (run): `python -m pip` puts its working directory first on
sys.path, so a `pip/` or `json.py` in the user's folder would run instead. An index URL that holds a secret goes to
pip in a file in that folder, not in its argv, which every user of the machine can read (redact.index_out_of_argv).
"""

from __future__ import annotations

from typing import Mapping, Sequence

from . import proc
from .redact import index_out_of_argv

__all__ = ["ISOLATED", "REMOVED", "environment", "run"]

ISOLATED = "--isolated"  # pip's option on every pip command line envcheck runs
REMOVED = ("PIP_CONFIG_FILE",)  # variables no pip child of envcheck sees


def environment(base: Mapping[str, str], **extra: str) -> dict[str, str]:
    """A pip child's environment: base without REMOVED, then extra."""
    return {**{k: v for k, v in base.items() if k not in REMOVED}, **extra}


def run(argv: Sequence[str], timeout: float, *, env: Mapping[str, str], **options) -> proc.Finished:  # noqa: ANN003
    """A pip command (argv: absolute paths only) to its end or its time limit, in a private empty folder of its own
    (proc.private_folder), an index URL's secret in a file there; options as proc.run takes them (on_line, ...)."""
    with proc.private_folder() as folder:
        return proc.run(index_out_of_argv(argv, folder), timeout, env=env, cwd=str(folder), **options)
