"""`bench --model`'s values, and the pure steps between its children: the GEMMs recorded (model_record.py) become
the shapes and weights bench measures, each as its own op (mm, addmm with its bias, bmm with its batch, baddbmm,
_scaled_mm); bench's child log says how many NVGEMM choices Inductor offered for each; the decision becomes the
backend sets the model is timed with (model_time.py); the model's times and the GEMMs each set ran on the backend
become the model-level verdict (model_outcome.py). Pure: no I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Optional, Sequence

from ..inside.gemm import FP8
from .analysis import Decision, Measurement, ShapeVerdict, config_backends
from .autotune import AutotuneReport
from .shapes import LAYOUTS, LINEAR, OPS, Shape
from .weights import Weights

__all__ = ["ModelSpec", "ModelGemm", "OtherOp", "Recording", "ModelRow", "ModelTiming", "Offered",
           "bench_inputs", "timing_sets", "nvgemm_offered", "left_out_reason", "NO_CHOICES_CAUSES"]

DTYPES = ("bfloat16", "float16")  # what bench times (run.DTYPE_FLAGS)
# The cause ids (causes/signatures.toml) of a compile with the backend alone that Inductor offered no choice for:
# NoValidChoicesError where no candidate failed to compile.
NO_CHOICES_CAUSES = ("nvgemm-no-kernel-for-op", "no-valid-choices")


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
    out_dtype: str = ""  # of its output ("" where not recorded: a's)
    bias: tuple[int, ...] = ()  # the shape of the input addmm and baddbmm add ([N]: nn.Linear's bias)

    @property
    def run_dtype(self) -> str:
        """The dtype bench times it in: its output's (a _scaled_mm's, from fp8 operands), which is a's for the rest."""
        return self.out_dtype or self.dtype

    @property
    def label(self) -> str:
        """The modules that run it: "g, u", "layers.0.mlp.up_proj +31"."""
        if len(self.modules) <= 2:
            return ", ".join(self.modules) or self.op
        return f"{self.modules[0]} +{len(self.modules) - 1}"

    def not_benched(self, dtype: Optional[str]) -> Optional[str]:
        """Why bench does not time it (None: it does), with `dtype` the one bench times."""
        if self.op not in OPS:
            return f"aten.{self.op}: not a GEMM op bench builds ({', '.join(OPS)})"
        if self.layout not in LAYOUTS:
            return f"strides {list(self.a_strides)}, {list(self.b_strides)}: a layout bench does not build"
        if self.op == "_scaled_mm" and (self.dtype != FP8 or self.layout != LINEAR):
            return f"{self.dtype} operands, B {self.layout}: bench times _scaled_mm on {FP8} operands, B column-major"
        if self.run_dtype != dtype:
            return f"{self.run_dtype}: bench times one dtype per run ({dtype or 'bfloat16 or float16'})"
        return None

    @property
    def shape(self) -> Shape:
        """The GEMM bench compiles for it: its op, dimensions, layout, batch and bias, labelled by its modules."""
        return Shape(self.m, self.n, self.k, self.label, self.layout or "", self.op, self.batch, self.bias)

    def to_dict(self) -> dict:
        return {"op": self.op, "m": self.m, "n": self.n, "k": self.k, "batch": self.batch, "dtype": self.dtype,
                "out_dtype": self.run_dtype, "layout": self.layout, "bias": list(self.bias), "count": self.count,
                "a_strides": list(self.a_strides), "b_strides": list(self.b_strides), "modules": list(self.modules)}


# Why an op that computes products, seen in the model's forward, is not among the GEMMs bench times (the first
# pattern found in its name). The recording names them so that nothing the device ran is left out unsaid.
LEFT_OUT = (
    (r"attention", "a fused attention kernel (scaled_dot_product_attention's own): Inductor calls it as it is, no "
                   "GEMM backend tunes it, and its math decomposition's GEMMs do not run"),
    (r"convolution", "a convolution: not a GEMM op bench builds"),
    (r"grouped_mm", "a grouped GEMM: not a GEMM op bench builds"),
    (r"int_mm|pack_mm", "an integer or packed-weight GEMM: bench times bfloat16, float16 and fp8 GEMMs"),
    (r"", "a matrix-vector or other product: not a GEMM op bench builds"),
)


def left_out_reason(op: str) -> str:
    return next(reason for pattern, reason in LEFT_OUT if re.search(pattern, op))


