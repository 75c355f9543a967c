"""A bundle file cut into parts no larger than a size, and put back together with every checksum checked.

FILE.tar becomes FILE.tar.part01-of-03 ... and FILE.tar.parts.json, which lists each part's size and sha256 and the
whole file's. Parts may travel separately; the index is small and goes with any of them. Reassembling checks every
part before it is used and the whole file after, so a missing, truncated or altered part is named, never installed.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path

from ..atomic import replace_text, replacing
from .manifest import BundleError, read_json, sha256_of

__all__ = ["Part", "PartsIndex", "parse_size", "split", "reassemble", "index_path", "read_index"]

KIND = "envcheck-bundle-parts"
SUFFIX = ".parts.json"
_SIZE = re.compile(r"^\s*(\d+)\s*([KMG]?)(?:i?B)?\s*$", re.IGNORECASE)
_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
MIN_PART = 1 << 10
_CHUNK = 1 << 20


def parse_size(text: str) -> int:
    """'40M', '40MiB', '1G', '65536' as bytes; at least 1 KiB. ValueError otherwise."""
    matched = _SIZE.match(text or "")
    if not matched:
        raise ValueError(f"{text!r}: expected a size such as 40M, 1G or 65536")
    size = int(matched.group(1)) * _UNITS[matched.group(2).upper()]
    if size < MIN_PART:
        raise ValueError(f"{text!r}: expected at least 1K")
    return size


@dataclass(frozen=True)
class Part:
    name: str
    size: int
    sha256: str


@dataclass(frozen=True)
class PartsIndex:
    file: str  # the whole file's name
    size: int
    sha256: str
    parts: tuple[Part, ...]

    def to_json(self) -> dict:
        return {"kind": KIND, "schema": 1, "file": self.file, "size": self.size, "sha256": self.sha256,
                "parts": [{"name": p.name, "size": p.size, "sha256": p.sha256} for p in self.parts]}


def index_path(whole: Path) -> Path:
    return whole.with_name(whole.name + SUFFIX)


def split(whole: Path, size: int) -> PartsIndex:
    """Cut whole into parts of at most size bytes beside it, write the index, and remove whole. Each part and the
    index is written whole (atomic.replacing: a new file, then renamed over the name), never through what is there."""
    total = whole.stat().st_size
    count = max(1, -(-total // size))
    width = max(2, len(str(count)))
    parts = []
    digest = hashlib.sha256()
    with open(whole, "rb") as source:
        for number in range(1, count + 1):
            name = f"{whole.name}.part{number:0{width}d}-of-{count:0{width}d}"
            part_digest = hashlib.sha256()
            written = 0
            with replacing(whole.with_name(name)) as out:
                while written < size:
                    chunk = source.read(min(_CHUNK, size - written))
                    if not chunk:
                        break
                    out.write(chunk)
                    part_digest.update(chunk)
                    digest.update(chunk)
                    written += len(chunk)
            parts.append(Part(name, written, part_digest.hexdigest()))
    index = PartsIndex(whole.name, total, digest.hexdigest(), tuple(parts))
    replace_text(index_path(whole), json.dumps(index.to_json(), indent=2) + "\n")
    whole.unlink()
    return index


def read_index(path: Path) -> PartsIndex:
    where = str(path)
    data = read_json(path, where)
    try:
        if data["kind"] != KIND:
            raise KeyError("kind")
        parts = tuple(Part(str(p["name"]), int(p["size"]), str(p["sha256"])) for p in data["parts"])
        index = PartsIndex(str(data["file"]), int(data["size"]), str(data["sha256"]), parts)
    except (KeyError, TypeError, ValueError) as exc:
        raise BundleError(f"{where}: not an index of bundle parts (key {exc})") from None
    for name in [index.file] + [p.name for p in parts]:
        if "/" in name or "\\" in name or name in ("", ".", "..") or name.startswith("-"):
            raise BundleError(f"{where}: part name {name!r}: expected a file name beside the index")
    if sum(p.size for p in parts) != index.size:
        raise BundleError(f"{where}: the parts' sizes do not add up to the file's {index.size} bytes: corrupted")
    return index


def reassemble(index_file: Path, dest: Path) -> Path:
    """The whole file at dest from the parts beside index_file: each part checked, then the whole."""
    index = read_index(index_file)
    folder = index_file.parent
    for part in index.parts:  # all of them first, so nothing is written from a bad set
        path = folder / part.name
        if not path.is_file():
            raise BundleError(f"{path}: part {index.parts.index(part) + 1} of {len(index.parts)} is missing")
        if path.stat().st_size != part.size:
            raise BundleError(f"{path}: {path.stat().st_size} bytes, the index says {part.size}: truncated or corrupted")
        if sha256_of(path) != part.sha256:
            raise BundleError(f"{path}: does not match its sha256 in {index_file.name}: corrupted")
    digest = hashlib.sha256()
    with replacing(dest) as out:  # a new file, renamed into place only when it is whole and checked
        for part in index.parts:
            with open(folder / part.name, "rb") as source:
                for chunk in iter(lambda: source.read(_CHUNK), b""):
                    digest.update(chunk)
                    out.write(chunk)
        if digest.hexdigest() != index.sha256:  # a part changed while being read
            raise BundleError(f"{index_file}: the reassembled {index.file} does not match its sha256: a part changed")
    return dest
