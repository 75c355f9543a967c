"""What a `bench --model` run ends in: the model-level verdict (whether bench's per-shape advice holds on the model,
and for what measured reason) and the whole run's value. Pure: no I/O.

The verdict: enabling the profile's backend with ATEN and TRITON (ATEN,TRITON,NVGEMM) against leaving it out
(ATEN,TRITON), per forward, counted beyond the noise (noise.py's rule: the spreads of both do_bench figures, the drift
of the first set timed again at the end, a 1% floor), beside how many of the compiled model's GEMMs each set ran on
the backend (Inductor's generated code: gemm.gemm_calls). Where ATEN,TRITON,<backend> runs none of them on the
backend, enabling it changes no GEMM kernel of the model: that is the reason the verdict gives, never the times
alone (which then differ only by Inductor's other picks). Otherwise the advice "enable" holds where the model is not
slower with the backend, "do not enable" where it is not faster.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from .analysis import Decision, config_backends
from .model_result import ModelGemm, ModelRow, ModelSpec, ModelTiming, Offered, Recording
from .noise import NOISE_FLOOR, differs

__all__ = ["ModelVerdict", "ModelBench", "model_verdict", "share_text"]


@dataclass(frozen=True)
class ModelVerdict:
    """Whether bench's per-shape advice holds on the model, and why."""

    holds: Optional[bool]  # None: not checked (a set failed, or bench decided nothing)
    text: str
    speedup: Optional[float] = None  # ATEN,TRITON's time over ATEN,TRITON,<backend>'s: above 1, the backend helps
    noise: Optional[float] = None
    served: Optional[int] = None  # the model's GEMMs ATEN,TRITON,<backend> ran on the backend (None: not known)
    gemms: Optional[int] = None  # of how many

    def to_dict(self) -> dict:
        return {"holds": self.holds, "text": self.text, "speedup": self.speedup, "noise": self.noise,
                "served": self.served, "gemms": self.gemms}


def share_text(row: ModelRow, backend: str) -> str:
    """"ATEN,TRITON,NVGEMM 0 of 5", "NVGEMM 5 of 5", "NVGEMM error: no-valid-choices on aten.addmm": how many of the
    compiled model's GEMMs a set ran on the backend, or why it has no figure."""
    served, total = row.served(backend), row.gemms
    if row.status not in ("ok", "wrong-result"):
        return f"{row.name} {row.status}" + (f": {row.cause_id}" if row.cause_id else "") + row.where
    return f"{row.name} {served} of {total}" if total is not None else f"{row.name} not known"


def model_verdict(timing: ModelTiming, decision: Optional[Decision], backend: str) -> ModelVerdict:
    """The per-shape advice (decision.enable) held against the model compiled per set (pure; the table in
    tests/test_bench_model_verdict.py walks every branch)."""
    shares = (f"; {backend}'s GEMMs per set: " + ", ".join(share_text(r, backend) for r in timing.rows)
              if timing.rows else "")
    if decision is None or not (decision.wins or decision.loses or decision.same):
        return ModelVerdict(None, "not checked on the model: bench made no per-shape decision" + shares)
    without_name, with_name = config_backends(backend, False), config_backends(backend, True)
    without, with_it = timing.row(without_name), timing.row(with_name)
    missing = [r.name if r is not None else name for r, name in ((without, without_name), (with_it, with_name))
               if r is None or not r.trusted]
    if missing:
        reasons = "; ".join(f"{r.name}: {r.failure}" for r in (without, with_it) if r is not None and not r.trusted)
        return ModelVerdict(None, f"not checked on the model: {', '.join(missing)} not timed"
                            + (f" ({reasons})" if reasons else "") + shares)
    speedup = without.ms / with_it.ms
    margin = max(NOISE_FLOOR, *(s for s in (without.spread, with_it.spread, timing.drift) if s is not None))
    moved = differs(speedup, margin)
    figures = (f"{without.ms:.4g} ms per forward with {without_name}, {with_it.ms:.4g} ms with {with_name}; "
               f"noise {100 * margin:.1f}%")
    advice = f"enable {backend}" if decision.enable else f"do not enable {backend}"
    served, total = with_it.served(backend), with_it.gemms
    if served == 0 and total is not None:
        holds = not decision.enable
        apart = {0: "", 1: f"; the {speedup:.2f}x it runs faster comes from Inductor's other picks",
                 -1: f"; the {1 / speedup:.2f}x it runs slower comes from Inductor's other picks"}[moved]
        text = (f"the per-shape advice ({advice}) {'holds' if holds else 'does not hold'} on the model: with "
                f"{with_name} Inductor ran none of its {total} GEMMs on {backend} (0 of {total}), so enabling "
                f"{backend} changes no GEMM kernel of this model ({figures}{apart})")
        return ModelVerdict(holds, text + shares, speedup, margin, served, total)
    said = {1: f"{speedup:.2f}x as fast with {backend}", -1: f"{1 / speedup:.2f}x slower with {backend}",
            0: f"the same with and without {backend} ({speedup:.3f}x)"}[moved]
    share = (f"{backend} ran {served} of its {total} GEMMs" + (" (all of them)" if served == total else "")
             + f" with {with_name}" if total is not None else
             f"how many of its GEMMs {backend} ran with {with_name} is not known (no generated code read)")
    holds = moved >= 0 if decision.enable else moved <= 0
    text = (f"the per-shape advice ({advice}) {'holds' if holds else 'does not hold'} on the model: {share}, and it "
            f"runs {said} ({figures})")
    return ModelVerdict(holds, text + shares, speedup, margin, served, total)


@dataclass(frozen=True)
class ModelBench:
    """A whole `bench --model` run: the recording, what the backend was offered for each GEMM bench timed, the model
    timed, the verdict."""

    spec: ModelSpec
    recording: Recording
    skipped: tuple[tuple[ModelGemm, str], ...] = ()  # recorded, not benched, and why
    timing: Optional[ModelTiming] = None
    verdict: Optional[ModelVerdict] = None
    offered: tuple[tuple[ModelGemm, Offered], ...] = ()  # per GEMM benched: the backend's choices
    backend: str = ""

    def to_dict(self) -> dict:
        return {"file": self.spec.path, "function": self.spec.function, "recording": self.recording.to_dict(),
                "not_benched": [{"gemm": g.to_dict(), "why": why} for g, why in self.skipped],
                "offered": [{"gemm": g.to_dict(), **o.to_dict(), "text": o.text(self.backend)}
                            for g, o in self.offered],
                "timing": None if self.timing is None else self.timing.to_dict(),
                "verdict": None if self.verdict is None else self.verdict.to_dict()}
