"""What Inductor's own choice costs. With every backend allowed (`mix`), max-autotune times the candidates itself
and keeps the one it saw fastest; bench times that pick beside each backend alone. Pure: no I/O.

Per shape: how much slower the pick is than the best single backend, in kernel time and per call (the calls are not
in a CUDA graph, so the host's launch path counts), each counted only beyond the noise (noise.py). Over the shape
set: the total of those differences, each shape weighted by how often it runs (weights.py; equal: once each). Per
shape class (classes.py: decode, prefill) and over all shapes: the one backend that, allowed alone, would have
taken less time than the pick; the config that pins it.

What Inductor can express: `max_autotune_gemm_backends` is one setting of a process (torch._inductor.config), not
one per shape. A class's pin is therefore advice for a process that runs only that class (a decode worker, a
prefill worker); a process that runs both gets the backend that is best over all its shapes, or keeps
autotuning. Only what was measured is offered: single backends and all of them together (pairs were not timed).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Optional, Protocol, Sequence

from .classes import CLASSES, condition, shape_class
from .noise import Timed, call_noise, differs, noise
from .shapes import Shape
from .weights import EQUAL, Weights

__all__ = ["MIX", "mix_backends", "Single", "MixCost", "Pin", "Total", "AutotuneReport", "mix_cost", "autotune_report", "pin_snippet"]

MIX = "mix"


def mix_backends(backend: str) -> str:
    """What the mix lets Inductor choose among: every backend."""
    return f"ATEN,TRITON,{backend}"


class Measured(Timed, Protocol):
    kernel_ms: Optional[float]
    call_ms: Optional[float]
    choice: Optional[str]


@dataclass(frozen=True)
class Single:
    """One backend alone on a shape, and the noise of comparing the pick with it."""

    backend: str
    kernel_ms: float
    call_ms: Optional[float]
    noise: float  # kernel time against the pick's
    call_noise: float

    def to_dict(self) -> dict:
        return {"backend": self.backend, "kernel_ms": self.kernel_ms, "call_ms": self.call_ms, "noise": self.noise,
                "call_noise": self.call_noise}


@dataclass(frozen=True)
class MixCost:
    """Inductor's pick on one shape against every single backend measured there."""

    shape: Shape
    pick: Optional[str]  # the backend Inductor chose
    kernel_ms: float
    call_ms: Optional[float]
    singles: tuple[Single, ...]

    @property
    def fastest(self) -> Single:
        return min(self.singles, key=lambda s: s.kernel_ms)

    @property
    def quickest(self) -> Optional[Single]:
        """The single backend with the quickest call (None when no call was timed)."""
        timed = [s for s in self.singles if s.call_ms]
        return min(timed, key=lambda s: s.call_ms) if timed and self.call_ms else None

    @property
    def kernel_cost(self) -> float:
        """The pick's kernel time over the fastest single backend's, minus 1 (+0.10: 10% slower)."""
        return self.kernel_ms / self.fastest.kernel_ms - 1

    @property
    def call_cost(self) -> Optional[float]:
        quickest = self.quickest
        return None if quickest is None else self.call_ms / quickest.call_ms - 1

    @property
    def kernel_loss(self) -> bool:
        best = self.fastest
        return differs(best.kernel_ms / self.kernel_ms, best.noise) < 0

    @property
    def call_loss(self) -> bool:
        quickest = self.quickest
        return quickest is not None and differs(quickest.call_ms / self.call_ms, quickest.call_noise) < 0

    @property
    def ok(self) -> bool:
        """The pick was not slower than the best single backend beyond the noise, per kernel or per call."""
        return not self.kernel_loss and not self.call_loss

    def saving(self, backend: str, per_call: bool = False) -> Optional[float]:
        """Milliseconds a call would save with `backend` alone instead of the pick (negative: it would lose), 0 within
        the noise; None where that backend (or the call time) was not measured."""
        single = next((s for s in self.singles if s.backend == backend), None)
        if single is None:
            return None
        mine, theirs, margin = ((self.call_ms, single.call_ms, single.call_noise) if per_call
                                else (self.kernel_ms, single.kernel_ms, single.noise))
        if not mine or not theirs:
            return None
        return mine - theirs if differs(theirs / mine, margin) else 0.0

    def excess(self, per_call: bool = False) -> Optional[float]:
        """Milliseconds the pick lost per call against the best single backend (negative: it was faster), counted
        beyond the noise only."""
        best = self.quickest if per_call else self.fastest
        return None if best is None else self.saving(best.backend, per_call)

    def to_dict(self) -> dict:
        return {"shape": self.shape.to_dict(), "pick": self.pick, "kernel_ms": self.kernel_ms, "call_ms": self.call_ms,
                "fastest": self.fastest.backend, "kernel_cost": self.kernel_cost, "kernel_noise": self.fastest.noise,
                "kernel_loss": self.kernel_loss,
                "quickest": None if self.quickest is None else self.quickest.backend, "call_cost": self.call_cost,
                "call_noise": None if self.quickest is None else self.quickest.call_noise, "call_loss": self.call_loss,
                "ok": self.ok, "singles": [s.to_dict() for s in self.singles]}


