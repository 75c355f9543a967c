"""The plot of a bench (or of bench --compare): what a team deciding on the backend reads.

Top panel, the decision metric: each backend's speed relative to cuBLAS on each shape (cuBLAS's kernel time over its
own: above 1 is faster), on a log scale, with the noise band around 1 (inside it: the same as cuBLAS). Bottom panel:
absolute TF/s against the GPU's dense peak, on a log scale so that decode's few TF/s show beside prefill's hundreds.
Shapes are grouped decode | prefill, then by model layer (shapes.toml's labels), M along each group.

matplotlib is the optional extra `plot`; it is imported only here, when a plot is drawn (render/bench.py's
require_matplotlib says how to install it first).
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Optional, Sequence

from ..bench.classes import CLASSES, describe, shape_class
from ..bench.compare import CUBLAS, against_cublas, by_shape, gemm
from ..bench.shapes import Shape
from ..errors import UsageError

if TYPE_CHECKING:
    from ..bench.compare import Comparison
    from ..bench.result import BenchResult

__all__ = ["Series", "order", "plot_result", "plot_comparison"]

COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b")
BACKEND_STYLE = {"ATEN": ("#7f7f7f", "s"), "cuBLAS": ("#7f7f7f", "s"), "TRITON": ("#ff7f0e", "^"),
                 "mix": ("#2ca02c", "x")}


@dataclass(frozen=True)
class Series:
    """One line of markers: a value per shape (None: not measured), its noise where it has one."""

    name: str
    values: tuple[Optional[float], ...]
    color: str
    marker: str
    main: bool = False  # the backend being decided on: larger, on top
    hollow: bool = False


def order(shapes: Sequence[Shape]) -> list[Shape]:
    """Decode before prefill; within each, the layers in the order measured, M ascending."""
    first: dict[tuple, int] = {}
    for shape in shapes:
        first.setdefault((shape.label, shape.layout, shape.n, shape.k), len(first))
    return sorted(shapes, key=lambda s: (CLASSES.index(shape_class(s)), first[(s.label, s.layout, s.n, s.k)], s.m))


def _groups(shapes: Sequence[Shape]) -> list[tuple[str, int, int]]:
    """(caption, first position, last position) of each run of shapes with the same layer and layout of B."""
    groups: list[tuple[str, int, int]] = []
    for index, shape in enumerate(shapes):
        caption = "\n".join((*shape.label.split(" ", 1), f"N={shape.n}", f"K={shape.k}", f"B {shape.layout}"))
        if groups and groups[-1][0] == caption and shape_class(shapes[groups[-1][1]]) == shape_class(shape):
            groups[-1] = (caption, groups[-1][1], index)
        else:
            groups.append((caption, index, index))
    return groups


def _draw(path: Path, title: str, subtitle: str, shapes: Sequence[Shape], ratios: Sequence[Series], band: Sequence[Optional[float]],
          tflops: Sequence[Series], peaks: Sequence[tuple[str, float]]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FixedLocator, NullLocator

    count = len(shapes)
    figure, (top, bottom) = plt.subplots(2, 1, figsize=(max(10.0, 0.5 * count + 4.0), 9.5), sharex=True,
                                         gridspec_kw={"height_ratios": [3, 2]})
    positions = list(range(count))
    for index, noise in enumerate(band):
        if noise is not None:
            top.fill_between([index - 0.45, index + 0.45], 1 / (1 + noise), 1 + noise, color="#cccccc", lw=0,
                             label="noise band (the same as cuBLAS)" if index == next(
                                 i for i, n in enumerate(band) if n is not None) else None)
    top.axhline(1.0, color="black", lw=1, label="cuBLAS")
    for panel, series in ((top, ratios), (bottom, tflops)):
        for line in series:
            xs = [x for x, v in zip(positions, line.values) if v]
            ys = [v for v in line.values if v]
            panel.scatter(xs, ys, s=64 if line.main else 28, marker=line.marker, zorder=3 if line.main else 2,
                          label=line.name, color="none" if line.hollow else line.color,
                          edgecolors=line.color if line.hollow or line.marker not in "x+" else None,
                          linewidths=1.2)
    for label, peak in peaks:
        bottom.axhline(peak, color="black", ls="--", lw=1, label=label)
    for panel in (top, bottom):
        panel.set_yscale("log")
        panel.grid(axis="y", which="major", color="#e0e0e0", lw=0.6)
    values = [v for line in ratios for v in line.values if v] + [1 / (1 + n) for n in band if n] + [1 + n for n in band if n]
    low, high = (min(values), max(values)) if values else (0.5, 2.0)
    steps = ((0.1, 0.2, 0.25, 0.33, 0.5, 0.67, 1.0, 1.5, 2, 3, 4, 6) if high / low > 2.5
             else (0.5, 0.67, 0.8, 0.9, 1.0, 1.1, 1.25, 1.5, 2))
    ticks = [t for t in steps if low / 1.15 <= t <= high * 1.15]
    top.set_ylim(low / 1.15, high * 1.15)
    top.yaxis.set_major_locator(FixedLocator(ticks))
    top.yaxis.set_minor_locator(NullLocator())
    top.set_yticklabels([f"{t:g}x" for t in ticks])
    top.set_ylabel("speed relative to cuBLAS\n(cuBLAS kernel time / its own)")
    bottom.set_ylabel("TF/s (kernel time)")
    figure.suptitle(title, fontsize=12)
    if subtitle:
        top.set_title("\n".join(textwrap.wrap(subtitle, 150)), fontsize=8.5, pad=20)
    classes = [shape_class(s) for s in shapes]
    for index in range(1, count):
        if classes[index] != classes[index - 1]:
            for panel in (top, bottom):
                panel.axvline(index - 0.5, color="black", lw=1.2)
    for name in CLASSES:
        mine = [i for i, c in enumerate(classes) if c == name]
        if mine:
            top.text((mine[0] + mine[-1]) / 2, 1.01, describe(name), transform=top.get_xaxis_transform(),
                     ha="center", va="bottom", fontsize=10, weight="bold")
    groups = _groups(shapes)
    for caption, start, end in groups[1:]:
        for panel in (top, bottom):
            if classes[start] == classes[start - 1]:
                panel.axvline(start - 0.5, color="#bbbbbb", lw=0.6, ls=":")
    bottom.set_xticks(positions)
    bottom.set_xticklabels([f"M={s.m}" for s in shapes], fontsize=7)
    bottom.set_xlim(-0.6, count - 0.4)
    for caption, start, end in groups:
        bottom.text((start + end) / 2, -0.1, caption, transform=bottom.get_xaxis_transform(), ha="center",
                    va="top", fontsize=7)
    top.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    bottom.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    figure.tight_layout()
    figure.subplots_adjust(bottom=0.15)
    try:
        figure.savefig(str(path), dpi=150)
    except OSError as exc:
        raise UsageError(f"--plot {path}: cannot write it: {exc.strerror or exc}") from None
    finally:
        plt.close(figure)


def _ratio(versus: dict, shape: Shape) -> Optional[float]:
    found = versus.get(gemm(shape))
    return None if found is None else found.ratio


def _peak(result: "BenchResult") -> list[tuple[str, float]]:
    peak = result.peak.for_dtype(result.dtype) if result.peak else None
    return [(f"dense peak {peak:g} TF/s ({result.peak.name})", peak)] if peak else []


def _cublas(result: "BenchResult") -> str:
    names = {m.backend for m in result.measurements}
    return next((name for name in CUBLAS if name in names), CUBLAS[0])


def plot_result(result: "BenchResult", path: Path) -> None:
    """One bench: every backend against cuBLAS, the noise band of the profile's backend against it."""
    table = by_shape(result)
    shapes = order([next(iter(found.values())).shape for found in table.values()])
    backends = []
    for m in result.measurements:
        if m.backend not in backends:
            backends.append(m.backend)
    cublas = _cublas(result)
    ratios, tflops = [], []
    for backend in backends:
        color, marker = BACKEND_STYLE.get(backend, ("#1f77b4", "o"))
        main = backend == result.backend
        if backend != cublas:
            versus = against_cublas(result, backend)
            ratios.append(Series(backend, tuple(_ratio(versus, s) for s in shapes), color, marker, main))
        figures = [table[gemm(s)].get(backend) for s in shapes]
        tflops.append(Series(backend, tuple(m.tflops if m is not None and m.trusted else None for m in figures),
                             color, marker, main))
    mine = against_cublas(result, result.backend)
    versions = dict(result.versions)
    stack = ", ".join(f"{k} {versions[k]}" for k in ("torch", "cutlass_api", "nvidia-cutlass-operators") if k in versions)
    _draw(path, f"envcheck bench: {result.backend} against cuBLAS on {result.gpu} ({result.dtype}"
                + (f"; {stack}" if stack else "") + ")", result.decision.text if result.decision else "",
          shapes, ratios, [mine[gemm(s)].noise if gemm(s) in mine else None for s in shapes], tflops, _peak(result))


