"""Which GEMMs bench measures: `--shapes llm`, `square`, a list `MxNxK,...`, or a file of them (one per line), each
in the layouts `--layout` names (linear: B as nn.Linear stores its weight, x @ W.T; row-major: B [K, N] row-major;
both). A line of a shapes file may name its own layout (`16x4096x4096 row-major`), which wins over --layout."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path

from ..errors import UsageError
from ..inside.gemm import LAYOUTS, LINEAR, OPS, ROW_MAJOR, shape_text
from ..userfile import read_text
from . import data

__all__ = ["Shape", "shape_of", "parse_shape", "parse_shapes", "parse_layout", "llm_shapes", "square_shapes", "MAX_DIM",
           "LAYOUTS", "LINEAR", "ROW_MAJOR", "OPS", "DEFAULT_LAYOUT", "LAYOUT_WORDS"]

DEFAULT_LAYOUT = LINEAR  # the one LLM layers run: nn.Linear computes x @ W.T with W stored [N, K]
# What each layout is, in a user's words (the README and --help say the same)
LAYOUT_WORDS = {LINEAR: "B = W.T, W [N, K] row-major as nn.Linear stores its weight (strides [1, K])",
                ROW_MAJOR: "B [K, N] row-major (strides [N, 1])"}

MAX_DIM = 131072
_SHAPE = re.compile(r"^\s*(\d+)\s*[xX]\s*(\d+)\s*[xX]\s*(\d+)\s*$")


@dataclass(frozen=True)
class Shape:
    """out[m, n] = a[m, k] @ b[k, n] with b stored as `layout` says (a result saved without a layout was
    row-major); label says where it comes from ("llama-3.1-8b attn-proj", "square"). op: the ATen op it is compiled
    as (inside/gemm.OPS; a model's GEMMs are benched as the op they run): mm, addmm with an added input of shape
    `bias` (nn.Linear's [N]), bmm and baddbmm over `batch` products, _scaled_mm in fp8."""

    m: int
    n: int
    k: int
    label: str = ""
    layout: str = ROW_MAJOR
    op: str = "mm"
    batch: int = 1
    bias: tuple[int, ...] = ()

    @property
    def text(self) -> str:
        """"16x4096x4096"; another op than mm is named, a batch comes first: "addmm 16x6144x2048",
        "bmm 8x256x4096x2048"."""
        return shape_text(self.to_dict())

    @property
    def key(self) -> tuple:
        """The GEMM it is, whatever it was labelled: (m, n, k, layout), and for another op than mm its op, batch and
        bias too (what weights count and comparisons pair by)."""
        plain = (self.m, self.n, self.k, self.layout)
        if self.op == "mm" and self.batch == 1 and not self.bias:
            return plain
        return plain + (self.op, self.batch, self.bias)

    @property
    def described(self) -> str:
        """"16x4096x4096 linear (llama-3.1-8b mlp-up)": the GEMM, its layout and where it comes from."""
        return f"{self.text} {self.layout}" + (f" ({self.label})" if self.label else "")

    @property
    def flops(self) -> int:
        return 2 * self.m * self.n * self.k * self.batch

    def to_dict(self) -> dict:
        return {"m": self.m, "n": self.n, "k": self.k, "label": self.label, "layout": self.layout, "op": self.op,
                "batch": self.batch, "bias": list(self.bias)}


def shape_of(raw: dict) -> Shape:
    """A Shape from bench's child row (its plan's shape as given back); a row of a child before layouts or ops was a
    row-major mm."""
    return Shape(int(raw["m"]), int(raw["n"]), int(raw["k"]), str(raw.get("label") or ""),
                 str(raw.get("layout") or ROW_MAJOR), str(raw.get("op") or "mm"), int(raw.get("batch") or 1),
                 tuple(int(d) for d in raw.get("bias") or ()))


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


def parse_layout(value: str) -> tuple[str, ...]:
    """--layout: linear, row-major or both (linear first)."""
    if value == "both":
        return LAYOUTS
    if value in LAYOUTS:
        return (value,)
    raise UsageError(f"--layout {value!r}: expected linear (B as nn.Linear stores its weight: x @ W.T), row-major "
                     "(B [K, N] row-major) or both")


def _in_layouts(shapes, layouts: tuple[str, ...]) -> tuple[Shape, ...]:
    """Each shape in each layout, the layouts of one shape side by side."""
    return tuple(replace(shape, layout=layout) for shape in shapes for layout in layouts)


def _file_line(text: str, where: str, layouts: tuple[str, ...]) -> tuple[Shape, ...]:
    """One line of a shapes file: MxNxK, optionally followed by the layout it runs in."""
    parts = text.split()
    if len(parts) == 2:
        shape = parse_shape(parts[0], where)
        if parts[1] not in LAYOUTS:
            raise UsageError(f"{where}: {parts[1]!r} is not a layout; expected MxNxK optionally followed by "
                             f"{' or '.join(LAYOUTS)}, such as '16x4096x4096 linear'")
        return (replace(shape, layout=parts[1]),)
    if len(parts) > 2:
        raise UsageError(f"{where}: {text.strip()!r}: expected MxNxK optionally followed by a layout, such as "
                         "'16x4096x4096 linear'")
    return _in_layouts((parse_shape(text, where),), layouts)


def parse_shapes(value: str, layouts: tuple[str, ...] = (DEFAULT_LAYOUT,)) -> tuple[Shape, ...]:
    """--shapes: a set's name, a comma-separated list, or the path of a file with one shape per line (# comments),
    each in `layouts` (parse_layout), unless its line names its own."""
    named = {"llm": llm_shapes, "square": square_shapes}
    if value in named:
        return _in_layouts(named[value](), layouts)
    path = Path(value)
    if path.is_file():
        lines = read_text(path, f"--shapes {value}").splitlines()  # small, UTF-8, or a UsageError naming it
        items = [(line.split("#", 1)[0], f"--shapes {value} line {number}") for number, line in enumerate(lines, 1)]
        shapes = tuple(shape for text, where in items if text.strip() for shape in _file_line(text, where, layouts))
    elif _SHAPE.match(value.split(",")[0]):
        shapes = _in_layouts([parse_shape(text, "--shapes") for text in value.split(",")], layouts)
    else:
        raise UsageError(f"--shapes {value!r}: expected llm, square, a list MxNxK,... or the path of a file of shapes")
    if not shapes:
        raise UsageError(f"--shapes {value}: no shapes in it")
    return shapes
