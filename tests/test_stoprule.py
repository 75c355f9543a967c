"""When a row's timing stops (envcheck/inside/stoprule.py): its own figures enough, every comparison decided beyond the
noise, or the cap; a figure above the GPU's peak decides nothing. Tables over each boundary."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

import pytest

from envcheck.bench import noise as analysis_noise
from envcheck.inside import stoprule

TARGET, FLOOR, CAP = 0.02, 0.01, 0.2


def figure(median=1.0, spread=0.04, reps=25, gap=None, fastest_ms=None):
    """A row's figures as the child's summary gives them: quartiles around the median, (q75 - q25) / median =
    spread."""
    half = spread * median / 2
    return {"median": median, "q25": median - half, "q75": median + half, "spread": spread, "reps": reps,
            "gap": gap, "fastest_ms": fastest_ms}


def error(f):
    return 1.2533 * f["spread"] / 1.349 / math.sqrt(f["reps"])


def reps_for(spread, relative_error):
    """Repetitions that put one standard error of the median at relative_error."""
    return (1.2533 * spread / 1.349 / relative_error) ** 2


@pytest.mark.parametrize("spread, reps, expected", [
    (0.02, 10, "quiet"),  # the spread at the target
    (0.0201, 10, None),  # just over it, and the median not yet known within 0.5%
    (0.04, math.ceil(reps_for(0.04, 0.005)), "precise"),  # one standard error at 0.5%
    (0.04, math.floor(reps_for(0.04, 0.005)), None),  # one repetition short of it
    (0.0, 10, "quiet"),
])
def test_a_row_alone_stops_quiet_or_precise(spread, reps, expected):
    assert stoprule.alone(figure(spread=spread, reps=reps), TARGET) == expected


def _at(distance_in_errors, margin=0.04, reps=25, spread=0.04, **mine):
    """Two rows whose ratio of medians lies distance_in_errors standard errors of the ratio outside the upper edge of
    the noise band (negative: inside it)."""
    a, b = figure(spread=spread, reps=reps, **mine), figure(spread=spread, reps=reps)
    ratio_error = math.hypot(error(a), error(b))
    b["median"] = (1 + margin) * math.exp(distance_in_errors * ratio_error)
    b["q25"], b["q75"] = b["median"] * (1 - spread / 2), b["median"] * (1 + spread / 2)
    return a, b


@pytest.mark.parametrize("distance, spent, expected", [
    (stoprule.Z + 0.01, 0.0, "decided"),  # beyond the edge by Z standard errors: faster or slower, whatever comes
    (stoprule.Z - 0.01, 0.0, None),  # not quite: another round
    (-stoprule.Z - 0.01, 0.0, "decided"),  # inside the band by Z: the same, whatever comes
    (-stoprule.Z + 0.01, 0.0, None),
    (0.0, 0.0, None),  # on the edge: undecided...
    (0.0, CAP - 1e-9, None),
    (0.0, CAP, "cap"),  # ...to its cap
    (-30.0, CAP, "decided"),  # decided before the cap is looked at
])
def test_a_row_stops_once_its_comparison_is_decided_or_at_its_cap(distance, spent, expected):
    mine, peer = _at(distance)
    assert stoprule.reason(mine, [(mine, peer)], TARGET, FLOOR, spent, CAP) == expected


def test_every_comparison_must_be_decided_and_a_row_with_none_is_decided_by_its_own_figures_only():
    mine, far = _at(10.0)
    _, near = _at(0.0)
    assert stoprule.reason(mine, [(mine, far)], TARGET, FLOOR, 0.0, CAP) == "decided"
    assert stoprule.reason(mine, [(mine, far), (mine, near)], TARGET, FLOOR, 0.0, CAP) is None
    assert stoprule.reason(mine, [], TARGET, FLOOR, 0.0, CAP) is None
    assert stoprule.reason(mine, [], TARGET, FLOOR, CAP, CAP) == "cap"


@pytest.mark.parametrize("extra, decided", [
    ({}, True),  # the band's edge at the spreads' 4%: the ratio is Z + 1 errors beyond it
    ({"drift": 0.08}, False),  # the shape's drift widens the band: the same ratio now sits near its edge
    ({"gap": 0.08}, False),  # so does do_bench's distance from a kernel time
    ({"drift": 0.03}, True),  # a drift under the spreads changes nothing
])
def test_the_band_is_the_noise_the_analysis_will_use(extra, decided):
    mine, peer = _at(stoprule.Z + 1)
    drift = extra.get("drift")
    if "gap" in extra:
        peer["gap"] = extra["gap"]
    assert stoprule.settled(mine, peer, FLOOR, drift) is decided


@pytest.mark.parametrize("drift_error, decided", [
    (0.0, True),  # the drift as it stands: the ratio Z + 1 errors beyond the edge the 4% spreads make
    (0.001, True),  # a drift of 3% known within 0.1%: under the spreads whatever it turns out to be
    (0.01, False),  # within 1%: up to 6%, which would carry the edge onto the ratio
])
def test_the_rows_that_measure_the_drift_stop_once_no_drift_within_its_error_would_change_a_comparison(
        drift_error, decided):
    mine, peer = _at(stoprule.Z + 1)
    assert stoprule.settled(mine, peer, FLOOR, 0.03, drift_error) is decided
    stopped = stoprule.reason(figure(), [(mine, peer)], TARGET, FLOOR, 0.0, CAP, 0.03, drift_error)
    assert stopped == ("decided" if decided else None)


@dataclass
class _Timed:
    spread: Optional[float]
    gap: Optional[float]
    call_spread: Optional[float] = None

    @property
    def do_bench_gap(self):
        return self.gap


@pytest.mark.parametrize("a, b, drift", [
    ((0.004, None), (0.003, None), None),  # the floor
    ((0.03, None), (0.05, None), None),  # the larger spread
    ((0.01, 0.07), (0.02, None), None),  # do_bench's distance
    ((0.01, None), (0.02, 0.001), 0.06),  # the drift
    ((None, None), (0.02, None), 0.0),
])
def test_the_band_is_the_analysis_noise_rule(a, b, drift):
    """The child's noise figure is bench/noise.py's (which the parent applies to the same figures afterwards)."""
    mine, peer = {"spread": a[0], "gap": a[1]}, {"spread": b[0], "gap": b[1]}
    expected = analysis_noise.noise(_Timed(*a), _Timed(*b), known=(drift,))
    assert stoprule.noise(mine, peer, analysis_noise.NOISE_FLOOR, drift) == pytest.approx(expected)


@pytest.mark.parametrize("mine_broken, peer_broken", [(True, False), (False, True)])
def test_a_figure_above_the_peak_decides_nothing(mine_broken, peer_broken):
    """A figure faster than the GPU's peak allows is broken: the comparison stays undecided however far apart."""
    mine, peer = _at(30.0)
    mine["fastest_ms"] = mine["median"] * (1.01 if mine_broken else 0.5)
    peer["fastest_ms"] = peer["median"] * (1.01 if peer_broken else 0.5)
    assert stoprule.reason(mine, [(mine, peer)], TARGET, FLOOR, 0.0, CAP) is None
    assert stoprule.reason(mine, [(mine, peer)], TARGET, FLOOR, CAP, CAP) == "cap"
    mine["fastest_ms"] = peer["fastest_ms"] = None  # no peak known: decided as any other
    assert stoprule.reason(mine, [(mine, peer)], TARGET, FLOOR, 0.0, CAP) == "decided"


def test_a_quiet_row_stops_whatever_its_peers():
    mine, peer = _at(0.0, spread=0.015)
    assert stoprule.reason(mine, [(mine, peer)], TARGET, FLOOR, 0.0, CAP) == "quiet"


@pytest.mark.parametrize("op, batch", [("mm", 1), ("addmm", 1), ("bmm", 8), ("baddbmm", 128)])
def test_the_child_s_peak_floor_is_the_analysis_s(op, batch):
    """The child stops trusting a figure where the analysis refuses it: the least time at the peak counts every GEMM of
    a batch, as Shape.flops does."""
    from envcheck.bench.shapes import Shape
    from envcheck.inside.shape_timing import shape_fastest_ms

    shape = Shape(2048, 4096, 1024, "x", "linear", op, batch, (4096,) if "add" in op else ())
    peak = 989.0
    assert shape_fastest_ms(shape.to_dict(), peak) == pytest.approx(shape.flops / (peak * 1e12) * 1e3)
    assert shape_fastest_ms(shape.to_dict(), None) is None
