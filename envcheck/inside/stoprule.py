"""When the timing of a row may stop: bench_child.py asks after each round of repetitions (timing.py). Pure.

What a shape's timing has to give is its comparisons: the analysis (envcheck/bench/analysis.py, autotune.py)
compares every row of a shape with the others (the profile's backend against the best of the rest, Inductor's pick
against each single backend), each ratio of medians beyond a noise figure that is never under the largest of the
two rows' spreads ((q75 - q25) / median), do_bench's distance from a kernel time where the calls run back to back,
the shape's drift (its first backend timed again after the others) and a floor (envcheck/bench/noise.py, whose floor
the plan passes). So a row stops when one of these holds, checked in this order:

- "quiet": its spread is within the noise target;
- "precise": its median is known within PRECISION (one standard error of a median, 1.2533 sigma / sqrt(n), sigma ~
  IQR / 1.349): what the rule was before comparisons were looked at, and still the most a row runs for;
- "decided": every comparison it enters is decided: the ratio of the two medians lies at least Z standard errors of
  the ratio (both medians' errors together) from each edge of the noise band [1 / (1 + noise), 1 + noise], so that
  more repetitions of either would not carry it across. The first backend and its repeat enter every comparison of
  the shape through their drift, which is in every noise band: they stop once each comparison stays decided with the
  drift anywhere within Z of its standard errors. A figure faster than the GPU's peak allows is broken (the analysis
  refuses it): it decides nothing, neither its own comparisons nor its peers';
- "cap": the row has spent its time cap.

Standard library only, Python 3.8 syntax (copied into the run folder as envcheck_stoprule.py).
"""

from __future__ import annotations

import math

PRECISION = 0.005
Z = 3.0  # standard errors between a ratio and an edge of the noise band: benchmarks/timing_replay.py


def median_error(figure):
    """One standard error of the median, relative to it: 1.2533 sigma / sqrt(n), sigma ~ IQR / 1.349."""
    return 1.2533 * (figure["q75"] - figure["q25"]) / 1.349 / figure["median"] / figure["reps"] ** 0.5


def alone(figure, target):
    """"quiet" or "precise" where the row's own figures are enough (at least MIN_REPS of them: timing.py), else
    None."""
    if figure["spread"] is not None and figure["spread"] <= target:
        return "quiet"
    if median_error(figure) <= PRECISION:
        return "precise"
    return None


def noise(mine, other, floor, drift=None):
    """The noise of comparing two rows as far as the timing knows it: the floor, both spreads, do_bench's distance
    ("gap", where measured) and the shape's drift (None: not measured yet). envcheck/bench/noise.py's rule."""
    terms = [floor] + [f.get(key) for f in (mine, other) for key in ("spread", "gap")] + [drift]
    return max(term for term in terms if term is not None)


def broken(figure):
    """The figure is faster than the GPU's peak allows ("fastest_ms": the shape's FLOPs at the peak; None: no peak
    known)."""
    return figure.get("fastest_ms") is not None and figure["median"] < figure["fastest_ms"]


def settled(mine, other, floor, drift=None, drift_error=0.0, z=Z):
    """Whether the comparison of two rows' medians is decided beyond the noise (see the module docstring), with the
    drift anywhere within z of its own standard errors (drift_error) where it is still being measured."""
    if broken(mine) or broken(other):
        return False
    ratio = abs(math.log(other["median"] / mine["median"]))
    error = math.hypot(median_error(mine), median_error(other))
    low = None if drift is None else max(0.0, drift - z * drift_error)
    high = None if drift is None else drift + z * drift_error
    return (ratio <= math.log(1 + noise(mine, other, floor, low)) - z * error
            or ratio >= math.log(1 + noise(mine, other, floor, high)) + z * error)


def reason(mine, comparisons, target, floor, spent_s, cap_s, drift=None, drift_error=0.0):
    """Why the row may stop now ("quiet", "precise", "decided", "cap"), or None: another round. comparisons: the
    pairs of figures its own figure enters (with each other row of its shape; the first backend and its repeat, whose
    drift is in every comparison's noise: every pair of the shape); none: it is decided by its own figures only.
    drift_error: the drift's standard error, for the rows that measure it (0: taken as it stands)."""
    own = alone(mine, target)
    if own is not None:
        return own
    if comparisons and all(settled(a, b, floor, drift, drift_error) for a, b in comparisons):
        return "decided"
    if spent_s >= cap_s:
        return "cap"
    return None
