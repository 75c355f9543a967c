"""What the GPU was doing while bench measured: NVML sampled in a thread of envcheck's own process (the target
interpreter may lack nvidia-ml-py). Each sample: SM clock, power, temperature, clock-event (throttle) reasons,
utilization, and the processes holding a compute context. The samples are facts; analysis judges them."""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass
from typing import Callable, Optional

__all__ = ["Sample", "GpuWatch", "THROTTLE_REASONS", "throttle_names"]

INTERVAL_S = 0.2

# nvml.h, nvmlClocksEventReason* (formerly nvmlClocksThrottleReason*): bit -> name. GpuIdle is left out of reports.
THROTTLE_REASONS = (
    (0x1, "gpu-idle"),
    (0x2, "applications-clocks-setting"),
    (0x4, "sw-power-cap"),
    (0x8, "hw-slowdown"),
    (0x10, "sync-boost"),
    (0x20, "sw-thermal-slowdown"),
    (0x40, "hw-thermal-slowdown"),
    (0x80, "hw-power-brake-slowdown"),
    (0x100, "display-clock-setting"),
)


def throttle_names(mask: int) -> tuple[str, ...]:
    return tuple(name for bit, name in THROTTLE_REASONS if mask & bit and name != "gpu-idle")


@dataclass(frozen=True)
class Sample:
    t: float  # time.time()
    index: int
    uuid: str
    sm_mhz: Optional[int] = None
    power_w: Optional[float] = None
    temp_c: Optional[int] = None
    throttle: int = 0
    util_pct: Optional[int] = None
    own: tuple[int, ...] = ()  # compute processes in the bench child's session
    foreign: tuple[int, ...] = ()  # visible here and not the child's
    unknown: tuple[int, ...] = ()  # not visible here (another pid namespace, or gone)

    def to_dict(self) -> dict:
        return {"t": round(self.t, 3), "index": self.index, "uuid": self.uuid, "sm_mhz": self.sm_mhz,
                "power_w": self.power_w, "temp_c": self.temp_c, "throttle": list(throttle_names(self.throttle)),
                "util_pct": self.util_pct, "own": list(self.own),
                "foreign": list(self.foreign), "unknown": list(self.unknown)}


def session_of(pid: int) -> Optional[int]:
    try:
        return os.getsid(pid)
    except OSError:  # not visible from here, or gone
        return None


def _parent_of(pid: int) -> Optional[int]:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as handle:
            return int(handle.read().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return None


def descends_from(pid: int, root: int) -> bool:
    """Whether pid is root or one of its descendants (a helper that left root's session still belongs to it)."""
    for _ in range(64):
        if pid == root:
            return True
        parent = _parent_of(pid)
        if parent is None or parent <= 1:
            return False
        pid = parent
    return False


def _read(pynvml, index: int, session: Optional[int]) -> Sample:
    handle = pynvml.nvmlDeviceGetHandleByIndex(index)

    def guarded(read: Callable, default=None):
        try:
            return read()
        except pynvml.NVMLError:
            return default

    uuid = guarded(lambda: pynvml.nvmlDeviceGetUUID(handle), "")
    reasons = getattr(pynvml, "nvmlDeviceGetCurrentClocksEventReasons", None) or pynvml.nvmlDeviceGetCurrentClocksThrottleReasons
    power = guarded(lambda: pynvml.nvmlDeviceGetPowerUsage(handle))
    processes = guarded(lambda: pynvml.nvmlDeviceGetComputeRunningProcesses(handle), [])
    return Sample(
        t=time.time(),
        index=index,
        uuid=uuid.decode() if isinstance(uuid, bytes) else str(uuid),
        sm_mhz=guarded(lambda: pynvml.nvmlDeviceGetClockInfo(handle, pynvml.NVML_CLOCK_SM)),
        power_w=None if power is None else round(power / 1000.0, 1),
        temp_c=guarded(lambda: pynvml.nvmlDeviceGetTemperature(handle, pynvml.NVML_TEMPERATURE_GPU)),
        throttle=int(guarded(lambda: reasons(handle), 0) or 0),
        util_pct=guarded(lambda: pynvml.nvmlDeviceGetUtilizationRates(handle).gpu),
        **_sorted_pids(sorted(int(p.pid) for p in processes or []), session),
    )


def _sorted_pids(pids: list[int], session: Optional[int]) -> dict:
    own, foreign, unknown = [], [], []
    for pid in pids:
        sid = session_of(pid)
        mine = session is not None and (sid == session or descends_from(pid, session))
        (unknown if sid is None else own if mine else foreign).append(pid)
    return {"own": tuple(own), "foreign": tuple(foreign), "unknown": tuple(unknown)}


class GpuWatch:
    """Samples every GPU every INTERVAL_S seconds between start() and stop(); never raises (no NVML: no samples,
    and `error` says why)."""

    def __init__(self, interval: float = INTERVAL_S):
        self.interval = interval
        self.samples: list[Sample] = []
        self.error: Optional[str] = None
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None
        self._pynvml = None
        self.session: Optional[int] = None  # the bench child's session id (its pid), once it runs

    def start(self) -> "GpuWatch":
        try:
            import pynvml

            pynvml.nvmlInit()
            self._pynvml = pynvml
            self._count = pynvml.nvmlDeviceGetCount()
            self.sample()
        except Exception as exc:  # noqa: BLE001 - a watch that cannot watch says so; bench goes on
            self.error = f"NVML could not be read: {exc}"
            return self
        self._thread = threading.Thread(target=self._loop, name="envcheck-gpu-watch", daemon=True)
        self._thread.start()
        return self

    def sample(self) -> None:
        if self._pynvml is None:
            return
        try:
            self.samples.extend(_read(self._pynvml, i, self.session) for i in range(self._count))
        except Exception as exc:  # noqa: BLE001
            self.error = f"NVML sampling failed: {exc}"

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            self.sample()

    def stop(self) -> list[Sample]:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self.sample()
        if self._pynvml is not None:
            try:
                self._pynvml.nvmlShutdown()
            except Exception:  # noqa: BLE001
                pass
            self._pynvml = None
        return list(self.samples)
