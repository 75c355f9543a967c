"""Facts about the target interpreter, from the stdlib-only probe run inside it."""

from __future__ import annotations

import json
import subprocess
import os
from typing import Mapping, Optional, Sequence

from ..model import Distribution, Interpreter, ModuleLocation, TorchBuild, canonical_name

__all__ = ["Probe", "gather_interpreter", "probe_source"]


_PROBE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "probe.py")


def probe_source() -> str:
    with open(_PROBE, encoding="utf-8") as handle:
        return handle.read()


class Probe:
    """The probe, started in the target interpreter at once; its result is read later.

    Starting it before envcheck's own heavier imports lets the two overlap (doctor's start-up is a measured goal).
    The modules to locate (the profile's) are handed over with result(): the probe reads them from stdin after its
    slow part, so it can start before the profile is read."""

    def __init__(self, python: str, env: Optional[Mapping[str, str]] = None):
        self.python = python
        self.error: Optional[str] = None
        self.process: Optional[subprocess.Popen] = None
        try:
            self.process = subprocess.Popen(
                [python, "-c", probe_source(), "-"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                text=True, env=dict(env) if env is not None else None,
            )
        except FileNotFoundError:
            self.error = f"no interpreter at {python}"
        except PermissionError:
            self.error = f"{python} is not executable"
        except OSError as exc:
            self.error = f"{python} could not be started: {exc}"

    def result(self, timeout: float = 30.0, modules: Sequence[str] = ()) -> Interpreter:
        """The interpreter's facts, `modules` located. Raises on failure; the caller records it as a fact."""
        if self.process is None:
            raise RuntimeError(self.error)
        try:
            stdout, stderr = self.process.communicate(json.dumps(list(modules)) + "\n", timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.communicate()
            raise RuntimeError(f"the probe did not finish within {timeout:.0f} s in {self.python}") from None
        if self.process.returncode != 0:
            tail = (stderr or stdout).strip().splitlines()[-1:] or ["no output"]
            raise RuntimeError(f"the probe failed in {self.python} (exit {self.process.returncode}): {tail[0]}")
        try:
            return parse_probe(json.loads(stdout))
        except (ValueError, KeyError, TypeError) as exc:
            raise RuntimeError(f"{self.python} printed something that is not the probe's JSON: {exc}") from None


def gather_interpreter(
    python: str, timeout: float = 30.0, env: Optional[Mapping[str, str]] = None, modules: Sequence[str] = ()
) -> Interpreter:
    """Run the probe in `python` and read its JSON, locating `modules` (the profile's). Raises on failure; the
    caller records it as a fact."""
    return Probe(python, env).result(timeout, modules)


def parse_probe(data: dict) -> Interpreter:
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
        torch=TorchBuild(torch["version"], torch.get("cuda"), torch.get("git_version"), torch.get("path", ""))
        if torch and torch.get("version")
        else None,
        markers=tuple(sorted(data.get("markers", {}).items())),
    )


def _path_from_url(url: str | None) -> str | None:
    if not url:
        return None
    from urllib.parse import unquote, urlparse

    parsed = urlparse(url)
    return unquote(parsed.path) if parsed.scheme == "file" else url
