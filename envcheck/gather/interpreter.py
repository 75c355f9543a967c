"""Facts about the target interpreter, from the stdlib-only probe run inside it."""

from __future__ import annotations

import json
import os
from typing import Mapping, Optional, Sequence

from ..model import Distribution, Interpreter, ModuleLocation, PthImport, SourceValue, TorchBuild, canonical_name
from ..proc import MAX_OUTPUT, Child
from ..userdata import parse_json

__all__ = ["Probe", "gather_interpreter", "probe_source"]


ISOLATED = ("-I", "-S")  # how the probe's interpreter runs: nothing of the target's executes

_INSIDE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "inside")
_PROBE = ("search_path.py", "probe.py")  # one source, in this order: the probe uses what search_path defines


def probe_source() -> str:
    """The probe as the target runs it (`python -I -S -c SOURCE`): envcheck/inside/search_path.py, then probe.py."""
    parts = []
    for name in _PROBE:
        with open(os.path.join(_INSIDE, name), encoding="utf-8") as handle:
            parts.append(handle.read())
    return "\n".join(parts)


class Probe:
    """The probe, started in the target interpreter at once; its result is read later.

    The interpreter runs isolated (`-I -S`): no site (so no .pth file, sitecustomize or usercustomize runs), no
    PYTHON* variable applied, no working directory or user site on its path; the probe computes the path the target
    would have from data (probe.SearchPath) and still reads PYTHONPATH and PYTHONHOME as text from `env`.

    Starting it before envcheck's own heavier imports lets the two overlap (doctor's start-up is a measured goal).
    It runs in a process group of its own: when it ends or its time is up, whatever it started is killed, so a
    child holding its stdout open cannot keep envcheck waiting. The modules to locate (the profile's) are handed
    over with result(): the probe reads them from stdin after its slow part, so it can start before the profile is
    read."""

    def __init__(self, python: str, env: Optional[Mapping[str, str]] = None):
        self.python = python
        self.error: Optional[str] = None
        self.child: Optional[Child] = None
        try:  # in an empty folder of its own (proc); told the user's, where a relative PYTHONPATH entry starts
            self.child = Child([python, *ISOLATED, "-c", probe_source(), "-", _here()], env=env, input=b"")
        except FileNotFoundError:
            self.error = f"no interpreter at {python}"
        except PermissionError:
            self.error = f"{python} is not executable"
        except OSError as exc:
            self.error = f"{python} could not be started: {exc.strerror or exc}"

    def result(self, timeout: float = 30.0, modules: Sequence[str] = (),
               torch_values: Sequence[tuple[str, str]] = ()) -> Interpreter:
        """The interpreter's facts, `modules` located and `torch_values` ((file, name) in torch's folder) read. Raises
        on failure; the caller records it as a fact."""
        if self.child is None:
            raise RuntimeError(self.error)
        request = {"modules": list(modules), "torch_values": [list(pair) for pair in torch_values]}
        self.child.feed((json.dumps(request) + "\n").encode())
        end = self.child.finish(timeout)
        if end.timed_out:
            raise RuntimeError(f"the probe did not finish within {timeout:.0f} s in {self.python} (it was killed)")
        if end.returncode != 0:
            tail = (end.stderr or end.stdout).strip().splitlines()[-1:] or ["no output"]
            raise RuntimeError(
                f"{self.python} did not run envcheck's probe (exit {end.returncode}: {_quoted(tail[0])}); "
                f"expected a Python interpreter"
            )
        if end.stdout_cut:
            raise RuntimeError(f"{self.python}'s probe answered with more than {MAX_OUTPUT >> 20} MiB (a target with "
                               "that many distributions is more than envcheck reads)")
        try:
            return parse_probe(parse_json(end.stdout, "its output", ValueError))  # numbers and nesting checked too
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise RuntimeError(
                f"{self.python} printed something that is not the probe's JSON ({_short(str(exc))}); "
                f"expected a Python interpreter"
            ) from None


def _here() -> str:
    try:
        return os.getcwd()
    except OSError:  # the folder envcheck was started in is gone: no relative entry resolves anywhere
        return "/"


def _short(text: str, limit: int = 160) -> str:
    """A line of a program's output as a message quotes it: cut short."""
    return text if len(text) <= limit else f"{text[:limit]}..."


def _quoted(line: str) -> str:
    """A line of the target's output for a message; a program that is not Python may echo the probe's source
    back (`ls -c SOURCE`: "cannot access '...'"), which is not worth showing."""
    if any(len(source) >= 24 and source in line for source in probe_source().splitlines()):
        return "it printed the probe's source back"
    return _short(line)


