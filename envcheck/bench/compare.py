"""Two or more bench results side by side: two stacks, two GPUs, before and after an upgrade. Pure: over saved runs
read by results.py.

The first result is the reference. For each shape and backend, each other result's kernel time is set against the
reference's: a speed ratio (the reference's time over its own: 2.0 means twice as fast), which counts only beyond
both runs' noise (noise.py: the spreads of the two figures, do_bench's distance from each, each run's drift on that
shape, 1%). Over the shapes both measured: the geometric mean of those ratios per backend, over all shapes and per
class (classes.py: decode, prefill), and the profile's backend against cuBLAS within each result (the decision
metric). The preference: the result whose backend (NVGEMM) is fastest, by how much, where.

Each result is labelled by what differs between them: the GPU, torch, the kernel library, the layouts of B it
measured; else the DSL, Triton, the dtype; else its file name. Rows pair only GEMMs of the same layout (a result saved
before layouts were named measured row-major B): a GEMM measured in different layouts is two rows, each with the
results that measured it in that layout, and the comparison says which layouts were not paired.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import PurePath
from typing import Optional, Sequence

from . import noise
from .analysis import Measurement, best_per_backend
from .autotune import AutotuneReport, autotune_report, mix_backends
from .classes import CLASSES, describe, shape_class
from .results import SavedRun
from .result import BenchResult
from .shapes import Shape
from .weights import EQUAL, Weights

__all__ = ["CUBLAS", "Environment", "Against", "Row", "Speedup", "Preference", "Comparison", "compare", "labels",
           "gemm", "by_shape", "against_cublas"]

CUBLAS = ("ATEN", "cuBLAS")  # cuBLAS through Inductor, and torch.mm in a --library run
LIBRARIES = (("nvidia-cutlass-operators", "cutlass.operators"), ("cutlass_api", "cutlass_api"))


@dataclass(frozen=True)
class Environment:
    label: str  # what differs from the others
    run: SavedRun


@dataclass(frozen=True)
class Against:
    """One result's figure against the reference's, on one shape and backend."""

    ratio: float  # the reference's kernel time over this one's: above 1 is faster
    noise: float
    verdict: str  # "faster", "slower", "same"

    def to_dict(self) -> dict:
        return {"ratio": self.ratio, "noise": self.noise, "verdict": self.verdict}


@dataclass(frozen=True)
class Row:
    shape: Shape
    backend: str
    figures: tuple[Optional[Measurement], ...]  # one per environment; None: that result has no such row
    against: tuple[Optional[Against], ...]  # one per environment after the reference; None: not both trusted


@dataclass(frozen=True)
class Speedup:
    """A backend in one result against the reference (or against cuBLAS in the same result) over a scope."""

    backend: str
    scope: str  # "all", "decode", "prefill"
    shapes: int
    geomean: float
    low: float
    high: float
    faster: int = 0
    slower: int = 0
    same: int = 0

    def to_dict(self) -> dict:
        return {"backend": self.backend, "scope": self.scope, "shapes": self.shapes, "geomean": self.geomean,
                "low": self.low, "high": self.high, "faster": self.faster, "slower": self.slower, "same": self.same}


@dataclass(frozen=True)
class Preference:
    backend: str
    best: Optional[int]  # the environment to prefer; None: no clear preference
    text: str


@dataclass(frozen=True)
class Comparison:
    environments: tuple[Environment, ...]
    rows: tuple[Row, ...]
    speedups: tuple[tuple[Speedup, ...], ...]  # per environment after the reference
    vs_cublas: tuple[tuple[Speedup, ...], ...]  # per environment: its backend against its cuBLAS
    preference: Preference
    backend: str
    autotune: tuple[AutotuneReport, ...]  # per environment: what Inductor's own pick cost there
    unpaired: str = ""  # which layouts one result measured and another did not ("" when they all measured the same)

    @property
    def shapes(self) -> tuple[Shape, ...]:
        seen: list[Shape] = []
        for row in self.rows:
            if row.shape not in seen:
                seen.append(row.shape)
        return tuple(seen)


# --------------------------------------------------------------------------------------------------------------
# Labels


def _library(versions: dict) -> Optional[str]:
    for key, name in LIBRARIES:
        if key in versions:
            return f"{name} {versions[key]}"
    return None


def _parts(run: SavedRun) -> dict[str, Optional[str]]:
    result, versions = run.result, dict(run.result.versions)
    plain = {key: f"{key.replace('nvidia-cutlass-dsl', 'DSL')} {versions[key]}" if key in versions else None
             for key in ("torch", "nvidia-cutlass-dsl", "triton")}
    return {"gpu": result.gpu, "torch": plain["torch"], "library": _library(versions), "layout": _layouts(result),
            "dsl": plain["nvidia-cutlass-dsl"], "triton": plain["triton"], "dtype": result.dtype}


def _layouts(result: BenchResult) -> str:
    """"B linear", "B linear and row-major": the layouts of B a result measured."""
    found = sorted({m.shape.layout for m in result.measurements})
    return "B " + " and ".join(found) if found else "no layout"


def _file_names(paths: Sequence[str]) -> list[str]:
    """The shortest trailing parts of the paths that tell them apart ("h200-1/anchors-cold.json")."""
    split = [PurePath(p).parts for p in paths]
    for depth in range(1, max(len(s) for s in split) + 1):
        names = ["/".join(s[-depth:]) for s in split]
        if len(set(names)) == len(names):
            return names
    return list(paths)


def labels(runs: Sequence[SavedRun]) -> list[str]:
    """What differs between the runs: GPU, torch, kernel library, layouts; else DSL, Triton, dtype; else the file
    name."""
    parts = [_parts(run) for run in runs]
    differing = [key for key in parts[0] if len({p[key] for p in parts}) > 1]
    shown = [k for k in differing if k in ("gpu", "torch", "library", "layout")] or differing[:2]
    names = _file_names([run.path for run in runs])
    found = [", ".join(p[k] or f"no {k}" for k in shown) or name for p, name in zip(parts, names)]
    if len(set(found)) < len(found):
        found = [f"{label} ({name})" if label != name else label for label, name in zip(found, names)]
    return found


# --------------------------------------------------------------------------------------------------------------
# Rows and speedups


Gemm = tuple  # Shape.key: m, n, k, layout (and a model's other op, batch and bias)


def gemm(shape: Shape) -> Gemm:
    """The GEMM a shape is, whatever it was labelled in its run ("custom", "llama-3.1-8b attn-proj"): its dimensions
    and its layout (two layouts of one MxNxK are two GEMMs, never paired), and its op (Shape.key)."""
    return shape.key


def by_shape(result: BenchResult) -> dict[Gemm, dict[str, Measurement]]:
    """Each GEMM's measurements, one per backend (a library's best candidate), in the order measured."""
    shapes: dict[Gemm, list[Measurement]] = {}
    for m in result.measurements:
        shapes.setdefault(gemm(m.shape), []).append(m)
    return {key: best_per_backend(found) for key, found in shapes.items()}


def _drift(result: BenchResult, key: Gemm) -> Optional[float]:
    return next((v.drift for v in result.verdicts if gemm(v.shape) == key), None)


def _against(ref: Optional[Measurement], other: Optional[Measurement], drifts) -> Optional[Against]:
    if ref is None or other is None or not (ref.trusted and other.trusted and ref.kernel_ms and other.kernel_ms):
        return None
    ratio = ref.kernel_ms / other.kernel_ms
    margin = noise.noise(ref, other, known=drifts)
    return Against(ratio, margin, {1: "faster", -1: "slower", 0: "same"}[noise.differs(ratio, margin)])


def _geomean(values: Sequence[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values))


def _speedups(backend: str, pairs: Sequence[tuple[Shape, Against]]) -> tuple[Speedup, ...]:
    found = []
    for scope in ("all", *CLASSES):
        mine = [a for shape, a in pairs if scope == "all" or shape_class(shape) == scope]
        if mine:
            ratios = [a.ratio for a in mine]
            found.append(Speedup(backend, scope, len(mine), _geomean(ratios), min(ratios), max(ratios),
                                 faster=sum(a.verdict == "faster" for a in mine),
                                 slower=sum(a.verdict == "slower" for a in mine),
                                 same=sum(a.verdict == "same" for a in mine)))
    return tuple(found)


def against_cublas(result: BenchResult, backend: str) -> dict[Gemm, Against]:
    """A backend against cuBLAS in the same result, shape by shape (a ratio above 1: faster than cuBLAS)."""
    found = {}
    for key, by_backend in by_shape(result).items():
        base = next((by_backend[name] for name in CUBLAS if name in by_backend), None)
        against = _against(base, by_backend.get(backend), (_drift(result, key),))
        if against is not None:
            found[key] = against
    return found


def _own_cublas(result: BenchResult) -> tuple[Speedup, ...]:
    """A result's own backend against its own cuBLAS, over its shapes and per class: the decision metric."""
    found = against_cublas(result, result.backend)
    return _speedups(result.backend, [(Shape(*key[:3], layout=key[3]), against) for key, against in found.items()])