@dataclass(frozen=True)
class OtherOp:
    """An op the model's forward ran that computes products but is no GEMM bench times (model_record.OTHERS)."""

    op: str
    count: int
    modules: tuple[str, ...] = ()

    @property
    def reason(self) -> str:
        return left_out_reason(self.op)

    def to_dict(self) -> dict:
        return {"op": self.op, "count": self.count, "modules": list(self.modules), "why": self.reason}


@dataclass(frozen=True)
class Recording:
    """What model_record.py found: the GEMMs, or why it could not (error: a sentence; the log has the traceback)."""

    ok: bool
    gemms: tuple[ModelGemm, ...] = ()
    device: Optional[str] = None  # where the recorded forward ran: "cuda", "cpu"; "meta": see `decompositions`
    tried: tuple[tuple[str, str], ...] = ()  # (device, error) it could not run on first
    module: dict = field(default_factory=dict)  # {"class", "parameters", "inputs"}
    error: Optional[str] = None
    log: Optional[str] = None
    others: tuple[OtherOp, ...] = ()  # product ops seen that are no GEMM bench times
    asked: bool = False  # the device was the user's choice (--record-on), not the one the model is timed on

    @property
    def decompositions(self) -> Optional[str]:
        """Where the recorded GEMMs may include some the device never runs, why (None: they are the device's own)."""
        if self.device != "meta":
            return None
        why = "asked with --record-on meta" if self.asked else "; ".join(f"{d}: {e}" for d, e in self.tried)
        return (f"recorded on the meta device ({why or 'asked'}): where the GPU runs a fused kernel (SDPA's "
                "attention, say), the meta device runs its decomposition, whose GEMMs may be listed here though the "
                "GPU never runs them")

    def to_dict(self) -> dict:
        return {"ok": self.ok, "device": self.device, "asked": self.asked,
                "tried": [{"device": d, "error": e} for d, e in self.tried], "module": self.module,
                "gemms": [g.to_dict() for g in self.gemms], "not_gemms": [o.to_dict() for o in self.others],
                "decompositions": self.decompositions, "error": self.error, "log": self.log}


def bench_inputs(recording: Recording, path: str) -> tuple[tuple[Shape, ...], Weights, Optional[str], tuple[tuple[ModelGemm, str], ...]]:
    """(shapes to bench, their weights: how often one forward runs each, the dtype, the GEMMs not benched and why).
    The dtype is the one most of the model's benchable GEMM calls run in; one shape per GEMM as Inductor compiles it
    (its op, M, N, K, layout, batch and bias: Shape.key), its count summed over the GEMMs that are that one."""
    calls: dict[str, int] = {}
    for g in recording.gemms:
        if g.run_dtype in DTYPES and g.not_benched(g.run_dtype) is None:
            calls[g.run_dtype] = calls.get(g.run_dtype, 0) + g.count
    dtype = max(calls, key=lambda d: calls[d]) if calls else None
    shapes: dict[tuple, Shape] = {}
    counts: dict[tuple, float] = {}
    skipped = []
    for g in recording.gemms:
        why = g.not_benched(dtype)
        if why is not None:
            skipped.append((g, why))
            continue
        key = g.shape.key
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
    gemm_calls: tuple[tuple[str, int], ...] = ()  # the GEMMs each backend runs per forward in Inductor's code
    recommended: bool = False  # the set bench's decision recommends
    error: str = ""  # the exception's message whole, where it failed (its `target:` line names the op)
    cause_id: str = ""  # where it failed: the cause (causes/signatures.toml, as smoke and explain name it)
    cause: str = ""  # that cause's sentence
    failed_on: str = ""  # the op it failed on ("aten.addmm.default"), from the error's `target:` line (causes)

    @property
    def trusted(self) -> bool:
        return self.status == "ok" and bool(self.ms)

    def served(self, backend: str) -> Optional[int]:
        """How many of the compiled model's GEMMs `backend` runs per forward (None: Inductor's code was not read)."""
        return dict(self.gemm_calls).get(backend, 0) if self.gemm_calls else None

    @property
    def gemms(self) -> Optional[int]:
        """The GEMMs the compiled model runs per forward, by any backend (None: not known)."""
        return sum(count for _, count in self.gemm_calls) if self.gemm_calls else None

    @property
    def where(self) -> str:
        """" on aten.addmm": the op it failed on, as its failure is said ("" where none is known)."""
        return f" on {self.failed_on.removesuffix('.default')}" if self.failed_on else ""

    @property
    def failure(self) -> str:
        """"error: no-valid-choices on aten.addmm (InductorError: ...)": what went wrong, its cause and op."""
        where = self.where
        said = f"{self.cause_id}{where}" if self.cause_id else where.strip()
        return f"{self.status}: " + (f"{said} ({self.reason})" if said else self.reason)

    def to_dict(self) -> dict:
        return {"name": self.name, "backends": self.backends, "status": self.status, "reason": self.reason,
                "ms": self.ms, "spread": self.spread, "compile_s": self.compile_s, "max_error": self.max_error,
                "gemm_calls": dict(self.gemm_calls), "gemms": self.gemms, "recommended": self.recommended,
                "cause": {"id": self.cause_id, "text": self.cause} if self.cause_id else None,
                "failed_on": self.failed_on or None}


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
    names = [config_backends(backend, False), config_backends(backend, True), backend]
    if autotune is not None:
        scope = autotune.total("all") or (autotune.totals[0] if len(autotune.totals) == 1 else None)
        pin = scope.pin if scope is not None else None
        if pin is not None and pin.backend not in names:
            names.append(pin.backend)
    advised = config_backends(backend, decision.enable) if decision is not None else None
    return [{"name": name, "backends": name, "recommended": name == advised} for name in names]


