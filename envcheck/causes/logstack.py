"""What a log says of the stack that wrote it (a LogStack), read a block at a time beside the search for known
failures: the torch version it names, the kernel libraries and Inductor code its lines go through, Inductor's own
frames (whose lines tell torch releases apart: the profiles' [[torch.frames]]), the folder its DSL's `cutlass` is in,
and the interpreter whose site directory holds its torch. Paths are only text here: nothing a log names is run or
opened. Every search is one pass of a regular expression over the block, and the frames and site directories kept
are capped, so that a huge log costs no more than reading it."""

from __future__ import annotations

import re
from typing import Optional

from ..model import LogStack

__all__ = ["StackReader", "interpreter_of"]

MAX_FRAMES = 64  # distinct Inductor frames kept
MAX_SITES = 64  # site directories looked at, at most, before one that holds torch
PATH_CHARS = 512  # how far before a site directory's `/lib/pythonX.Y/` its prefix is looked for

# A torch version as logs name it: `torch 2.14.1`, `torch==2.15.0`, `torch-2.14.1+cu130` (a wheel, a pip line, a
# dist-info folder), `PyTorch version: 2.15.0+cu132` (torch.utils.collect_env).
# No \b first, and no alternation of the two: a pattern that starts with a literal is searched many times faster (the
# word's start is checked after); each number is bounded, so that a run of digits costs no more than reading it.
_VERSION = r"(\d{1,4}\.\d{1,4}(?:\.\d{1,4})?(?:\+\w{1,64})?)\b"
_TORCH = (re.compile(r"torch(?:==| |-)" + _VERSION), re.compile(r"PyTorch version: " + _VERSION))
_NVGEMM = "nv_universal_gemm"
_INDUCTOR = "torch/_inductor/"
# A traceback's frame in Inductor: `File ".../torch/_inductor/graph.py", line 1595, in call_function`.
_FRAME = re.compile(r'(torch/_inductor/[\w/]{1,256}\.py)", line ([0-9]{1,9}), in (\w+)')  # bounded: linear
# A site directory: `<prefix>/lib/python3.12/site-packages/`, Debian's `/usr/lib/python3/dist-packages/`.
_SITE = re.compile(r"/lib/python(3(?:\.[0-9]+)?)/(site|dist)-packages/")
# From 4.6 the DSL's `cutlass` is under nvidia_cutlass_dsl/dsl_packages, before under python_packages.
_DSL = re.compile(r"nvidia_cutlass_dsl/(dsl_packages|python_packages)/")
_BEFORE_PATH = re.compile(r"[\s\"'`(),=;\[\]{}|]")  # what stands before a path in a log: its prefix starts after it


def _library_pattern(module: str) -> "re.Pattern[str]":
    """A module named as a module or as a path: cutlass.operators, cutlass/operators/arch.py (the start of its word is
    checked by _named: a literal start is searched many times faster)."""
    return re.compile(re.escape(module).replace(r"\.", "[./]") + r"\b")


def _named(pattern: "re.Pattern[str]", text: str) -> Optional["re.Match[str]"]:
    """The first match of pattern in text that starts a word."""
    return next((found for found in pattern.finditer(text) if found.start() == 0
                 or not (text[found.start() - 1].isalnum() or text[found.start() - 1] == "_")), None)


def interpreter_of(prefix: str, version: str, kind: str) -> Optional[str]:
    """The interpreter whose site directory is `<prefix>/lib/python<version>/<kind>-packages`: a venv's, a conda
    env's or a uv tool's own `bin/python`; the system's python3.X for /usr and /usr/local (Debian's dist-packages
    belong to /usr/bin/python3.X); `python3.X` for a user site (~/.local), whichever that is. None where the path
    does not say (a dist-packages outside /usr)."""
    if prefix in ("/usr", "/usr/local"):
        if kind == "dist":
            return f"/usr/bin/python{version}"
        return f"{prefix}/bin/python{version}"
    if kind == "dist" or version == "3":
        return None
    if prefix.endswith("/.local"):
        return f"python{version}"
    return f"{prefix}/bin/python"


class StackReader:
    """Fed each block of a log in order (`read`), then says what the log showed of its stack (`stack`). `libraries`:
    the kernel-library modules to look for (the candidate profiles')."""

    def __init__(self, libraries: tuple[str, ...] = ()):
        self.libraries = tuple((module, _library_pattern(module)) for module in libraries)
        self.torch: Optional[str] = None
        self.seen: set[str] = set()
        self.nvgemm = self.inductor = False
        self.frames: dict[str, None] = {}
        self.dsl_folders: dict[str, None] = {}
        self.first_site: Optional[tuple[str, str, str]] = None  # (prefix, version, kind)
        self.torch_site: Optional[tuple[str, str, str]] = None
        self.sites_read = 0

    def read(self, text: str) -> None:
        if self.torch is None:
            named = [found for found in (_named(pattern, text) for pattern in _TORCH) if found is not None]
            self.torch = min(named, key=lambda found: found.start()).group(1) if named else None
        self.seen |= {module for module, pattern in self.libraries if module not in self.seen and _named(pattern, text)}
        self.nvgemm = self.nvgemm or _NVGEMM in text
        self.inductor = self.inductor or _INDUCTOR in text
        if self.inductor and len(self.frames) < MAX_FRAMES:
            for frame in _FRAME.finditer(text):
                self.frames[f"{frame.group(1)}:{frame.group(2)} {frame.group(3)}"] = None
                if len(self.frames) >= MAX_FRAMES:
                    break
        if len(self.dsl_folders) < 2:
            for folder in _DSL.finditer(text):
                self.dsl_folders[folder.group(1)] = None
                if len(self.dsl_folders) == 2:
                    break
        if self.torch_site is None:
            self._sites(text)

    def _sites(self, text: str) -> None:
        for site in _SITE.finditer(text):
            if self.sites_read >= MAX_SITES:
                return
            self.sites_read += 1
            prefix = _BEFORE_PATH.split(text[max(0, site.start() - PATH_CHARS): site.start()])[-1]
            if not prefix.startswith(("/", "~")):
                continue
            found = (prefix, site.group(1), site.group(2))
            self.first_site = self.first_site or found
            if text.startswith("torch/", site.end()):
                self.torch_site = found
                return

    def stack(self) -> LogStack:
        site = self.torch_site or self.first_site
        interpreter = interpreter_of(*site) if site else None
        return LogStack(
            torch=self.torch,
            libraries=tuple(module for module, _ in self.libraries if module in self.seen),
            nvgemm=self.nvgemm,
            inductor=self.inductor,
            frames=tuple(self.frames),
            dsl_folders=tuple(self.dsl_folders),
            python=site[1] if site and "." in site[1] else None,
            interpreter=interpreter,
            site=f"{site[0]}/lib/python{site[1]}/{site[2]}-packages" if site and interpreter else None,
        )