def _scope_text(speedups: Sequence[Speedup]) -> str:
    by_scope = {s.scope: s for s in speedups}
    classes = [f"{describe(name)} {by_scope[name].geomean:.2f}x" for name in CLASSES if name in by_scope]
    return f"geometric mean over {by_scope['all'].shapes} shapes" + (f"; {', '.join(classes)}" if classes else "")


def _preference(environments: Sequence[Environment], speedups, backend: str) -> Preference:
    overall = [next((s for s in found if s.backend == backend and s.scope == "all"), None) for found in speedups]
    measured = [(index + 1, s) for index, s in enumerate(overall) if s is not None]
    if not measured:
        return Preference(backend, None, f"no preference for {backend}: no shape has it measured in the reference "
                                         "and another result")
    reference = environments[0].label
    index, best = max(measured, key=lambda item: item[1].geomean)
    counts = f"faster on {best.faster}, slower on {best.slower}, the same on {best.same} beyond the noise"
    if best.geomean > 1 and best.faster > best.slower:
        scopes = _scope_text([s for s in speedups[index - 1] if s.backend == backend])
        return Preference(backend, index, f"prefer {environments[index].label} for {backend}: "
                                          f"{best.geomean:.2f}x as fast as {reference} ({scopes}); {counts}")
    if best.geomean < 1 and best.slower > best.faster:  # the reference beats even the best of the others
        scopes = ", ".join(f"{describe(s.scope) if s.scope != 'all' else 'all'} {1 / s.geomean:.2f}x"
                           for s in speedups[index - 1] if s.backend == backend)
        return Preference(backend, 0, f"prefer {reference} for {backend}: {1 / best.geomean:.2f}x as fast as "
                                      f"{environments[index].label} (geometric mean; {scopes}); "
                                      f"that one is slower on {best.slower} of {best.shapes} beyond the noise")
    return Preference(backend, None, f"no clear preference for {backend}: {environments[index].label} against "
                                     f"{reference} is {best.geomean:.2f}x ({counts})")


