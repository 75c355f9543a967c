"""What bench's timing of a shape costs and decides, before and after issue 30 item 4, replayed on recorded H200 runs.

    python benchmarks/timing_replay.py [--runs DIR [DIR ...]] [--seeds N] [--base COMMIT] [--shapes]

--runs (default tests/data/bench/h200-s5, the torch 2.15.0 runs, and h200-8, torch 2.14.1):
folders with the saved `bench --json` results of the default llm set (bench-llm-{warm,cold}.json), their progress
lines (.err: each shape's `time I/N` phase) and, where kept, the child's log (.log: every row line whole).

A saved run keeps each row's figures (median, spread or quartiles, repetitions, mode, host and call times), not its
repetitions. So the replay runs the child's own timing code, today's (envcheck/inside: shape_timing.time_shape) and
the one of --base (default d60d9bf, main before item 4, read with git show: each row timed in turn, time_row),
against a simulated H200: a host clock and one device stream, where each call of a row costs the host the row's
recorded launch time (host_ms; a row without one, its first's) and the device a time drawn from a distribution with
the row's median and quartiles (normal on either side of the median), a flush 0.08 ms, the sleep kernel its cycles;
CUDA events read the stream, synchronize waits for it, time.perf_counter reads the host clock; do_bench is Triton's
algorithm (triton/testing.py, 3.9.0) on the same clock. A repeat row draws from its first's distribution moved by
the shape's recorded drift. The GPU's clock states are not simulated: a row's times are what it recorded, sustained
or not. The same seeds for both codes.

Printed per run: the timing phases as recorded, simulated with the code before (the model's check) and after, and
envcheck's own share recorded and after (the recorded share less the simulated saving); then per shape the verdict
(the profile's backend against the best of the others: wins, loses, same; and whether Inductor's pick was within
the noise of the best single backend) of each seed before and after, with the shapes where they differ, beside how
often two seeds of the code before differ (the decisions' own run-to-run noise).
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import random
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_time_budget import shape_starts, stack_label, time_phases  # noqa: E402
from envcheck.bench import analysis  # noqa: E402
from envcheck.bench.data import peak_for  # noqa: E402
from envcheck.bench.noise import NOISE_FLOOR  # noqa: E402
from envcheck.bench.result import NOISE_TARGET, TIME_CAP_S  # noqa: E402
from envcheck.bench.results import read_result  # noqa: E402

RUNS = (ROOT / "tests" / "data" / "bench" / "h200-s5", ROOT / "tests" / "data" / "bench" / "h200-8")
BASE = "d60d9bf"  # main before issue 30 item 4
CHILD = ("bench_child", "timing", "gemm", "library", "lookup", "protocol")
BACKEND = "NVGEMM"
CYCLES_PER_MS = 1980000.0
FLUSH_MS = 0.08  # device time of zeroing 256 MB (b2b rows of h200-8: estimate - median, median 0.086 ms)
FLUSH_HOST_MS = 0.02  # host time to launch the flush, and an event's record: the probe's host time per repetition
EVENT_HOST_MS = 0.01  # was 0.046 ms over call_time's host_ms on h200-8's rows (median)
SYNC_MS = 0.02  # the host's return from a synchronize
LAUNCH_MS = 0.01  # the sleep kernel's launch


class Clock:
    """The host's clock and the device stream, in ms."""

    def __init__(self):
        self.host, self.free = 0.0, 0.0

    def launch(self, host_ms, device_ms):
        self.host += host_ms
        self.free = max(self.host, self.free) + device_ms


class FakeTime:
    """time.perf_counter and time.time on the simulated host clock."""

    def __init__(self, clock):
        self.clock = clock

    def perf_counter(self):
        return self.clock.host / 1e3

    def time(self):
        return 1.8e9 + self.clock.host / 1e3


class FakeCuda:
    def __init__(self, clock):
        self.clock = clock
        clock_ = clock

        class Event:
            def __init__(self, enable_timing=False):
                self.at = None

            def record(self):
                clock_.launch(EVENT_HOST_MS, 0.0)
                self.at = clock_.free

            def elapsed_time(self, end):
                return end.at - self.at

            def synchronize(self):
                clock_.host = max(clock_.host, self.at) + SYNC_MS

            def query(self):
                return self.at <= clock_.host

        self.Event = Event

    def _sleep(self, cycles):
        self.clock.launch(LAUNCH_MS, cycles / CYCLES_PER_MS)

    def synchronize(self):
        self.clock.host = max(self.clock.host, self.clock.free) + SYNC_MS


