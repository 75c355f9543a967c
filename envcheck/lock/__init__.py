"""lock: a PEP 751 `pylock.toml` for the stack of a profile, and what can be done with one.

Two kinds of lock, one format:

- *resolved* (the default, `--profile ID`): the profile's stack resolved for a target platform (default CPython 3.12
  on Linux x86_64) by uv, on any machine; no torch, GPU or CUTLASS checkout needed. resolve.py says why uv.
- *live* (`--from-env`, implied by `--python`): what a working environment has installed, as below.

Where each part of a live lock comes from:

- *which packages, at which versions*: the live target interpreter (`--python`). Its installed distributions are
  walked from the stack's roots (torch, the DSL, every package of the profile, cutlass_api with its extras) along
  their Requires-Dist, with the target's own markers, so the lock holds exactly what runs there and nothing else.
  No resolver guesses: lock what doctor approved. A root that misses the profile's versions refuses the lock.
- *files and hashes*: local wheel directories (`--find-links`, hashed here) first, then the package indexes
  through the simple API (PEP 691 JSON, PEP 503 HTML as a fallback): torch from the profile's `torch.index-url`,
  everything from `--index-url` (PyPI by default). A package version with no hashed file anywhere cannot be locked
  (PEP 751 needs a source for every package) and is named in the error.
- *cutlass_api*: a VCS package: the profile's repository URL, branch and commit, and its subdirectory.
- *what pip cannot express*: `[tool.envcheck]` holds the profile id, the CUDA toolkit, the driver floor, the
  compute capabilities the profile supports, and the CUTLASS source.

The lock is checked with `packaging.pylock` before it is written and again as read back from the written text.
`verify` compares a target with a lock; `requirements` turns a lock into a hash-pinned pip requirements file
(pip < 26.1 cannot read pylock.toml), which the Dockerfile installs with `--no-deps --require-hashes`.

  resolve.py   resolve: a profile's stack for a Target through uv; Resolution.wheels for a bundle
  sources.py   FileRecord, Wheelhouse (--find-links), Index (the simple API) and its parsers: files and hashes
  stack.py     the profile's roots and the walk along Requires-Dist through the target's installed distributions
  build.py     build_lock (live), build_resolved_lock (resolved): the lock's packages, sources and [tool.envcheck] table, validated with packaging.pylock
  toml.py      to_toml: the lock as TOML text (tomli-w; the standard library only reads TOML)
  lockfile.py  write_lock, read_lock: the lock on disk, checked again as read back; applies(package, environment)
  verify.py    verify: a live environment against a lock (render/lock.py says its drift)
  export.py    requirements: a lock as a hash-pinned requirements file
"""

from .build import LockResult, StackMismatch, build_lock, build_resolved_lock
from .export import requirements
from .lockfile import read_lock, write_lock
from .resolve import Resolution, Target, Wheel, resolve
from .sources import PYPI, FileRecord, Index, Wheelhouse, parse_simple_html, parse_simple_json
from .stack import stack_roots, walk
from .toml import to_toml
from .verify import Drift, verify

__all__ = [
    "PYPI",
    "FileRecord",
    "Wheelhouse",
    "Index",
    "LockResult",
    "StackMismatch",
    "Drift",
    "stack_roots",
    "walk",
    "build_lock",
    "build_resolved_lock",
    "resolve",
    "Resolution",
    "Target",
    "Wheel",
    "to_toml",
    "write_lock",
    "read_lock",
    "verify",
    "requirements",
    "parse_simple_json",
    "parse_simple_html",
]
