"""Which GEMMs bench measures: `--shapes llm`, `square`, a list `MxNxK,...`, or a file of them (one per line)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ..errors import UsageError
from ..userfile import read_text
from . import data

__all__ = ["Shape", "parse_shape", "parse_shapes", "llm_shapes", "square_shapes", "MAX_DIM"]

MAX_DIM = 131072
_SHAPE = re.compile(r"^\s*(\d+)\s*[xX]\s*(\d+)\s*[xX]\s*(\d+)\s*$")


@dataclass(frozen=True)
class Shape:
    """out[m, n] = a[m, k] @ b[k, n]; label says where it comes from ("llama-3.1-8b attn-proj", "square")."""

    m: int
    n: int
    k: int
    label: str = ""

    @property
    def text(self) -> str:
        return f"{self.m}x{self.n}x{self.k}"

    @property
    def flops(self) -> int:
        return 2 * self.m * self.n * self.k

    def to_dict(self) -> dict:
        return {"m": self.m, "n": self.n, "k": self.k, "label": self.label}


def llm_shapes() -> tuple[Shape, ...]:
    """Decode and prefill GEMMs of each model's attention projection and MLP (shapes.toml says where from)."""
    decode, prefill = data.llm_sizes()
    shapes = []
    for model in data.models():
        matrices = (
            ("attn-proj", model.hidden, model.hidden),
            ("mlp-up", model.intermediate, model.hidden),
            ("mlp-down", model.hidden, model.intermediate),
        )
        for matrix, n, k in matrices:
            shapes.extend(Shape(m, n, k, f"{model.name} {matrix}") for m in decode + prefill)
    return tuple(shapes)


def square_shapes() -> tuple[Shape, ...]:
    return tuple(Shape(s, s, s, "square") for s in data.square_sizes())


def parse_shape(text: str, where: str) -> Shape:
    """One MxNxK (labelled "custom"); `where` names its source in the error ("--shapes f.txt line 3")."""
    found = _SHAPE.match(text)
    if not found:
        raise UsageError(f"{where}: {text.strip()!r} is not a shape; expected MxNxK, such as 16x4096x4096")
    m, n, k = (int(g) for g in found.groups())
    if not all(1 <= d <= MAX_DIM for d in (m, n, k)):
        raise UsageError(f"{where}: {text.strip()!r}: every dimension must be between 1 and {MAX_DIM}")
    return Shape(m, n, k, "custom")


def parse_shapes(value: str) -> tuple[Shape, ...]:
    """--shapes: a set's name, a comma-separated list, or the path of a file with one shape per line (# comments)."""
    named = {"llm": llm_shapes, "square": square_shapes}
    if value in named:
        return named[value]()
    path = Path(value)
    if path.is_file():
        lines = read_text(path, f"--shapes {value}").splitlines()  # small, UTF-8, or a UsageError naming it
        items = [(line.split("#", 1)[0], f"--shapes {value} line {number}") for number, line in enumerate(lines, 1)]
        shapes = tuple(parse_shape(text, where) for text, where in items if text.strip())
    elif _SHAPE.match(value.split(",")[0]):
        shapes = tuple(parse_shape(text, "--shapes") for text in value.split(","))
    else:
        raise UsageError(f"--shapes {value!r}: expected llm, square, a list MxNxK,... or the path of a file of shapes")
    if not shapes:
        raise UsageError(f"--shapes {value}: no shapes in it")
    return shapes