class FakeTorch:
    def __init__(self, clock):
        self.cuda = FakeCuda(clock)


class Flush:
    def __init__(self, clock):
        self.clock = clock

    def zero_(self):
        self.clock.launch(FLUSH_HOST_MS, FLUSH_MS)
        return self


def fake_do_bench(torch, flush):
    """Triton 3.9.0's do_bench (triton/testing.py) on the simulated stream."""
    def do_bench(fn, warmup=25, rep=100, return_mode="mean"):
        fn()
        torch.cuda.synchronize()
        start, end = torch.cuda.Event(True), torch.cuda.Event(True)
        start.record()
        for _ in range(5):
            flush.zero_()
            fn()
        end.record()
        torch.cuda.synchronize()
        estimate = start.elapsed_time(end) / 5
        n_warmup, n_repeat = max(1, int(warmup / estimate)), max(1, int(rep / estimate))
        starts = [torch.cuda.Event(True) for _ in range(n_repeat)]
        ends = [torch.cuda.Event(True) for _ in range(n_repeat)]
        for _ in range(n_warmup):
            fn()
        for i in range(n_repeat):
            flush.zero_()
            starts[i].record()
            fn()
            ends[i].record()
        torch.cuda.synchronize()
        return statistics.median(s.elapsed_time(e) for s, e in zip(starts, ends))
    return do_bench


# --------------------------------------------------------------------------------------------------------------
# The recorded rows


def recorded_rows(json_path: Path) -> list[dict]:
    """The run's rows, each {shape, backend, repeat, median, q25, q75, host_ms}: the child's row lines where its log
    was kept beside the JSON (every figure), else the JSON's measurements with a repeat per shape made from the
    first backend and the shape's recorded drift."""
    log = json_path.with_suffix(".log")
    if log.is_file():
        lines = [json.loads(line.split(" ", 1)[1]) for line in log.read_text(encoding="utf-8").splitlines()
                 if line.startswith("ENVCHECK-BENCH-ROW ")]
        rows = [dict(shape=r["shape"], backend=r["backend"], repeat=r["repeat"], host_ms=r.get("host_ms"),
                     **{k: r["kernel_ms"][k] for k in ("median", "q25", "q75")})
                for r in lines if r.get("status") == "ok" and r.get("kernel_ms")]
    else:
        bench = json.loads(json_path.read_text(encoding="utf-8"))["bench"]
        drifts = {json.dumps(v["shape"], sort_keys=True): v.get("drift") or 0.0 for v in bench["verdicts"]}
        rows, firsts = [], {}
        for m in bench["measurements"]:
            if m["status"] not in ("ok", "refused") or not m["kernel_ms"]:
                continue
            half = (m["spread"] or 0.0) * m["kernel_ms"] / 2
            row = dict(shape=m["shape"], backend=m["backend"], repeat=False, host_ms=m.get("host_ms"),
                       median=m["kernel_ms"], q25=m["kernel_ms"] - half, q75=m["kernel_ms"] + half)
            rows.append(row)
            firsts.setdefault(json.dumps(m["shape"], sort_keys=True), row)
        for key, first in firsts.items():
            moved = 1 + drifts.get(key, 0.0)
            rows.append(dict(first, repeat=True, median=first["median"] * moved, q25=first["q25"] * moved,
                             q75=first["q75"] * moved))
    by_shape: dict = {}
    for row in rows:
        by_shape.setdefault(json.dumps(row["shape"], sort_keys=True), []).append(row)
    for shape_rows in by_shape.values():  # a row without a host time (a repeat): its first's
        host = next((r["host_ms"] for r in shape_rows if r["host_ms"]), 0.05)
        for row in shape_rows:
            row["host_ms"] = row["host_ms"] or host
    return rows