def mix_cost(shape: Shape, mix: Measured, singles: Mapping[str, Measured], drift: Optional[float]) -> MixCost:
    """The pick (a trusted mix measurement) against the trusted single backends of its shape; `drift`: the shape's
    run-to-run drift (noise.py), None where it was not measured."""
    found = []
    for name, single in singles.items():
        margin = noise(mix, single, known=(drift,))
        found.append(Single(name, single.kernel_ms, single.call_ms, margin, call_noise(margin, mix, single)))
    return MixCost(shape, mix.choice, mix.kernel_ms, mix.call_ms, tuple(sorted(found, key=lambda s: s.kernel_ms)))


# --------------------------------------------------------------------------------------------------------------
# Over the shape set


@dataclass(frozen=True)
class Pin:
    """One backend allowed alone instead of all: the weighted milliseconds it saves over the pick (per pass over the
    weighted shape set), beyond the noise."""

    backend: str
    saving_ms: float
    fraction: float  # of the pick's weighted time

    def to_dict(self) -> dict:
        return {"backend": self.backend, "saving_ms": self.saving_ms, "fraction": self.fraction}


@dataclass(frozen=True)
class Total:
    """The pick's cost over one scope ("decode", "prefill" or "all"), weighted."""

    scope: str
    shapes: tuple[str, ...]  # MxNxK of the shapes with weight > 0
    losses: tuple[str, ...]  # where the pick was slower beyond the noise, per kernel or per call
    mix_ms: float  # weighted kernel time of the pick
    excess_ms: float  # weighted kernel milliseconds lost against the best single backend of each shape
    call_mix_ms: Optional[float]
    call_excess_ms: Optional[float]
    pin: Optional[Pin]  # the backend to allow alone, by kernel time; None: none does better than the pick
    call_pin: Optional[Pin]  # the same by call time
    complete: bool = True  # every weighted shape of the scope had its pick measured (else no pin is offered)

    @property
    def cost(self) -> float:
        """The weighted kernel time lost, as a fraction of the weighted time of the best single backends."""
        best = self.mix_ms - self.excess_ms
        return self.excess_ms / best if best > 0 else 0.0

    @property
    def call_cost(self) -> Optional[float]:
        if self.call_mix_ms is None or self.call_excess_ms is None:
            return None
        best = self.call_mix_ms - self.call_excess_ms
        return self.call_excess_ms / best if best > 0 else 0.0

    def to_dict(self) -> dict:
        return {"scope": self.scope, "shapes": list(self.shapes), "losses": list(self.losses), "mix_ms": self.mix_ms,
                "excess_ms": self.excess_ms, "cost": self.cost, "call_mix_ms": self.call_mix_ms,
                "call_excess_ms": self.call_excess_ms, "call_cost": self.call_cost,
                "pin": None if self.pin is None else self.pin.to_dict(),
                "call_pin": None if self.call_pin is None else self.call_pin.to_dict(), "complete": self.complete}


@dataclass(frozen=True)
class AutotuneReport:
    costs: tuple[MixCost, ...]
    weights: Weights
    totals: tuple[Total, ...]  # decode, prefill, all (the scopes with a weighted shape)
    unmeasured: tuple[str, ...]  # shapes whose pick was not measured (or not trusted)
    not_in_bench: tuple[str, ...]  # shapes of the weights file this bench did not measure
    backends: str  # what the pick chose among ("ATEN,TRITON,NVGEMM")

    @property
    def losses(self) -> tuple[MixCost, ...]:
        return tuple(c for c in self.costs if not c.ok)

    def total(self, scope: str) -> Optional[Total]:
        return next((t for t in self.totals if t.scope == scope), None)

    @property
    def snippet(self) -> str:
        return pin_snippet(self)

    def to_dict(self) -> dict:
        return {"backends": self.backends, "weights": self.weights.to_dict(), "shapes": [c.to_dict() for c in self.costs],
                "losses": [c.shape.text for c in self.losses], "totals": [t.to_dict() for t in self.totals],
                "unmeasured": list(self.unmeasured), "not_in_bench": list(self.not_in_bench), "snippet": self.snippet}


def _weighted(costs: Sequence[MixCost], weights: Weights, value) -> Optional[float]:
    """The weighted sum of value(cost) over the shapes of weight > 0; None where one of them has no value (a single
    backend the budget cut after the pick was measured, say)."""
    weighed = [(weights.of(c.shape), value(c)) for c in costs if weights.of(c.shape)]
    if any(v is None for _, v in weighed):
        return None
    return sum(w * v for w, v in weighed)


