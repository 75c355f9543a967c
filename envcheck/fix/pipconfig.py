"""pipconfig: which pip configuration files a machine has, which of them envcheck's pip reads (none), and which
indexes and wheel folders a plan's pip steps use.

pip (`pip/_internal/configuration.py`, 23 to 25) reads the global files ($XDG_CONFIG_DIRS/pip/pip.conf, by default
/etc/xdg/pip/pip.conf, then /etc/pip.conf), the user's (~/.pip/pip.conf, $XDG_CONFIG_HOME/pip/pip.conf), the
environment's own (sys.prefix/pip.conf), the file PIP_CONFIG_FILE names, then the PIP_* variables, each over the last. `--isolated` skips
the user's files and the PIP_* variables only: a global file, the environment's file and PIP_CONFIG_FILE still apply
(a `constraint` in /etc/xdg/pip/pip.conf caps what `pip install --isolated` takes). PIP_CONFIG_FILE=os.devnull is
pip's documented "no configuration file at all". envcheck runs pip with both (ENV and `--isolated`), so what a plan
shows is what pip does: no file or variable adds an index, a wheel folder or a constraint to a step.
"""

from __future__ import annotations

import configparser
import os
from dataclasses import dataclass
from typing import Mapping, Sequence

from ..redact import redact_url
from .failure import tool_of

__all__ = ["ENV", "DEFAULT_INDEX", "ConfigFile", "PipSetup", "config_files", "pip_setup"]

ENV = {"PIP_CONFIG_FILE": os.devnull}  # in every pip child's environment (fix/apply.run_command)
DEFAULT_INDEX = "https://pypi.org/simple"


@dataclass(frozen=True)
class ConfigFile:
    """A pip configuration file that exists here, and the keys it sets (`section.key`)."""

    path: str
    scope: str  # "global", "user", "PIP_CONFIG_FILE", "site" (the target environment's own)
    keys: tuple[str, ...]

    def to_json(self) -> dict:
        return {"path": self.path, "scope": self.scope, "keys": list(self.keys), "used": False}


@dataclass(frozen=True)
class Source:
    """An index or a wheel folder pip steps use, and the steps (1-based) that use it."""

    kind: str  # "index" or "find-links"
    value: str
    steps: tuple[int, ...]
    default: bool = False  # pip's own default index: no step named one

    def to_json(self) -> dict:
        return {"kind": self.kind, "value": redact_url(self.value), "steps": list(self.steps), "default": self.default}


@dataclass(frozen=True)
class PipSetup:
    """What pip is run with: the configuration files it does not read, and where its packages come from."""

    ignored: tuple[ConfigFile, ...]
    sources: tuple[Source, ...]

    def to_json(self) -> dict:
        return {"isolated": True, "env": dict(ENV), "config_files": [f.to_json() for f in self.ignored],
                "sources": [s.to_json() for s in self.sources]}


def _places(prefix: str, env: Mapping[str, str]) -> list[tuple[str, str]]:
    """(scope, path) of every file pip would read for an environment at prefix, in pip's order."""
    home = env.get("HOME") or os.path.expanduser("~")
    dirs = (env.get("XDG_CONFIG_DIRS") or "").strip() or "/etc/xdg"
    user_dir = (env.get("XDG_CONFIG_HOME") or "").strip() or os.path.join(home, ".config")
    places = [("global", os.path.join(os.path.expanduser(d), "pip", "pip.conf")) for d in dirs.split(os.pathsep) if d]
    places += [("global", "/etc/pip.conf"), ("user", os.path.join(home, ".pip", "pip.conf")),
               ("user", os.path.join(user_dir, "pip", "pip.conf")), ("site", os.path.join(prefix, "pip.conf"))]
    if env.get("PIP_CONFIG_FILE") and env["PIP_CONFIG_FILE"] != os.devnull:
        places.append(("PIP_CONFIG_FILE", env["PIP_CONFIG_FILE"]))
    return places


def config_files(prefix: str, env: Mapping[str, str]) -> tuple[ConfigFile, ...]:
    """The pip configuration files that exist for the environment at prefix (pip without envcheck would read them)."""
    found, seen = [], set()
    for scope, path in _places(prefix, env):
        if path in seen or not os.path.isfile(path):
            continue
        seen.add(path)
        parser = configparser.RawConfigParser()
        try:
            parser.read(path, encoding="utf-8")
            keys = tuple(f"{section}.{key}" for section in parser.sections() for key in parser.options(section))
        except (OSError, UnicodeDecodeError, configparser.Error) as exc:
            keys = (f"(unreadable: {type(exc).__name__})",)
        found.append(ConfigFile(path, scope, keys))
    return tuple(found)


def pip_setup(commands: Sequence[tuple[int, Sequence[str]]], ignored: Sequence[ConfigFile] = ()) -> PipSetup:
    """Where the pip commands (step number, argv) take packages from: their --index-url (else pip's default index,
    unless --no-index), --extra-index-url and --find-links values; the configuration files they ignore."""
    uses: dict[tuple[str, str, bool], list[int]] = {}
    for step, argv in commands:
        if tool_of(argv) != "pip" or not {"install", "download"} & set(argv):
            continue
        options = list(argv[: list(argv).index("--")] if "--" in argv else argv)
        found = [("index", a.split("=", 1)[1], False) for a in options if a.startswith(("--index-url=", "--extra-index-url="))]
        if "--no-index" in options:
            found = []
        elif not any(a.startswith("--index-url=") for a in options):
            found.insert(0, ("index", DEFAULT_INDEX, True))
        found += [("find-links", a.split("=", 1)[1], False) for a in options if a.startswith("--find-links=")]
        for key in found:
            if step not in uses.setdefault(key, []):
                uses[key].append(step)
    return PipSetup(tuple(ignored), tuple(Source(k, v, tuple(s), d) for (k, v, d), s in uses.items()))
