"""pipconfig: which pip configuration files a machine has, which of them envcheck's pip reads, and which indexes and
wheel folders a plan's pip steps use, those files' settings included.

pip (`pip/_internal/configuration.py`, 23 to 25) looks for the global files ($XDG_CONFIG_DIRS/pip/pip.conf, by
default /etc/xdg/pip/pip.conf, then /etc/pip.conf), the user's (~/.pip/pip.conf, then $XDG_CONFIG_HOME/pip/pip.conf),
the environment's own (sys.prefix/pip.conf: the target's, the interpreter pip runs in) and the file PIP_CONFIG_FILE
names, in that order, each key of a later file over the same key of an earlier one; in a file, a key of the
command's section ([install], [download]) over the same key of [global]. envcheck's rule (envcheck/piprun):
`--isolated` skips the user's files (and the PIP_* variables), PIP_CONFIG_FILE is removed from pip's environment, so
pip reads the global files and the environment's: what an administrator set. The plan shows every file found,
read or not and why, and each step's indexes with the file that set them.
"""

from __future__ import annotations

import configparser
import os
from dataclasses import dataclass
from typing import Mapping, Optional, Sequence

from ..piprun import ISOLATED, REMOVED
from ..redact import redact_url, url_secrets
from .failure import tool_of

__all__ = ["DEFAULT_INDEX", "ConfigFile", "Source", "PipSetup", "config_files", "read_secrets", "setting", "configured_constraint",
           "pip_setup"]

DEFAULT_INDEX = "https://pypi.org/simple"
_TRUE = ("y", "yes", "t", "true", "on", "1")  # what pip's strtobool reads as true


@dataclass(frozen=True)
class ConfigFile:
    """A pip configuration file that exists here: whether envcheck's pip reads it and why, and what it sets
    (`section.key`, value; keys as pip normalizes them)."""

    path: str
    scope: str  # "global", "user", "site" (the target environment's own), "PIP_CONFIG_FILE"
    read: bool
    why: str
    settings: tuple[tuple[str, str], ...] = ()
    error: str = ""  # why it could not be parsed (pip stops on such a file it reads)

    @property
    def keys(self) -> tuple[str, ...]:
        return (f"(unreadable: {self.error})",) if self.error else tuple(key for key, _ in self.settings)

    @property
    def label(self) -> str:
        return f"{self.path} ({self.scope})"

    def to_json(self) -> dict:
        return {"path": self.path, "scope": self.scope, "read": self.read, "why": self.why, "keys": list(self.keys)}


@dataclass(frozen=True)
class Source:
    """An index or a wheel folder pip steps use, the steps (1-based) that use it, and the file that set it."""

    kind: str  # "index" or "find-links"
    value: str
    steps: tuple[int, ...]
    default: bool = False  # pip's own default index: neither a step nor a file named one
    origin: str = ""  # the configuration file (its label) that set it; "" when the command line did

    def to_json(self) -> dict:
        return {"kind": self.kind, "value": redact_url(self.value), "steps": list(self.steps), "default": self.default,
                "from": self.origin or None}


@dataclass(frozen=True)
class PipSetup:
    """What pip is run with: the configuration files found (read or not), and where its packages come from."""

    files: tuple[ConfigFile, ...]
    sources: tuple[Source, ...]

    def to_json(self) -> dict:
        return {"isolated": True, "removed_from_env": list(REMOVED), "config_files": [f.to_json() for f in self.files],
                "sources": [s.to_json() for s in self.sources]}


def _places(prefix: str, env: Mapping[str, str]) -> list[tuple[str, str, bool, str]]:
    """(scope, path, read, why) of every file pip looks for, for an environment at prefix, in pip's order; env is
    envcheck's environment, which pip's inherits (XDG_CONFIG_DIRS, HOME and XDG_CONFIG_HOME as the child sees them)."""
    home = env.get("HOME") or os.path.expanduser("~")

    def expand(path: str) -> str:  # os.path.expanduser, with the child's HOME
        return home + path[1:] if path == "~" or path.startswith("~/") else path

    dirs = (env.get("XDG_CONFIG_DIRS") or "").strip() or "/etc/xdg"
    user_dir = (env.get("XDG_CONFIG_HOME") or "").strip() or os.path.join(home, ".config")
    machine, user = "machine-wide: an administrator's", f"{ISOLATED} skips the user's files"
    places = [("global", os.path.join(expand(d), "pip", "pip.conf"), True, machine) for d in dirs.split(os.pathsep) if d]
    places += [("global", "/etc/pip.conf", True, machine),
               ("user", os.path.join(home, ".pip", "pip.conf"), False, user),
               ("user", os.path.join(expand(user_dir), "pip", "pip.conf"), False, user),
               ("site", os.path.join(prefix, "pip.conf"), True, "the target environment's own (sys.prefix)")]
    if env.get("PIP_CONFIG_FILE") and env["PIP_CONFIG_FILE"] != os.devnull:
        removed = "PIP_CONFIG_FILE" in REMOVED
        places.append(("PIP_CONFIG_FILE", env["PIP_CONFIG_FILE"], not removed,
                       "envcheck removes PIP_CONFIG_FILE from pip's environment" if removed else "PIP_CONFIG_FILE names it"))
    return places