# --------------------------------------------------------------------------------------------------------------
# What Inductor offered the backend for each GEMM bench timed


@dataclass(frozen=True)
class Offered:
    """How many choices of the profile's backend Inductor offered for one GEMM bench compiled as its op: read from the
    autotuning table of its compile with every backend (causes/candidates.py), or, where this run autotuned nothing
    (a warm cache), from how its compile with the backend alone ended."""

    count: Optional[int] = None  # None: not known
    exact: bool = True  # False: at least `count`
    failed: int = 0  # of them, failed to compile
    cause_id: str = ""  # where the backend alone failed to compile: its cause
    autotuned: bool = True  # the count is read from this run's autotuning (else: its compile with the backend alone)

    def text(self, backend: str) -> str:
        if self.count == 0:
            return f"0: {backend} has no kernel for this op here"
        if self.count is None:
            return "not known (no autotuning in this run)"
        failed = f", {self.failed} failed to compile" if self.failed else ""
        cached = "" if self.autotuned else " (not autotuned in this run)"
        return f"{'at least ' if not self.exact else ''}{self.count}{failed}{cached}"

    def to_dict(self) -> dict:
        return {"offered": self.count, "exact": self.exact, "failed": self.failed, "cause": self.cause_id or None,
                "autotuned": self.autotuned}


def nvgemm_offered(verdict: Optional[ShapeVerdict], alone: Optional[Measurement], backend: str,
                   cause_id: str = "") -> Offered:
    """What Inductor offered `backend` for one shape: the candidates its autotuning tables list (the verdict's, as
    bench read them from its child's log), else the failures no table followed, else, from the compile with the
    backend alone (`alone`, with `cause_id` the cause of its failure): none where it failed for want of a choice
    (NO_CHOICES_CAUSES), at least one where its code calls the backend."""
    gemms = verdict.candidates if verdict is not None else ()
    tabled = [g for g in gemms if g.op]
    if tabled:
        return Offered(sum(g.offered for g in tabled), all(g.listed for g in tabled), sum(g.failed for g in tabled))
    if gemms:
        return Offered(sum(g.offered for g in gemms), False, sum(g.failed for g in gemms))
    if alone is not None and alone.status == "error" and cause_id in NO_CHOICES_CAUSES:
        return Offered(0, cause_id=cause_id, autotuned=False)
    if alone is not None and alone.choice == backend:
        return Offered(1, exact=False, autotuned=False)
    return Offered(cause_id=cause_id, autotuned=False)


def drift_of(rows: Sequence[dict]) -> Optional[float]:
    """The first set's run-to-run drift: |its repeat's median / its first median - 1|."""
    first = next((r for r in rows if not r.get("repeat") and r.get("status") == "ok"), None)
    again = next((r for r in rows if r.get("repeat") and r.get("status") == "ok" and first and r.get("name") == first.get("name")), None)
    if first is None or again is None:
        return None
    return abs(again["ms"]["median"] / first["ms"]["median"] - 1)
