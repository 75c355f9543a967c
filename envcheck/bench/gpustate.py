"""What NVML saw of the GPU while the bench child ran, judged (pure; bench/watch.py takes the samples): which samples are
of the child's GPU, the state it was in, and whether another process used it while a figure was timed."""

from __future__ import annotations

import re
from typing import Optional, Sequence

from .watch import Sample, throttle_names

__all__ = ["normalize_uuid", "gpu_samples", "gpu_state", "foreign", "in_window"]


_UUID = re.compile(r"[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}")


def normalize_uuid(uuid: Optional[str]) -> str:
    """The 32 hex digits of a GPU UUID, however it is written (NVML: "GPU-xxxxxxxx-...", torch: bare or UUID(...))."""
    found = _UUID.search((uuid or "").lower())
    return found.group(0).replace("-", "") if found else ""


def gpu_samples(samples: Sequence[Sample], uuid: Optional[str]) -> list[Sample]:
    """The samples of the GPU the child ran on (by UUID; with one GPU, that one)."""
    wanted = normalize_uuid(uuid)
    mine = [s for s in samples if wanted and normalize_uuid(s.uuid) == wanted]
    if mine:
        return mine
    indexes = {s.index for s in samples}
    return list(samples) if len(indexes) == 1 else []


def gpu_state(samples: Sequence[Sample]) -> dict:
    """SM clock range, peak power and temperature, and the throttle reasons seen in some samples."""
    if not samples:
        return {}
    clocks = [s.sm_mhz for s in samples if s.sm_mhz is not None]
    powers = [s.power_w for s in samples if s.power_w is not None]
    temps = [s.temp_c for s in samples if s.temp_c is not None]
    mask = 0
    for s in samples:
        mask |= s.throttle
    return {
        "samples": len(samples),
        "sm_mhz": [min(clocks), max(clocks)] if clocks else None,
        "power_w_max": max(powers) if powers else None,
        "temp_c_max": max(temps) if temps else None,
        "throttle": list(throttle_names(mask)),
    }


def foreign(samples: Sequence[Sample]) -> tuple[int, ...]:
    """Processes other than the bench child's that held the GPU in these samples.

    A pid is known to be foreign when it is visible here and not in the child's session. When NVML's pids are not
    visible here (another pid namespace) and the child's own never shows, two or more at once means another."""
    foreign = {pid for s in samples for pid in s.foreign}
    if foreign:
        return tuple(sorted(foreign))
    if not any(s.own for s in samples):
        crowded = [s.unknown for s in samples if len(s.unknown) > 1]
        if crowded:
            return tuple(sorted({pid for pids in crowded for pid in pids}))
    return ()


def in_window(samples: Sequence[Sample], window, slack: float) -> list[Sample]:
    if not window or window[0] is None:
        return []
    end = window[1] if window[1] is not None else window[0]
    return [s for s in samples if window[0] - slack <= s.t <= end + slack]