def _pin(costs: Sequence[MixCost], weights: Weights, per_call: bool, mix_ms: Optional[float]) -> Optional[Pin]:
    """The single backend, measured on every shape of the scope, that saves the most weighted time over the pick."""
    if not costs or not mix_ms:
        return None
    names = [s.backend for s in costs[0].singles]
    best = None
    for name in names:
        saved = _weighted(costs, weights, lambda c: c.saving(name, per_call))
        if saved is not None and saved > 0 and (best is None or saved > best.saving_ms):
            best = Pin(name, saved, saved / mix_ms)
    return best


def _total(scope: str, costs: Sequence[MixCost], weights: Weights, complete: bool = True) -> Total:
    """complete: every weighted shape of the scope had its pick measured; a pin rests on all of them or is not
    offered (a budget that ran out before some shapes leaves the scope's cost, not its advice)."""
    mix_ms = _weighted(costs, weights, lambda c: c.kernel_ms) or 0.0
    excess = _weighted(costs, weights, lambda c: c.excess()) or 0.0
    call_mix = _weighted(costs, weights, lambda c: c.call_ms)
    call_excess = _weighted(costs, weights, lambda c: c.excess(per_call=True))
    return Total(scope=scope, shapes=tuple(c.shape.text for c in costs),
                 losses=tuple(c.shape.text for c in costs if not c.ok), mix_ms=mix_ms, excess_ms=excess,
                 call_mix_ms=call_mix, call_excess_ms=call_excess,
                 pin=_pin(costs, weights, False, mix_ms) if complete and excess > 0 else None,
                 call_pin=_pin(costs, weights, True, call_mix) if complete and call_excess and call_excess > 0
                 else None, complete=complete)


class Judged(Protocol):
    shape: Shape
    mix_cost: Optional[MixCost]


def autotune_report(verdicts: Sequence[Judged], backends: str, weights: Weights = EQUAL) -> AutotuneReport:
    """The pick's cost over a bench's shapes (analysis.ShapeVerdict: each with its MixCost where the pick was
    measured); `backends`: what the pick chose among."""
    shapes = [v.shape for v in verdicts]
    costs = [v.mix_cost for v in verdicts if v.mix_cost is not None]
    weighted = [c for c in costs if weights.of(c.shape) > 0]
    with_cost = {c.shape for c in costs}
    missing = {shape_class(s) for s in shapes if s not in with_cost and weights.of(s) > 0}  # classes cut short
    totals = [_total(name, [c for c in weighted if shape_class(c.shape) == name], weights, name not in missing)
              for name in CLASSES]
    totals = [t for t in totals if t.shapes]
    if len(totals) > 1:
        totals.append(_total("all", weighted, weights, not missing))
    return AutotuneReport(costs=tuple(costs), weights=weights, totals=tuple(totals),
                          unmeasured=tuple(s.text for s in shapes if s not in with_cost),
                          not_in_bench=weights.not_in(shapes), backends=backends)


# --------------------------------------------------------------------------------------------------------------
# The config


def _scope(scope: str) -> str:
    return "a process that runs both classes" if scope == "all" else f"a {scope}-only process ({condition(scope)})"


def pin_snippet(report: AutotuneReport) -> str:
    """A torch._inductor.config snippet that pins, per scope, the backend that took less time alone than Inductor's
    own pick, or "" where no backend did. Kernel time is what counts under CUDA graphs (mode="max-autotune"), the
    call time without them (bench's own calls, mode="max-autotune-no-cudagraphs"). Each pin is a commented line
    for the process it names: one setting per process, so the user picks the line that fits theirs."""
    if not any(t.pin or t.call_pin for t in report.totals):
        return ""
    lines = [
        f"# envcheck bench: Inductor's own pick among {report.backends} was slower than one backend alone "
        f"(weights: {report.weights.describe()}).",
        "# max_autotune_gemm_backends is one setting of a process, not one per shape: uncomment the line for the kind",
        "# of process you run (a class's line is for a process that runs only that class, such as a decode worker).",
        "import torch._inductor.config as inductor_config",
        "inductor_config.max_autotune = True",
    ]
    for total in report.totals:
        call = "" if total.call_cost is None else f" and {100 * total.call_cost:+.1f}% per call"
        lines.append(f"# {_scope(total.scope)}: the pick cost {100 * total.cost:+.1f}% of kernel time{call}")
        if not total.complete:
            lines.append("#   not every shape of it was measured (the budget ran out first): no backend is pinned")
            continue
        for pin, how in ((total.pin, "in kernel time (what counts in a CUDA graph)"),
                         (total.call_pin, "per call (no CUDA graphs: the host launch path counts)")):
            if pin is None:
                lines.append(f"#   {how}: no backend alone does better; keep autotuning")
                continue
            lines.append(f"#   {how}: {pin.backend} alone saves {100 * pin.fraction:.1f}%")
            lines.append(f"# inductor_config.max_autotune_gemm_backends = \"{pin.backend}\"")
    return "\n".join(lines)
