"""Facts about the target interpreter, from the stdlib-only probe run inside it."""

from __future__ import annotations

import json
import subprocess
from importlib import resources
from typing import Mapping, Optional

from ..model import Distribution, Interpreter, ModuleLocation, TorchBuild, canonical_name

__all__ = ["gather_interpreter", "probe_source"]


def probe_source() -> str:
    return resources.files("envcheck").joinpath("probe.py").read_text(encoding="utf-8")


def gather_interpreter(python: str, timeout: float = 30.0, env: Optional[Mapping[str, str]] = None) -> Interpreter:
    """Run the probe in `python` and read its JSON. Raises on failure; the caller records it as a fact."""
    try:
        done = subprocess.run(
            [python, "-c", probe_source()], capture_output=True, text=True, timeout=timeout, check=False,
            env=dict(env) if env is not None else None,
        )
    except FileNotFoundError:
        raise RuntimeError(f"no interpreter at {python}") from None
    except PermissionError:
        raise RuntimeError(f"{python} is not executable") from None
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"the probe did not finish within {timeout:.0f} s in {python}") from None
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        raise RuntimeError(f"the probe failed in {python} (exit {done.returncode}): {tail[0]}")
    try:
        return parse_probe(json.loads(done.stdout))
    except (ValueError, KeyError, TypeError) as exc:
        raise RuntimeError(f"{python} printed something that is not the probe's JSON: {exc}") from None


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
