"""piprun: the rule every pip envcheck starts follows, whatever it does (fix's installs, bundle's downloads).

pip runs `--isolated`, which skips the PIP_* variables and the user's configuration files, and without
PIP_CONFIG_FILE in its environment, so that no file a variable names applies. What is left is what an administrator
set for the machine: the global files ($XDG_CONFIG_DIRS/pip/pip.conf, by default /etc/xdg/pip/pip.conf, then
/etc/pip.conf) and the environment's own (sys.prefix/pip.conf), where a cluster's package mirror, CA bundle and
proxy live; a user's or a variable's file cannot inject options. fix/pipconfig says which files those are here.
"""

from __future__ import annotations

from typing import Mapping

__all__ = ["ISOLATED", "REMOVED", "environment"]

ISOLATED = "--isolated"  # pip's option on every pip command line envcheck runs
REMOVED = ("PIP_CONFIG_FILE",)  # variables no pip child of envcheck sees


def environment(base: Mapping[str, str], **extra: str) -> dict[str, str]:
    """A pip child's environment: base without REMOVED, then extra."""
    return {**{k: v for k, v in base.items() if k not in REMOVED}, **extra}
