"""What a bench run is asked (BenchOptions) and what it found (BenchResult): the values the run, the renderers and
the comparison of saved results share."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from ..inside.timing import METHOD
from ..model import CompileWay, EnvironmentRecord, Remedy, Status, plain
from . import analysis
from .autotune import AutotuneReport
from .data import Peak
from .shapes import Shape
from .weights import EQUAL, Weights

__all__ = ["BenchOptions", "BenchResult", "NOISE_TARGET", "TIME_CAP_S"]

NOISE_TARGET = 0.02
# A row whose spread is over the target runs to the cap: 41-51 of each llm run's 120 rows on the H200 (the blocking
# kernel's decode rows, spread ~3.4%: a property of the times, which more repetitions do not lower). 0.2 s still
# gives them ~450 repetitions, a median within ~0.15% (1.25 sigma / sqrt(n)), far inside the 2% target; 0.5 s gave
# ~1200 for 0.3 s more per such row (benchmarks/bench_time_budget.py, "timing").
TIME_CAP_S = 0.2


@dataclass(frozen=True)
class BenchOptions:
    shapes: tuple[Shape, ...]
    dtype: str = "bfloat16"
    budget_s: float = 600.0
    fresh: bool = False
    noise_target: float = NOISE_TARGET
    time_cap_s: float = TIME_CAP_S
    library: bool = False  # time the profile's kernel library directly beside cuBLAS
    all_candidates: bool = False  # with library: every candidate kernel, not nvMatmulHeuristics' best few
    timeout_s: Optional[float] = None  # kill the child after this long (default: the budget plus STARTUP_S)
    weights: Weights = EQUAL  # how often each shape runs, for the total cost of Inductor's own pick


@dataclass(frozen=True)
class BenchResult:
    status: Status
    summary: str
    backend: str = "NVGEMM"
    dtype: str = "bfloat16"
    gpu: Optional[str] = None
    capability: Optional[tuple[int, int]] = None
    peak: Optional[Peak] = None
    measurements: tuple[analysis.Measurement, ...] = ()
    verdicts: tuple[analysis.ShapeVerdict, ...] = ()
    decision: Optional[analysis.Decision] = None
    autotune: Optional[AutotuneReport] = None  # what Inductor's own pick (mix) cost
    gpu_before: dict = field(default_factory=dict)
    gpu_after: dict = field(default_factory=dict)
    busy_before: tuple[int, ...] = ()  # processes on the GPU before the child started
    watch_error: Optional[str] = None
    method: str = METHOD
    versions: tuple[tuple[str, str], ...] = ()
    elapsed_s: Optional[float] = None
    budget_s: Optional[float] = None
    cause: Optional[str] = None
    cause_id: Optional[str] = None
    log: Optional[str] = None
    cache_dir: Optional[str] = None
    environment: Optional[EnvironmentRecord] = None  # the variables cleared, kept and set for the child
    compile_target: Optional[CompileWay] = None  # which way the child compiled (CUTE_DSL_ARCH)
    candidates: Optional[str] = None  # with a library: how its kernels were chosen ("nvMatmulHeuristics' top 5 ...")
    remedy: Optional[Remedy] = None  # of a cause that made the result a warning (NVGEMM candidates lost to it)

    @property
    def exit_code(self) -> int:
        return 1 if self.status.is_problem else 0

    def to_dict(self) -> dict:
        peak = self.peak
        return {
            "status": self.status.value,
            "summary": self.summary,
            "backend": self.backend,
            "dtype": self.dtype,
            "gpu": {"name": self.gpu, "capability": list(self.capability) if self.capability else None,
                    "before": self.gpu_before, "after": self.gpu_after, "busy_before": list(self.busy_before),
                    "watch_error": self.watch_error},
            "peak": None if peak is None else {"name": peak.name, "tflops": peak.for_dtype(self.dtype), "source": peak.source},
            "method": self.method,
            "measurements": [m.to_dict() for m in self.measurements],
            "verdicts": [v.to_dict() for v in self.verdicts],
            "decision": None if self.decision is None else self.decision.to_dict(),
            "autotune": None if self.autotune is None else self.autotune.to_dict(),
            "versions": dict(self.versions),
            "elapsed_s": self.elapsed_s,
            "budget_s": self.budget_s,
            "cause": None if self.cause_id is None else {"id": self.cause_id, "text": self.cause},
            "log": self.log,
            "cache_dir": self.cache_dir,
            "environment": self.environment.to_dict() if self.environment is not None else None,
            "compile_target": self.compile_target.to_dict() if self.compile_target is not None else None,
            "candidates": self.candidates,
            "remedy": plain(self.remedy),
        }
