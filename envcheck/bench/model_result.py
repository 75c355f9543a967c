"""`bench --model`'s values, and the pure steps between its children: the GEMMs recorded (model_record.py) become
the shapes and weights bench measures; the decision becomes the backend sets the model is timed with
(model_time.py); the model's times become the model-level verdict: whether the per-shape advice holds on the model.
Pure: no I/O.

The verdict: enabling the profile's backend with ATEN and TRITON (ATEN,TRITON,NVGEMM) against leaving it out
(ATEN,TRITON), per forward, counted beyond the noise (noise.py's rule: the spreads of both do_bench figures, the drift
of the first set timed again at the end, a 1% floor). The advice "enable" holds where the model is not slower with
the backend; "do not enable" holds where it is not faster.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Sequence

from .analysis import Decision, config_backends
from .autotune import AutotuneReport
from .noise import NOISE_FLOOR, differs
from .shapes import LAYOUTS, Shape
from .weights import Weights

__all__ = ["ModelSpec", "ModelGemm", "Recording", "ModelRow", "ModelTiming", "ModelVerdict", "ModelBench",
           "bench_inputs", "timing_sets", "model_verdict", "BENCHED_OPS"]

BENCHED_OPS = ("mm", "addmm")  # 2-D GEMMs: what bench builds (addmm's bias is an epilogue it does not time)
DTYPES = ("bfloat16", "float16")  # what bench times (run.DTYPE_FLAGS)


@dataclass(frozen=True)
class ModelSpec:
    """--model FILE.py[:FUNCTION]."""

    path: str
    function: str

    @property
    def text(self) -> str:
        return f"{self.path}:{self.function}"


@dataclass(frozen=True)
class ModelGemm:
    """One distinct GEMM the model runs, as model_record.py saw it."""

    op: str
    m: int
    n: int
    k: int
    batch: int
    dtype: str
    layout: Optional[str]  # "linear", "row-major", or None: a layout bench does not build
    count: int
    a_strides: tuple[int, ...] = ()
    b_strides: tuple[int, ...] = ()
    modules: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        """The modules that run it: "g, u", "layers.0.mlp.up_proj +31"."""
        if len(self.modules) <= 2:
            return ", ".join(self.modules) or self.op
        return f"{self.modules[0]} +{len(self.modules) - 1}"

    def not_benched(self, dtype: Optional[str]) -> Optional[str]:
        """Why bench does not time it (None: it does), with `dtype` the one bench times."""
        if self.op not in BENCHED_OPS or self.batch != 1:
            return f"aten.{self.op} (batch {self.batch}): bench times 2-D GEMMs"
        if self.layout not in LAYOUTS:
            return f"strides {list(self.a_strides)}, {list(self.b_strides)}: a layout bench does not build"
        if self.dtype != dtype:
            return f"{self.dtype}: bench times one dtype per run ({dtype or 'bfloat16 or float16'})"
        return None

    @property
    def shape(self) -> Shape:
        return Shape(self.m, self.n, self.k, self.label, self.layout or "")

    def to_dict(self) -> dict:
        return {"op": self.op, "m": self.m, "n": self.n, "k": self.k, "batch": self.batch, "dtype": self.dtype,
                "layout": self.layout, "count": self.count, "a_strides": list(self.a_strides),
                "b_strides": list(self.b_strides), "modules": list(self.modules)}


@dataclass(frozen=True)
class Recording:
    """What model_record.py found: the GEMMs, or why it could not (error: a sentence; the log has the traceback)."""

    ok: bool
    gemms: tuple[ModelGemm, ...] = ()
    device: Optional[str] = None  # where the recorded forward ran: "meta", or the fallback
    tried: tuple[tuple[str, str], ...] = ()  # (device, error) it could not run on first
    module: dict = field(default_factory=dict)  # {"class", "parameters", "inputs"}
    error: Optional[str] = None
    log: Optional[str] = None

    def to_dict(self) -> dict:
        return {"ok": self.ok, "device": self.device, "tried": [{"device": d, "error": e} for d, e in self.tried],
                "module": self.module, "gemms": [g.to_dict() for g in self.gemms], "error": self.error, "log": self.log}


def bench_inputs(recording: Recording, path: str) -> tuple[tuple[Shape, ...], Weights, Optional[str], tuple[tuple[ModelGemm, str], ...]]:
    """(shapes to bench, their weights: how often one forward runs each, the dtype, the GEMMs not benched and why).
    The dtype is the one most of the model's benchable GEMM calls run in; one shape per (M, N, K, layout), its
    count summed over the ops that run it (mm and addmm alike)."""
    calls: dict[str, int] = {}
    for g in recording.gemms:
        if g.dtype in DTYPES and g.not_benched(g.dtype) is None:
            calls[g.dtype] = calls.get(g.dtype, 0) + g.count
    dtype = max(calls, key=lambda d: calls[d]) if calls else None
    shapes: dict[tuple, Shape] = {}
    counts: dict[tuple, float] = {}
    skipped = []
    for g in recording.gemms:
        why = g.not_benched(dtype)
        if why is not None:
            skipped.append((g, why))
            continue
        key = (g.m, g.n, g.k, g.layout)
        shapes.setdefault(key, g.shape)
        counts[key] = counts.get(key, 0.0) + g.count
    weights = Weights(source=f"--model {path}", counts=tuple(counts.items())) if counts else Weights()
    return tuple(shapes.values()), weights, dtype, tuple(skipped)


# --------------------------------------------------------------------------------------------------------------
# The model timed


@dataclass(frozen=True)
class ModelRow:
    """The model compiled with one set of backends, timed per forward (do_bench)."""

    name: str
    backends: str
    status: str  # "ok", "error", "wrong-result", "skipped"
    reason: str = ""
    ms: Optional[float] = None  # median per forward
    spread: Optional[float] = None  # (q75 - q25) / median
    compile_s: Optional[float] = None
    max_error: Optional[float] = None  # against eager
    gemm_kernels: tuple[tuple[str, int], ...] = ()  # what Inductor's code calls for the GEMMs
    recommended: bool = False  # the set bench's decision recommends

    @property
    def trusted(self) -> bool:
        return self.status == "ok" and bool(self.ms)

    def to_dict(self) -> dict:
        return {"name": self.name, "backends": self.backends, "status": self.status, "reason": self.reason,
                "ms": self.ms, "spread": self.spread, "compile_s": self.compile_s, "max_error": self.max_error,
                "gemm_kernels": dict(self.gemm_kernels), "recommended": self.recommended}


@dataclass(frozen=True)
class ModelTiming:
    rows: tuple[ModelRow, ...] = ()
    eager_ms: Optional[float] = None
    drift: Optional[float] = None  # |repeat / first - 1| of the first set
    error: Optional[str] = None
    log: Optional[str] = None

    def row(self, backends: str) -> Optional[ModelRow]:
        return next((r for r in self.rows if r.backends == backends), None)

    def to_dict(self) -> dict:
        return {"rows": [r.to_dict() for r in self.rows], "eager_ms": self.eager_ms, "drift": self.drift,
                "error": self.error, "log": self.log}


def timing_sets(backend: str, decision: Optional[Decision], autotune: Optional[AutotuneReport]) -> list[dict]:
    """The sets the model is timed with: ATEN,TRITON; ATEN,TRITON,<backend>; <backend> alone; and, where bench's
    advice names another (a backend pinned for a process that runs all of the model's shapes), that one too. Each
    {"name", "backends", "recommended"}; the decision's set is the recommended one."""
    names = ["ATEN,TRITON", f"ATEN,TRITON,{backend}", backend]
    if autotune is not None:
        scope = autotune.total("all") or (autotune.totals[0] if len(autotune.totals) == 1 else None)
        pin = scope.pin if scope is not None else None
        if pin is not None and pin.backend not in names:
            names.append(pin.backend)
    advised = config_backends(backend, decision.enable) if decision is not None else None
    return [{"name": name, "backends": name, "recommended": name == advised} for name in names]


@dataclass(frozen=True)
class ModelVerdict:
    """Whether bench's per-shape advice holds on the model."""

    holds: Optional[bool]  # None: not checked (a set failed, or bench decided nothing)
    text: str
    speedup: Optional[float] = None  # ATEN,TRITON's time over ATEN,TRITON,<backend>'s: above 1, the backend helps
    noise: Optional[float] = None

    def to_dict(self) -> dict:
        return {"holds": self.holds, "text": self.text, "speedup": self.speedup, "noise": self.noise}


def model_verdict(timing: ModelTiming, decision: Optional[Decision], backend: str) -> ModelVerdict:
    """The per-shape advice (decision.enable) held against the model's times (pure; the table in
    tests/test_bench_model.py walks every branch)."""
    if decision is None or not (decision.wins or decision.loses or decision.same):
        return ModelVerdict(None, "not checked on the model: bench made no per-shape decision")
    without, with_it = timing.row("ATEN,TRITON"), timing.row(f"ATEN,TRITON,{backend}")
    missing = [r.name if r is not None else name for r, name in ((without, "ATEN,TRITON"), (with_it, f"ATEN,TRITON,{backend}"))
               if r is None or not r.trusted]
    if missing:
        reasons = "; ".join(f"{r.name}: {r.status}{' (' + r.reason + ')' if r.reason else ''}"
                            for r in (without, with_it) if r is not None and not r.trusted)
        return ModelVerdict(None, f"not checked on the model: {', '.join(missing)} not timed" + (f" ({reasons})" if reasons else ""))
    speedup = without.ms / with_it.ms
    margin = max(NOISE_FLOOR, *(s for s in (without.spread, with_it.spread, timing.drift) if s is not None))
    moved = differs(speedup, margin)
    said = {1: f"{speedup:.2f}x as fast with {backend}", -1: f"{1 / speedup:.2f}x slower with {backend}",
            0: f"the same with and without {backend} ({speedup:.3f}x)"}[moved]
    figures = f"{without.ms:.4g} ms per forward with ATEN,TRITON, {with_it.ms:.4g} ms with ATEN,TRITON,{backend}; noise {100 * margin:.1f}%"
    holds = moved >= 0 if decision.enable else moved <= 0
    advice = f"enable {backend}" if decision.enable else f"do not enable {backend}"
    verdict = "holds" if holds else "does not hold"
    return ModelVerdict(holds, f"the per-shape advice ({advice}) {verdict} on the model: it runs {said} ({figures})",
                        speedup, margin)


@dataclass(frozen=True)
class ModelBench:
    """A whole `bench --model` run: the recording, the bench of its GEMMs, the model timed, the verdict."""

    spec: ModelSpec
    recording: Recording
    skipped: tuple[tuple[ModelGemm, str], ...] = ()  # recorded, not benched, and why
    timing: Optional[ModelTiming] = None
    verdict: Optional[ModelVerdict] = None

    def to_dict(self) -> dict:
        return {"file": self.spec.path, "function": self.spec.function, "recording": self.recording.to_dict(),
                "not_benched": [{"gemm": g.to_dict(), "why": why} for g, why in self.skipped],
                "timing": None if self.timing is None else self.timing.to_dict(),
                "verdict": None if self.verdict is None else self.verdict.to_dict()}


def drift_of(rows: Sequence[dict]) -> Optional[float]:
    """The first set's run-to-run drift: |its repeat's median / its first median - 1|."""
    first = next((r for r in rows if not r.get("repeat") and r.get("status") == "ok"), None)
    again = next((r for r in rows if r.get("repeat") and r.get("status") == "ok" and first and r.get("name") == first.get("name")), None)
    if first is None or again is None:
        return None
    return abs(again["ms"]["median"] / first["ms"]["median"] - 1)