def shapes_of(rows: list[dict]) -> list[list[dict]]:
    order: dict = {}
    for row in rows:
        order.setdefault(json.dumps(row["shape"], sort_keys=True), []).append(row)
    return [sorted(group, key=lambda r: r["repeat"]) for group in order.values()]


def make_call(clock, row, seed):
    """A call of the row's compiled function: the host's launch, the device's time drawn for it."""
    rng = random.Random(f"{seed}/{row['shape']['m']}x{row['shape']['n']}x{row['shape']['k']}/{row['backend']}/"
                        f"{row['repeat']}")
    low, high = (row["median"] - row["q25"]) / 0.6745, (row["q75"] - row["median"]) / 0.6745
    floor = 0.3 * row["median"]

    def call():
        z = rng.gauss(0.0, 1.0)
        clock.launch(row["host_ms"], max(floor, row["median"] + z * (low if z < 0 else high)))
    return call


# --------------------------------------------------------------------------------------------------------------
# The two codes


def load_before(base: str):
    """The child of `base` (git show), as a package of its own."""
    folder = Path(tempfile.mkdtemp(prefix="timing-replay-")) / "before_inside"
    folder.mkdir()
    (folder / "__init__.py").write_text("", encoding="utf-8")
    for name in CHILD:
        text = subprocess.run(["git", "-C", str(ROOT), "show", f"{base}:envcheck/inside/{name}.py"],
                              check=True, capture_output=True, text=True).stdout
        (folder / f"{name}.py").write_text(text, encoding="utf-8")
    sys.path.insert(0, str(folder.parent))
    return importlib.import_module("before_inside.bench_child")


def simulate(child, rows_by_shape, seed, new: bool):
    """Each shape's rows timed by `child` on a fresh simulated device: (seconds per shape, the child's rows)."""
    clock = Clock()
    for module in (child, child.timing, getattr(child, "shape_timing", child)):
        module.time = FakeTime(clock)
    torch, flush = FakeTorch(clock), Flush(clock)
    ctx = {"flush": flush, "cycles_per_ms": CYCLES_PER_MS, "time_cap_s": TIME_CAP_S, "noise_target": NOISE_TARGET,
           "noise_floor": NOISE_FLOOR, "peak_tflops": peak_for("NVIDIA H200").for_dtype("bfloat16"),
           "budget_s": 600.0, "do_bench": fake_do_bench(torch, flush), "profile_kernels": False,
           "loaded_at": float("-inf"), "loaded_ms": 0.0}
    seconds, out = [], []
    for group in rows_by_shape:
        clock.host += 300.0  # the compiles between two shapes' timing: the GPU rests
        clock.free = clock.host
        rows = []
        for rec in group:
            row = dict.fromkeys(child.ROW_SCHEMA)
            row.update(shape=rec["shape"], backend=rec["backend"], backends=rec["backend"], repeat=rec["repeat"],
                       status="error")
            rows.append((row, make_call(clock, rec, seed)))
        began = clock.host
        if new:
            child.shape_timing.time_shape(torch, ctx, rows[0][0]["shape"], rows, lambda: False)
        else:
            for row, call in rows:  # the child of --base: each row timed in turn (its bench loop)
                child.time_row(torch, ctx, row, call)
        seconds.append((clock.host - began) / 1e3)
        out.extend(row for row, _ in rows)
    return seconds, out


def verdicts(rows):
    """{shape text: (verdict, Inductor's pick within the noise)} of the rows, by envcheck's analysis."""
    found, repeats = analysis.measurements(rows, peak_for("NVIDIA H200"), "bfloat16")
    return {v.shape.text: (v.verdict, v.mix_ok) for v in analysis.shape_verdicts(found, repeats, BACKEND)}


def word(outcome) -> str:
    verdict, mix_ok = outcome
    return verdict + ("" if mix_ok is None else "" if mix_ok else "/pick-slower")


# --------------------------------------------------------------------------------------------------------------