def gather_interpreter(
    python: str, timeout: float = 30.0, env: Optional[Mapping[str, str]] = None, modules: Sequence[str] = (),
    torch_values: Sequence[tuple[str, str]] = (),
) -> Interpreter:
    """Run the probe in `python` and read its JSON, locating `modules` and reading `torch_values` (the profile's).
    Raises on failure; the caller records it as a fact."""
    return Probe(python, env).result(timeout, modules, torch_values)


_SHAPE = (("executable", str), ("implementation", str), ("prefix", str), ("base_prefix", str),
          ("site_dirs", list), ("sys_path", list), ("distributions", list), ("modules", list))


def _check_shape(data: object) -> None:
    """The probe's answer has its shape, or ValueError: a program that only looks like Python is bad input."""
    if not isinstance(data, dict):
        raise ValueError("not a JSON object")
    for key, kind in _SHAPE:
        if not isinstance(data.get(key), kind):
            raise ValueError(f"'{key}' is not a {kind.__name__}")
    version = data.get("version")
    if not (isinstance(version, list) and len(version) >= 2 and all(isinstance(v, int) for v in version[:3])):
        raise ValueError("'version' is not a list of numbers")
    for entry in data["distributions"] + data["modules"]:
        if not (isinstance(entry, dict) and isinstance(entry.get("name"), str)):
            raise ValueError("a distribution or module without a name")
    if not all(isinstance(data.get(key, ""), str) for key in ("pythonpath", "pythonhome")):
        raise ValueError("'pythonpath' or 'pythonhome' is not text")
    for entry in data.get("pth_imports", []):
        if not (isinstance(entry, dict) and isinstance(entry.get("file"), str) and isinstance(entry.get("line"), str)
                and isinstance(entry.get("added", []), list) and all(isinstance(a, str) for a in entry.get("added", []))):
            raise ValueError("a .pth import line without its file, text and the folders it adds")
    if not isinstance(data.get("torch") or {}, dict) or not isinstance(data.get("markers") or {}, dict):
        raise ValueError("'torch' or 'markers' is not an object")
    values = (data.get("torch") or {}).get("values", [])
    if not (isinstance(values, list) and all(isinstance(v, dict) for v in values)):
        raise ValueError("'torch.values' is not a list of objects")


def parse_probe(data: dict) -> Interpreter:
    _check_shape(data)
    torch = data.get("torch")
    return Interpreter(
        executable=data["executable"],
        version=tuple(data["version"]),
        implementation=data["implementation"],
        prefix=data["prefix"],
        base_prefix=data["base_prefix"],
        site_dirs=tuple(data["site_dirs"]),
        sys_path=tuple(data["sys_path"]),
        pythonpath=data.get("pythonpath", ""),
        pythonhome=data.get("pythonhome", ""),
        pth_imports=tuple(PthImport(p["file"], p["line"], tuple(p.get("added", ()))) for p in data.get("pth_imports", [])),
        distributions=tuple(
            Distribution(
                name=canonical_name(d["name"]),
                version=d["version"],
                location=d["location"],
                requires=tuple(d.get("requires", ())),
                editable=_path_from_url(d.get("url")) if d.get("editable") else None,
                url=None if d.get("editable") else d.get("url"),
                commit=d.get("commit"),
                installer=d.get("installer"),
            )
            for d in data["distributions"]
        ),
        modules=tuple(ModuleLocation(m["name"], m.get("origin"), m.get("error")) for m in data["modules"]),
        torch=TorchBuild(torch["version"], torch.get("cuda"), torch.get("git_version"), torch.get("path", ""),
                         tuple(_source_value(v) for v in torch.get("values") or ()))
        if torch and torch.get("version")
        else None,
        markers=tuple(sorted(data.get("markers", {}).items())),
    )


def _source_value(data: dict) -> SourceValue:
    """One number the probe read in torch's sources; a value that is not a whole number is none (bad input)."""
    value, line = data.get("value"), data.get("line")
    if not isinstance(data.get("file"), str) or not isinstance(data.get("name"), str):
        raise ValueError("a torch value without its file and name")
    if not (isinstance(value, int) and not isinstance(value, bool) and isinstance(line, int)):
        return SourceValue(data["file"], data["name"], why=str(data.get("why") or "not read"))
    return SourceValue(data["file"], data["name"], value, line)


def _path_from_url(url: str | None) -> str | None:
    if not url:
        return None
    from urllib.parse import unquote, urlparse

    parsed = urlparse(url)
    return unquote(parsed.path) if parsed.scheme == "file" else url