def config_files(prefix: str, env: Mapping[str, str]) -> tuple[ConfigFile, ...]:
    """The pip configuration files that exist for the environment at prefix, with what each sets and whether
    envcheck's pip reads it (env: envcheck's environment, the one its pip children start from)."""
    found, seen = [], set()
    for scope, path, read, why in _places(prefix, env):
        if path in seen or not os.path.isfile(path):
            continue
        seen.add(path)
        parser = configparser.RawConfigParser()
        try:
            parser.read(path, encoding="utf-8")
            settings = tuple((f"{section}.{_normal(key)}", value) for section in parser.sections()
                             for key, value in parser.items(section))
            found.append(ConfigFile(path, scope, read, why, settings))
        except (OSError, UnicodeDecodeError, configparser.Error) as exc:
            found.append(ConfigFile(path, scope, read, why, error=type(exc).__name__))
    return tuple(found)


def read_secrets(files: Sequence[ConfigFile]) -> tuple[str, ...]:
    """The secret parts of every URL the files pip reads set (redact.url_secrets): what pip may print apart from
    its URL (an index's path with its query, when it cannot reach it), for the masking of fix's and bundle's output."""
    return url_secrets(*(value for file in files if file.read for _, value in file.settings))


def _normal(name: str) -> str:
    """A key as pip names it (configuration._normalize_name)."""
    name = name.lower().replace("_", "-")
    return name[2:] if name.startswith("--") else name


def setting(files: Sequence[ConfigFile], command: str, key: str) -> Optional[tuple[str, ConfigFile]]:
    """The value pip's `command` takes for `key` from the files it reads, and the file that set it: the command's
    section over [global]; in each, the last file pip reads that has the key (an empty value there sets nothing)."""
    for section in (command, "global"):
        for file in reversed([f for f in files if f.read]):
            value = dict(file.settings).get(f"{section}.{key}")
            if value is not None:
                if value:
                    return value, file
                break
    return None


def _command(argv: Sequence[str]) -> str:
    """The pip command of a pip argv whose configuration section matters here ("install", "download"), else ""."""
    options = list(argv[: list(argv).index("--")] if "--" in argv else argv)
    return next((a for a in ("install", "download") if a in options), "") if tool_of(argv) == "pip" else ""


def configured_constraint(argv: Sequence[str], files: Sequence[ConfigFile]) -> tuple[tuple[str, str], ...]:
    """(file, value) of the `constraint` the files pip reads give this pip command, if one does."""
    found = setting(files, _command(argv), "constraint") if _command(argv) else None
    return ((found[1].path, found[0]),) if found else ()


def _configured(files: Sequence[ConfigFile], command: str, key: str) -> list[tuple[str, str]]:
    """(value, origin) of each value a list option (extra-index-url, find-links) takes from the files."""
    found = setting(files, command, key)
    return [(value, found[1].label) for value in found[0].split()] if found else []


def pip_setup(commands: Sequence[tuple[int, Sequence[str]]], files: Sequence[ConfigFile] = ()) -> PipSetup:
    """Where the pip commands (step number, argv) take packages from: --index-url, else an index-url of a file pip
    reads, else pip's default index; the extra-index-url and find-links of the files and of the argv (pip adds
    the command line's to the files'); none of the indexes under --no-index or a file's no-index."""
    uses: dict[tuple[str, str, bool, str], list[int]] = {}
    for step, argv in commands:
        command = _command(argv)
        if not command:
            continue
        options = list(argv[: list(argv).index("--")] if "--" in argv else argv)
        given = [a.split("=", 1)[1] for a in options if a.startswith("--index-url=")]
        main = setting(files, command, "index-url")
        index = ([(given[-1], False, "")] if given else [(main[0], False, main[1].label)] if main
                 else [(DEFAULT_INDEX, True, "")])
        extras = _configured(files, command, "extra-index-url") + [
            (a.split("=", 1)[1], "") for a in options if a.startswith("--extra-index-url=")]
        found = [("index", value, default, origin) for value, default, origin in index]
        found += [("index", value, False, origin) for value, origin in extras]
        off = setting(files, command, "no-index")
        if "--no-index" in options or (off is not None and off[0].strip().lower() in _TRUE):
            found = []
        found += [("find-links", value, False, origin) for value, origin in _configured(files, command, "find-links")]
        found += [("find-links", a.split("=", 1)[1], False, "") for a in options if a.startswith("--find-links=")]
        for key in found:
            if step not in uses.setdefault(key, []):
                uses[key].append(step)
    return PipSetup(tuple(files), tuple(Source(k, v, tuple(s), d, o) for (k, v, d, o), s in uses.items()))