def compare(runs: Sequence[SavedRun], weights: Weights = EQUAL) -> Comparison:
    """The runs side by side, the first the reference (two or more); `weights` for the cost of Inductor's pick."""
    environments = tuple(Environment(label, run) for label, run in zip(labels(runs), runs))
    tables = [by_shape(run.result) for run in runs]
    shapes: dict[Gemm, Shape] = {}  # each GEMM as the first result to name its model layer labelled it
    backends: list[str] = []
    for run in runs:
        for m in run.result.measurements:
            if shapes.get(gemm(m.shape), Shape(0, 0, 0)).label in ("", "custom"):
                shapes[gemm(m.shape)] = m.shape
            if m.backend not in backends:
                backends.append(m.backend)
    rows = []
    for key, shape in shapes.items():
        for backend in backends:
            figures = tuple(table.get(key, {}).get(backend) for table in tables)
            if not any(figures):
                continue
            ref = figures[0]
            against = tuple(_against(ref, other, (_drift(runs[0].result, key), _drift(run.result, key)))
                            for other, run in zip(figures[1:], runs[1:]))
            rows.append(Row(shape, backend, figures, against))
    speedups = tuple(
        tuple(s for backend in backends for s in _speedups(
            backend, [(row.shape, row.against[index]) for row in rows
                      if row.backend == backend and row.against[index] is not None]))
        for index in range(len(runs) - 1))
    backend = runs[0].result.backend
    return Comparison(environments=environments, rows=tuple(rows), speedups=speedups,
                      vs_cublas=tuple(_own_cublas(run.result) for run in runs),
                      preference=_preference(environments, speedups, backend), backend=backend,
                      autotune=tuple(autotune_report(run.result.verdicts, mix_backends(run.result.backend), weights)
                                     for run in runs),
                      unpaired=_unpaired(environments))


def _unpaired(environments: Sequence[Environment]) -> str:
    """Which results measured a layout that another did not: their rows of it stand alone."""
    measured = [{m.shape.layout for m in e.run.result.measurements} for e in environments]
    if all(found == measured[0] for found in measured):
        return ""
    parts = [f"{e.label} measured B {' and '.join(sorted(found))}" for e, found in zip(environments, measured)]
    return ("rows of different layouts are not paired (a result saved before layouts were named measured row-major): "
            + "; ".join(parts))
