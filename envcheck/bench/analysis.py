"""From the bench child's rows to trusted figures, winners and a decision. Pure: no I/O, tested with tables and
with real captured H200 output.

1. Each row becomes a Measurement. A figure is refused, never reported as a win, when it is above the GPU's dense
   peak (a broken measurement), when the result was wrong, or when NVML saw another process on the GPU while it
   was timed.
2. Each shape gets its noise (noise.py, the one rule): the largest of the spreads ((q75 - q25) / median) of the
   two figures compared, the drift between two measurements of the same compiled function taken apart in time (the
   child re-measures its first backend after the others), how far triton.testing.do_bench on the same function
   read from the kernel time where it times the same thing (the GPU the bottleneck: calls back to back), and a 1%
   floor (the resolution of CUDA events on microsecond kernels).
3. The profile's backend wins a shape when it is faster than the best of the others by more than that noise, in
   kernel time and not slower per call (host overhead counts: these calls are not in a CUDA graph); it loses when
   slower by more than the noise; otherwise the shape is "same".
4. The decision: enable when it wins somewhere and loses nowhere; when it wins on some shapes and loses on others,
   enable only if Inductor's own pick among all backends ("mix") was never slower than the best single backend
   beyond the noise, per kernel or per call (autotune.py: what that pick costs); never when it computed a wrong
   result.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Mapping, Optional, Sequence

from ..judge.target import snippet_lines
from ..model.candidates import GemmCandidates, lost_of, lost_text
from ..runner import warm_compile
from .autotune import MIX, MixCost, mix_cost
from .data import Peak
from .noise import NOISE_FLOOR, call_noise, differs, noise
from ..inside.gemm import FP8
from .shapes import Shape, shape_of
from .gpustate import foreign, gpu_samples, gpu_state, in_window
from .watch import Sample

__all__ = [
    "Measurement",
    "ShapeVerdict",
    "Decision",
    "NOISE_FLOOR",
    "measurements",
    "shape_verdicts",
    "decide",
    "config_snippet",
    "config_backends",
    "best_per_backend",
    "shape_candidates",
]


@dataclass(frozen=True)
class Measurement:
    """One backend on one shape, as measured and judged."""

    shape: Shape
    backend: str
    status: str  # "ok", "refused", "wrong-result", "error", "skipped"
    reason: str = ""
    kernel_ms: Optional[float] = None  # median device time
    spread: Optional[float] = None  # (q75 - q25) / median
    reps: Optional[int] = None
    tflops: Optional[float] = None
    pct_peak: Optional[float] = None
    call_ms: Optional[float] = None
    call_spread: Optional[float] = None  # (max - min) / median of call_ms over its rounds
    host_ms: Optional[float] = None
    do_bench_ms: Optional[float] = None
    max_error: Optional[float] = None
    compile_s: Optional[float] = None
    warm: Optional[bool] = None
    choice: Optional[str] = None
    kernel: Optional[str] = None
    device_kernels: tuple[str, ...] = ()
    gaps: bool = False  # the host fell behind the blocking kernel: launch gaps may be in kernel_ms
    mode: Optional[str] = None  # "back-to-back" (the host kept ahead) or "blocking" (behind a sleep kernel)
    gpu: dict = field(default_factory=dict, compare=False)  # NVML during the timing: clocks, power, throttle
    # The NVGEMM candidates of each GEMM this row's compile autotuned, read from the child's log (causes/candidates.py)
    candidates: tuple[GemmCandidates, ...] = field(default=(), compare=False)

    @property
    def trusted(self) -> bool:
        return self.status == "ok"

    @property
    def do_bench_gap(self) -> Optional[float]:
        """|do_bench / kernel time - 1| where both time the device: calls back to back. None where the host is the
        slower one: do_bench then times the launch path (that is call_ms's job), not the kernel."""
        if self.mode != "back-to-back" or not self.kernel_ms or not self.do_bench_ms:
            return None
        return abs(self.do_bench_ms / self.kernel_ms - 1)

    def to_dict(self) -> dict:
        return {
            "shape": self.shape.to_dict(), "backend": self.backend, "status": self.status, "reason": self.reason,
            "kernel_ms": self.kernel_ms, "spread": self.spread, "reps": self.reps, "tflops": self.tflops,
            "pct_peak": self.pct_peak, "call_ms": self.call_ms, "call_spread": self.call_spread, "host_ms": self.host_ms,
            "do_bench_ms": self.do_bench_ms, "do_bench_gap": self.do_bench_gap, "max_error": self.max_error, "compile_s": self.compile_s,
            "warm": self.warm, "choice": self.choice, "kernel": self.kernel,
            "device_kernels": list(self.device_kernels), "gaps": self.gaps, "mode": self.mode, "gpu": self.gpu,
            "candidates": [g.to_dict() for g in self.candidates],
        }


@dataclass(frozen=True)
class ShapeVerdict:
    """The profile's backend against the best of the others on one shape."""

    shape: Shape
    verdict: str  # "wins", "loses", "same", "failed", "refused", "not measured"
    noise: float
    fastest: Optional[str] = None  # the fastest trusted single backend by kernel time
    baseline: Optional[str] = None  # the best of the others
    speedup: Optional[float] = None  # baseline kernel time / the backend's kernel time
    call_speedup: Optional[float] = None  # the same per call through the compiled function
    mix_choice: Optional[str] = None  # what Inductor picked among all backends
    mix_cost: Optional[MixCost] = None  # that pick against each single backend (a trusted mix only)
    drift: Optional[float] = None  # run-to-run drift of the repeated measurement (in the noise)
    note: str = ""
    # The profile's backend's candidates on this shape, as the first compile that autotuned them saw them (the mix's);
    # () where none was autotuned in this run (a warm run)
    candidates: tuple[GemmCandidates, ...] = ()

    @property
    def mix_ok(self) -> Optional[bool]:
        """The mix was not slower than the best single backend beyond noise, per kernel or per call."""
        return None if self.mix_cost is None else self.mix_cost.ok

    def to_dict(self) -> dict:
        return {"shape": self.shape.to_dict(), "verdict": self.verdict, "noise": self.noise, "drift": self.drift,
                "fastest": self.fastest, "baseline": self.baseline, "speedup": self.speedup,
                "call_speedup": self.call_speedup, "mix_choice": self.mix_choice, "mix_ok": self.mix_ok,
                "mix_cost": None if self.mix_cost is None else self.mix_cost.to_dict(), "note": self.note,
                "candidates": [g.to_dict() for g in self.candidates], "lost": lost_text(self.candidates)}


@dataclass(frozen=True)
class Decision:
    backend: str
    enable: bool
    text: str
    wins: tuple[str, ...] = ()
    loses: tuple[str, ...] = ()
    same: tuple[str, ...] = ()
    failed: tuple[str, ...] = ()
    snippet: str = ""
    lost: Optional[str] = None  # "14 of 37 NVGEMM candidates failed to compile: ...": measured without them
    lost_causes: tuple[str, ...] = ()  # their cause ids

    def to_dict(self) -> dict:
        return {"backend": self.backend, "enable": self.enable, "text": self.text, "wins": list(self.wins),
                "loses": list(self.loses), "same": list(self.same), "failed": list(self.failed),
                "snippet": self.snippet, "lost_candidates": None if self.lost is None else {
                    "text": self.lost, "causes": list(self.lost_causes)}}


# --------------------------------------------------------------------------------------------------------------
# Rows -> measurements


def measurements(
    rows: Iterable[dict], peak: Optional[Peak], dtype: str, samples: Sequence[Sample] = (), uuid: Optional[str] = None,
    slack: float = 0.25, candidates: Sequence[tuple[GemmCandidates, ...]] = (),
) -> tuple[list[Measurement], dict[tuple[Shape, str], float]]:
    """(one Measurement per first-time row, {(shape, backend): kernel ms of the repeat}) from the child's rows;
    candidates[i]: the NVGEMM candidates the compile of rows[i] autotuned."""
    def peak_of(shape: Shape) -> Optional[float]:  # fp8's peak for _scaled_mm, the run's dtype's for the rest
        return peak.for_dtype(FP8 if shape.op == "_scaled_mm" else dtype) if peak else None

    mine = gpu_samples(samples, uuid)
    found, repeats = [], {}
    for index, row in enumerate(rows):
        raw = row.get("shape") or {}
        shape = shape_of(raw)
        timing = row.get("kernel_ms") or {}
        median = timing.get("median")
        if row.get("repeat"):
            if row.get("status") == "ok" and median:
                repeats[(shape, row["backend"])] = float(median)
            continue
        warm = warm_compile(row.get("cache"))
        window = in_window(mine, row.get("window"), slack)
        tflops = shape.flops / (median * 1e-3) / 1e12 if median else None
        peak_tflops = peak_of(shape)
        status, reason = str(row.get("status") or "error"), str(row.get("reason") or "")
        if status == "ok":
            others = foreign(window)
            if peak_tflops is not None and tflops is not None and tflops > peak_tflops:
                status, reason = "refused", (
                    f"{tflops:.1f} TF/s is above this GPU's dense peak of {peak_tflops:g} TF/s: the measurement is "
                    "broken, not fast")
            elif others:
                status, reason = "refused", (
                    f"another process used the GPU while this was timed (pid {', '.join(map(str, others))})")
        found.append(Measurement(
            shape=shape, backend=str(row.get("backend")), status=status, reason=reason,
            kernel_ms=median, spread=timing.get("spread"), reps=timing.get("reps"), tflops=tflops,
            pct_peak=100.0 * tflops / peak_tflops if tflops is not None and peak_tflops else None,
            call_ms=row.get("call_ms"), call_spread=row.get("call_spread"), host_ms=row.get("host_ms"),
            do_bench_ms=row.get("do_bench_ms"),
            max_error=row.get("max_error"), compile_s=row.get("compile_s"), warm=warm, choice=row.get("choice"),
            kernel=row.get("kernel"), device_kernels=tuple(row.get("device_kernels") or ()),
            gaps=bool(timing.get("gaps")), mode=timing.get("mode"), gpu=gpu_state(window),
            candidates=tuple(candidates[index]) if index < len(candidates) else (),
        ))
    return found, repeats


def shape_candidates(by_backend: Mapping[str, Measurement], backend: str) -> tuple[GemmCandidates, ...]:
    """The backend's candidates on one shape: those of the first compile that autotuned them with a table (the mix
    compiles first and fills the autotune cache; then the backend alone), else the failures no table followed (every
    candidate lost). A later compile that tries the failed ones again (they are not in the cache) counts no more."""
    rows = [by_backend[name] for name in (MIX, backend) if name in by_backend]
    for row in rows:
        tabled = tuple(g for g in row.candidates if g.op)
        if tabled:
            return tabled
    untabled = [row.candidates for row in rows if row.candidates]
    return max(untabled, key=lambda gemms: sum(g.failed for g in gemms)) if untabled else ()


# --------------------------------------------------------------------------------------------------------------
# Measurements -> verdicts -> decision


def _drift(shape: Shape, by_backend: dict[str, Measurement], repeats: dict[tuple[Shape, str], float]) -> Optional[float]:
    drifts = []
    for (rshape, backend), again in repeats.items():
        first = by_backend.get(backend)
        if rshape == shape and first is not None and first.kernel_ms:
            drifts.append(abs(again - first.kernel_ms) / first.kernel_ms)
    return max(drifts) if drifts else None


def best_per_backend(found: Sequence[Measurement]) -> dict[str, Measurement]:
    """One measurement per backend: the fastest trusted one where a backend has several (a library's candidate
    kernels), else its first."""
    best: dict[str, Measurement] = {}
    for m in found:
        held = best.get(m.backend)
        if held is None or (m.trusted and m.kernel_ms and (not held.trusted or m.kernel_ms < held.kernel_ms)):
            best[m.backend] = m
    return best


def shape_verdicts(found: Sequence[Measurement], repeats: dict[tuple[Shape, str], float], backend: str,
                   drifts: Optional[Mapping[Shape, float]] = None) -> list[ShapeVerdict]:
    """One verdict per shape; `drifts`: drift known per shape where its repeat is not among the rows (a saved run)."""
    drifts = drifts or {}
    shapes: list[Shape] = []
    for m in found:
        if m.shape not in shapes:
            shapes.append(m.shape)
    verdicts = []
    for shape in shapes:
        by_backend = best_per_backend([m for m in found if m.shape == shape])
        drift = _drift(shape, by_backend, repeats)
        if shape in drifts:
            drift = max(drift or 0.0, drifts[shape])
        singles = {name: m for name, m in by_backend.items() if name != MIX and m.trusted and m.kernel_ms}
        fastest = min(singles, key=lambda name: singles[name].kernel_ms) if singles else None
        others = {name: m for name, m in singles.items() if name != backend}
        baseline = min(others, key=lambda name: others[name].kernel_ms) if others else None
        mine = by_backend.get(backend)
        base = others.get(baseline) if baseline else None
        margin = noise(mine if mine is not None and mine.trusted else None, base, known=(drift,))
        mix = by_backend.get(MIX)
        mix_choice = mix.choice if mix is not None and mix.status in ("ok", "refused") else None
        cost = mix_cost(shape, mix, singles, drift) if mix is not None and mix.trusted and mix.kernel_ms and singles else None
        common = dict(shape=shape, noise=margin, fastest=fastest, baseline=baseline, mix_choice=mix_choice,
                      mix_cost=cost, drift=drift, candidates=shape_candidates(by_backend, backend))
        if mine is None or mine.status == "skipped":
            verdicts.append(ShapeVerdict(verdict="not measured", note=mine.reason if mine else "", **common))
        elif mine.status in ("wrong-result", "error"):
            verdicts.append(ShapeVerdict(verdict="failed", note=mine.reason, **common))
        elif mine.status == "refused":
            verdicts.append(ShapeVerdict(verdict="refused", note=mine.reason, **common))
        elif base is None:
            verdicts.append(ShapeVerdict(verdict="not measured", note="no other backend measured to compare with", **common))
        else:
            speedup = base.kernel_ms / mine.kernel_ms
            call_speedup = base.call_ms / mine.call_ms if base.call_ms and mine.call_ms else None
            host_slower = call_speedup is not None and differs(call_speedup, call_noise(margin, mine, base)) < 0
            if differs(speedup, margin) > 0 and not host_slower:
                verdict, note = "wins", ""
            elif differs(speedup, margin) > 0:
                verdict, note = "loses", (
                    f"its kernel is {speedup:.2f}x faster, but each call is {1 / call_speedup:.2f}x slower: host overhead")
            elif differs(speedup, margin) < 0:
                verdict, note = "loses", ""
            else:
                verdict, note = "same", ""
            verdicts.append(ShapeVerdict(verdict=verdict, speedup=speedup, call_speedup=call_speedup, note=note, **common))
    return verdicts


def config_backends(backend: str, enable: bool) -> str:
    """The max_autotune_gemm_backends the decision recommends."""
    return "ATEN,TRITON," + backend if enable else "ATEN,TRITON"


def config_snippet(backend: str, enable: bool, why: str, environment: tuple[tuple[str, str], ...] = ()) -> str:
    """The torch._inductor.config lines to paste; with `environment` (the variables this GPU's process must set, as
    judge.target.needed_environment says) and the backend enabled, the lines that set them first."""
    backends = config_backends(backend, enable)
    comment = f"# envcheck bench: {why}"
    setting = tuple(line for name, value in environment for line in snippet_lines(name, value)) if enable else ()
    return "\n".join((
        comment,
        *setting,
        "import torch._inductor.config as inductor_config",
        "inductor_config.max_autotune = True  # or torch.compile(mode=\"max-autotune-no-cudagraphs\")",
        f"inductor_config.max_autotune_gemm_backends = \"{backends}\"",
    ))


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" + ("" if number == 1 else "s")


def decide(verdicts: Sequence[ShapeVerdict], found: Sequence[Measurement], backend: str, gpu: str,
           library: bool = False, environment: tuple[tuple[str, str], ...] = ()) -> Decision:
    """Whether to enable the backend on this GPU; with library=True (the library called directly, best kernel per
    shape against cuBLAS), what the library itself can give, with no Inductor snippet."""
    def shapes(*kinds: str) -> tuple[str, ...]:
        return tuple(v.shape.described for v in verdicts if v.verdict in kinds)

    wins, loses, same = shapes("wins"), shapes("loses"), shapes("same")
    failed = shapes("failed", "refused")
    wrong = [m for m in found if m.backend in (backend, MIX) and m.status == "wrong-result"]
    measured = wins + loses + same
    mix_bad = [v for v in verdicts if v.mix_ok is False]
    if library:
        text = (f"{backend} called directly on {gpu}, its best kernel per shape against cuBLAS: faster on "
                f"{len(wins)}, slower on {len(loses)}, the same on {len(same)} of {_count(len(measured), 'shape')}")
        if wrong:
            text += f"; wrong results from {_count(len({m.kernel for m in wrong}), 'kernel')}"
        if failed:
            text += f"; no working kernel on {len(failed)}"
        return Decision(backend=backend, enable=bool(wins) and not loses, text=text, wins=wins, loses=loses,
                        same=same, failed=failed, snippet="")
    if wrong:
        enable, text = False, (f"do not enable {backend} on {gpu}: it computed a wrong result on "
                               f"{', '.join(sorted({m.shape.text for m in wrong}))}")
    elif not measured:
        enable, text = False, f"no decision for {backend} on {gpu}: no shape was measured against another backend"
    elif not wins:
        enable, text = False, (f"do not enable {backend} on {gpu}: it is faster on none of the "
                               f"{_count(len(measured), 'shape')} measured beyond the noise (loses on {len(loses)}, "
                               f"same on {len(same)})")
    elif not loses:
        enable, text = True, (f"enable {backend} on {gpu}: it wins on {len(wins)} of "
                              f"{_count(len(measured), 'shape')} and loses on none")
    elif mix_bad:
        enable, text = False, (f"do not enable {backend} on {gpu}: it wins on {_count(len(wins), 'shape')} but "
                               f"loses on {len(loses)}, and Inductor's autotuning among all backends picked a slower kernel on "
                               f"{', '.join(v.shape.text for v in mix_bad)}")
    else:
        enable, text = True, (f"enable {backend} on {gpu} together with ATEN and TRITON: it wins on "
                              f"{_count(len(wins), 'shape')}, loses on {len(loses)}, and Inductor's autotuning picked well on every shape")
    if failed:
        text += f"; it failed or was refused on {len(failed)}"
    gemms = tuple(g for v in verdicts for g in v.candidates)
    lost = lost_text(gemms)
    if lost:
        text += f"; {lost}, so the verdict was measured without them"
    return Decision(backend=backend, enable=enable, text=text, wins=wins, loses=loses, same=same, failed=failed,
                    snippet=config_snippet(backend, enable, text, environment), lost=lost,
                    lost_causes=tuple(dict.fromkeys(item.cause_id for item in lost_of(gemms))))
