"""--weights FILE: how often each GEMM shape runs in your workload (calls per shape, e.g. counted from a trace), so
that what Inductor's autotuning costs is totalled over your mix of shapes instead of one call of each.

Three ways to write it, told apart by the file's suffix:

    # weights.txt (any other suffix): one shape and its count a line, # starts a comment
    1x4096x4096      120000
    2048x4096x4096   300
    2048x4096x4096   row-major  20       # a layout after the shape: that layout only

    weights.json:  {"1x4096x4096": 120000, "2048x4096x4096 row-major": 300}
    weights.toml:  "1x4096x4096" = 120000

A shape without a layout counts for each layout it is measured in (`--layout both` times it twice: each counts it);
one with a layout (linear, row-major) counts for that layout alone, and wins over the plain shape there. A count is a
number >= 0. A shape the bench measured but the file does not list counts 0 (your workload does not
run it); a shape the file lists but the bench did not measure is named in the report. Read strictly: a bad line is
exit 2 naming FILE:LINE, and nothing is measured.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Iterable, Optional

from ..errors import UsageError
from ..userfile import parse_json, parse_toml, read_text
from .shapes import LAYOUTS, Shape, parse_shape

__all__ = ["Weights", "EQUAL", "read_weights"]

Key = tuple  # m, n, k and the layout (None: every layout); a model's other ops than mm: Shape.key (op, batch, bias)


@dataclass(frozen=True)
class Weights:
    """Counts per shape (m, n, k, layout or None; a model's GEMMs by Shape.key), and the file they came from; no
    file: every shape counts once."""

    source: Optional[str] = None
    counts: tuple[tuple[Key, float], ...] = ()

    @property
    def equal(self) -> bool:
        return self.source is None

    def of(self, shape: Shape) -> float:
        if self.equal:
            return 1.0
        exact = self._by_key.get(shape.key)
        if exact is not None or shape.key != (shape.m, shape.n, shape.k, shape.layout):
            return exact or 0.0  # another op than mm counts by its own key (a model's), never a file's plain MxNxK
        return self._by_key.get((shape.m, shape.n, shape.k, None), 0.0)

    @cached_property
    def _by_key(self) -> dict[Key, float]:
        """counts as a map, made once: a lookup per shape must not read the whole list (70,000 shapes hung)."""
        return dict(self.counts)

    def not_in(self, shapes: Iterable[Shape]) -> tuple[str, ...]:
        """The shapes of the file that are not among `shapes` ("MxNxK", "MxNxK layout")."""
        seen = {s.key for s in shapes}
        seen |= {key[:3] + (None,) for key in seen if len(key) == 4}  # a shape without a layout: any layout of an mm
        return tuple(_text(key) for key, _ in self.counts if key not in seen)

    def describe(self) -> str:
        return "equal (each shape once)" if self.equal else f"{self.source} ({len(self.counts)} shapes)"

    def to_dict(self) -> dict:
        return {"source": self.source, "counts": {_text(key): c for key, c in self.counts}}


def _text(key: Key) -> str:
    m, n, k, layout, *more = key
    if more:  # a model's GEMM of another op: Shape.key
        op, batch, bias = more
        return Shape(m, n, k, "", layout, op, batch, bias).text + f" {layout}" + (f" bias {list(bias)}" if bias else "")
    return f"{m}x{n}x{k}" + (f" {layout}" if layout else "")


EQUAL = Weights()


def _count(value, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise UsageError(f"{where}: expected a count, a number >= 0 (how often the shape runs)")
    return float(value)


def _from_lines(text: str, what: str) -> list[tuple[Key, float, str]]:
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        body = line.split("#", 1)[0].strip()
        if not body:
            continue
        where = f"{what}:{number}"
        parts = body.split()
        if len(parts) not in (2, 3):
            raise UsageError(f"{where}: {body!r}: expected 'MxNxK COUNT' or 'MxNxK LAYOUT COUNT', such as "
                             "'16x4096x4096 1200'")
        key = _key(" ".join(parts[:-1]), where)
        try:
            count = float(parts[-1])
        except ValueError:
            count = None
        found.append((key, _count(count, f"{where}: {parts[-1]!r}"), where))
    return found


def _key(text: str, where: str) -> Key:
    """"MxNxK" or "MxNxK LAYOUT" as a key."""
    shape, _, layout = text.strip().partition(" ")
    parsed = parse_shape(shape, where)
    layout = layout.strip() or None
    if layout is not None and layout not in LAYOUTS:
        raise UsageError(f"{where}: {layout!r} is not a layout; expected {' or '.join(LAYOUTS)} after the shape, "
                         "or none (every layout)")
    return (parsed.m, parsed.n, parsed.k, layout)


def _from_map(loaded, what: str) -> list[tuple[Key, float, str]]:
    if not isinstance(loaded, dict):
        raise UsageError(f"{what}: expected a map of \"MxNxK\" to a count, found {type(loaded).__name__}")
    found = []
    for key, value in loaded.items():
        where = f"{what}: {key!r}"
        found.append((_key(key, what), _count(value, where), where))
    return found


class _Repeated(ValueError):
    pass


def _no_repeats(what: str):
    def pairs(items):
        found = dict(items)
        if len(found) < len(items):  # one pass: the first key seen again
            seen: set = set()
            again = next(key for key, _ in items if key in seen or seen.add(key))
            raise _Repeated(f"{what}: {again!r} is listed twice")
        return found
    return pairs


def read_weights(path: Path) -> Weights:
    what = f"--weights {path}"
    text = read_text(path, what)
    suffix = path.suffix.lower()
    if suffix == ".json":
        try:
            loaded = parse_json(text, what, object_pairs_hook=_no_repeats(what))
        except _Repeated as exc:
            raise UsageError(str(exc)) from None
        entries = _from_map(loaded, what)
    elif suffix == ".toml":
        entries = _from_map(parse_toml(text, what), what)
    else:
        entries = _from_lines(text, what)
    first: dict[Key, str] = {}
    for key, _, where in entries:
        if key in first:
            raise UsageError(f"{where}: {_text(key)} is listed twice (first at {first[key]})")
        first[key] = where
    if not any(count > 0 for _, count, _ in entries):
        raise UsageError(f"{what}: no shape with a count above 0; expected lines 'MxNxK COUNT'")
    return Weights(source=str(path), counts=tuple((key, count) for key, count, _ in entries))