def plot_comparison(comparison: "Comparison", path: Path) -> None:
    """Several results: each one's backend against its own cuBLAS; its TF/s and its cuBLAS's."""
    shapes = order(list(comparison.shapes))
    ratios, tflops, band = [], [], [None] * len(shapes)
    peaks: list[tuple[str, float]] = []
    for index, environment in enumerate(comparison.environments):
        result = environment.run.result
        color = COLORS[index % len(COLORS)]
        versus = against_cublas(result, result.backend)
        ratios.append(Series(f"{result.backend}: {environment.label}", tuple(_ratio(versus, s) for s in shapes),
                             color, "o", True))
        for position, shape in enumerate(shapes):
            if gemm(shape) in versus:
                band[position] = max(band[position] or 0.0, versus[gemm(shape)].noise)
        table = by_shape(result)
        cublas = _cublas(result)
        for backend, hollow in ((result.backend, False), (cublas, True)):
            figures = [table.get(gemm(s), {}).get(backend) for s in shapes]
            tflops.append(Series(f"{backend}: {environment.label}",
                                 tuple(m.tflops if m is not None and m.trusted else None for m in figures), color,
                                 "o" if not hollow else "s", not hollow, hollow))
        for peak in _peak(result):
            if peak not in peaks:
                peaks.append(peak)
    _draw(path, f"envcheck bench --compare: {comparison.backend} against cuBLAS in each of "
                f"{len(comparison.environments)} results", comparison.preference.text, shapes, ratios, band, tflops, peaks)
