"""The noise rule: when two timings differ, and by how much they must differ to count. One rule for every
comparison bench makes (a backend against the others in one run, Inductor's pick against the best single backend,
the same backend in two runs). Pure.

The noise of comparing figures is the largest of: their spreads ((q75 - q25) / median), how far
triton.testing.do_bench on the same function read from each kernel time where both time the device (calls back to
back), any noise already known for them (the drift between two measurements of the same compiled function taken
apart in time; a saved run's own noise on the shape), and a 1% floor (the resolution of CUDA events on microsecond
kernels). Call times (wall clock over back-to-back calls, host jitter included) add their own spreads and a 5%
floor.
"""

from __future__ import annotations

from typing import Iterable, Optional, Protocol

__all__ = ["NOISE_FLOOR", "CALL_NOISE_FLOOR", "Timed", "noise", "call_noise", "differs"]

NOISE_FLOOR = 0.01
CALL_NOISE_FLOOR = 0.05  # call times are wall clock over back-to-back calls: host jitter makes them noisier


class Timed(Protocol):
    """What the rule reads of a measurement (analysis.Measurement is one)."""

    spread: Optional[float]
    call_spread: Optional[float]

    @property
    def do_bench_gap(self) -> Optional[float]: ...


def noise(*figures: Optional[Timed], known: Iterable[Optional[float]] = ()) -> float:
    """The noise of comparing the kernel times of these figures (None: left out); `known`: noise figures measured
    apart from them (a drift; None: unknown)."""
    present = [m for m in figures if m is not None]
    spreads = [m.spread for m in present if m.spread is not None]
    gaps = [m.do_bench_gap for m in present if m.do_bench_gap is not None]
    return max([NOISE_FLOOR, *spreads, *gaps, *(k for k in known if k is not None)])


def call_noise(kernel_noise: float, *figures: Optional[Timed]) -> float:
    """The noise of comparing call times: the kernel-time noise, the call times' own spreads, and a 5% floor."""
    return max([kernel_noise, CALL_NOISE_FLOOR, *(m.call_spread for m in figures if m is not None and m.call_spread)])


def differs(ratio: float, noise_figure: float) -> int:
    """+1 when ratio (a speed ratio: the other's time over this one's) is above 1 beyond the noise, -1 when below
    beyond it, 0 when within: the noise is symmetric in speed (x (1 + noise) faster or slower)."""
    if ratio > 1 + noise_figure:
        return 1
    if ratio < 1 / (1 + noise_figure):
        return -1
    return 0