def replay(path: Path, before, after, seeds: int, show_shapes: bool) -> None:
    saved = read_result(path).result
    rows = recorded_rows(path)
    groups = shapes_of(rows)
    err = path.with_suffix(".err")
    starts, timed = (shape_starts(err), time_phases(err)) if err.is_file() else ([], [])
    recorded = sum(b - t for t, b in zip(timed, starts[1:])) if timed and len(timed) == len(starts) - 1 else None
    compiles = sum(m.compile_s or 0.0 for m in saved.measurements)
    own = saved.elapsed_s - compiles
    runs = {"before": [simulate(before, groups, seed, new=False) for seed in range(seeds)],
            "after": [simulate(after, groups, seed, new=True) for seed in range(seeds)]}
    total = {k: statistics.median(sum(s) for s, _ in v) for k, v in runs.items()}
    print(f"\n{path} ({stack_label('bench', saved)}, {len(groups)} shapes, {len(rows)} rows"
          f"{', every figure from the child log' if path.with_suffix('.log').is_file() else ''})")
    print(f"  timing phases: recorded {recorded if recorded is None else round(recorded, 1)} s; simulated before "
          f"{total['before']:.1f} s, after {total['after']:.1f} s (median of {seeds} seeds)")
    after_own = own - (total["before"] - total["after"])
    print(f"  envcheck's own share: recorded {own:.1f} s of {saved.elapsed_s:.0f} s ({own / saved.elapsed_s:.1%}); "
          f"after, replayed: {after_own:.1f} s of {saved.elapsed_s - own + after_own:.0f} s "
          f"({after_own / (saved.elapsed_s - own + after_own):.1%})")
    decided = {k: [verdicts(out) for _, out in v] for k, v in runs.items()}
    reasons: dict = {}
    for _, out in runs["after"]:
        for row in out:
            if row.get("kernel_ms"):
                reasons[row["kernel_ms"].get("stop")] = reasons.get(row["kernel_ms"].get("stop"), 0) + 1
    reps = {k: statistics.median(sum((r.get("kernel_ms") or {}).get("reps") or 0 for r in out) for _, out in v)
            for k, v in runs.items()}
    print(f"  repetitions per run: before {reps['before']:.0f}, after {reps['after']:.0f}; why rows stopped after "
          f"(all seeds): " + ", ".join(f"{k} {n}" for k, n in sorted(reasons.items(), key=str)))
    shapes = list(decided["before"][0])
    changed = [s for s in shapes if any(b[s] != a[s] for b, a in zip(decided["before"], decided["after"]))]
    noisy = [s for s in shapes if len({d[s] for d in decided["before"]}) > 1]
    pairs = sum(b[s] != a[s] for s in shapes for b, a in zip(decided["before"], decided["after"]))
    own_pairs = sum(x[s] != y[s] for s in shapes for x, y in zip(decided["before"], decided["before"][1:]))
    print(f"  decisions: {len(shapes)} shapes x {seeds} seeds; after differs from before with the same seed on "
          f"{pairs} (shape, seed) pairs, in {len(changed)} shapes; two seeds of the code before differ on {own_pairs} "
          f"pairs of {len(shapes) * (seeds - 1)}, in {len(noisy)} shapes")
    recorded_verdicts = {v.shape.text: (v.verdict, v.mix_ok) for v in saved.verdicts}
    for s in shapes if show_shapes else sorted(set(changed) | set(noisy), key=shapes.index):
        before_words = " ".join(word(d[s]) for d in decided["before"])
        after_words = " ".join(word(d[s]) for d in decided["after"])
        print(f"    {s:18s} recorded {word(recorded_verdicts.get(s, ('-', None))):18s} before {before_words:40s} "
              f"after {after_words}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=Path, nargs="+", default=list(RUNS))
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--base", default=BASE, help="the commit whose child is 'before' (default: %(default)s)")
    parser.add_argument("--shapes", action="store_true", help="every shape's decisions, not only those that differ")
    args = parser.parse_args(argv)
    before = load_before(args.base)
    after = importlib.import_module("envcheck.inside.bench_child")
    print(f"bench's timing replayed on a simulated H200: before = {args.base}'s child, after = this checkout's")
    for runs in args.runs:
        for kind in ("warm", "cold"):
            path = runs / f"bench-llm-{kind}.json"
            if path.is_file():
                replay(path, before, after, args.seeds, args.shapes)
    return 0


if __name__ == "__main__":
    sys.exit(main())
