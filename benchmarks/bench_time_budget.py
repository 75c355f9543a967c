"""Where `envcheck bench` spends its time, from what real runs left: per shape, per phase, per stack.

    python benchmarks/bench_time_budget.py [--runs DIR [DIR ...]] [--logs DIR] [--shapes]

--runs (default tests/data/bench/h200-6 and h200-8, before and after issue 23 item 5 cut envcheck's own share: h200-6
both stacks' llm runs, cold and warm, with the code of 2026-12-01 15:20; h200-8 the operators stack's with the code
of 23:10, CUTE_DSL_ARCH=sm_90a, the default nn.Linear layout, a shape's rows timed back to back), each folder holding
the saved `bench --json` results of the default llm set, NAME-llm-{cold,warm}.json (NAME rec: the recipe stack;
bench: the operators stack), with NAME-llm-{cold,warm}.err beside them where the progress lines were kept (they
carry the start of every shape: `envcheck: shape I/N LABEL +SECONDS`). --logs (default: the same folder): child
logs (*.log) that kept Inductor's autotuning lines (`SingleProcess AUTOTUNE benchmarking takes B seconds and P
seconds precompiling for C choices`) and the child's row lines, which split a compile into Inductor's benchmarking
of its choices (on both stacks it includes the CuteDSL kernels' JIT or load), their precompiling, and the rest.

The phases, per shape: compile = the first call of each compiled function (Dynamo, Inductor, autotuning, the
kernel's JIT: a row's compile_s); the rest of the shape's wall time is timing (the warm-up, the rounds up to the
time cap, do_bench, the call time) plus the reference GEMM and the reset between shapes. Where the progress lines
were not kept (cold runs), the per-shape rest is the warm run's (the same timing method on the same shapes), and the
total says how much that leaves unexplained. Figures, then the ratios that decide the plan, medians throughout.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
from collections import defaultdict
from pathlib import Path
from typing import Optional

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from envcheck.bench.result import NOISE_TARGET, TIME_CAP_S  # noqa: E402
from envcheck.bench.results import read_result  # noqa: E402
from envcheck.inside.stoprule import PRECISION  # noqa: E402
from envcheck.inside import library  # noqa: E402

RUNS = (ROOT / "tests" / "data" / "bench" / "h200-6", ROOT / "tests" / "data" / "bench" / "h200-8")
OWN_COLD = 0.10  # issue 23 item 5: envcheck's own share of a cold llm run at most 10%,
OWN_WARM_S = 15.0  # and of a warm one at most 15 s
STACKS = {"rec": "recipe", "bench": "operators"}  # NAME-llm-*.json: which stack; its versions are the run's own
_SHAPE = re.compile(r"^envcheck(?:-bench)?: (?:phase )?shape (\d+)/(\d+) .* \+([0-9.]+)$")
_TIME = re.compile(r"^envcheck(?:-bench)?: (?:phase )?time (\d+)/(\d+) \+([0-9.]+)$")
_PHASE = re.compile(r"^envcheck(?:-bench)?: (?:phase )?(\S+)(?: .*)? \+([0-9.]+)$")  # its first word
_END = re.compile(r"^envcheck(?:-bench)?: (?:phase )?done \+([0-9.]+)$")
_AUTOTUNE = re.compile(r"AUTOTUNE benchmarking takes ([0-9.]+) seconds and ([0-9.]+) seconds precompiling for (\d+)")
_ROW = "ENVCHECK-BENCH-ROW "
_COMPILED = "ENVCHECK-BENCH-COMPILED "  # after each compile (today's child); before it, the row line followed it
_LIBRARY_ROW = re.compile(r"^envcheck:   \S+ (?:cutlass_api|cutlass\.operators) \S*cluster(\d+)x(\d+)x\d+_tile(\d+)x(\d+)x\d+ "
                          r"ok ([0-9.]+) ms")
_ANCHORS = ((4096, 4096, 4096), (8192, 8192, 8192), (16, 4096, 4096))  # bench-library.txt's shapes, in its order


def shape_starts(path: Path) -> list[float]:
    """The start of each shape (seconds since the child started), then the end where the run got there."""
    starts, end = [], None
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        found = _SHAPE.match(line.strip())
        if found:
            starts.append(float(found.group(3)))
        elif _END.match(line.strip()):
            end = float(_END.match(line.strip()).group(1))
    return starts + ([end] if end is not None else [])


def stack_label(prefix: str, result) -> str:
    """The stack a run had, read from its own result: "operators, torch 2.15.0 (CUDA 13.2)"."""
    versions = dict(result.versions)
    cuda = versions.get("torch_cuda")
    return f"{STACKS[prefix]}, torch {versions.get('torch', 'unknown')}" + (f" (CUDA {cuda})" if cuda else "")


def time_phases(path: Path) -> list[float]:
    """The start of each shape's timing (`time I/N`, the child since issue 23 item 5), seconds since the child
    started."""
    found = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        timed = _TIME.match(line.strip())
        if timed:
            found.append(float(timed.group(3)))
    return found


def phase_length(path: Path, name: str) -> Optional[float]:
    """Seconds from the phase NAME to the next phase line (None: not in the progress lines)."""
    marks = [(m.group(1), float(m.group(2))) for m in map(_PHASE.match, (line.strip() for line in
             path.read_text(encoding="utf-8", errors="replace").splitlines())) if m]
    for (phase, at), (_, after) in zip(marks, marks[1:]):
        if phase == name:
            return after - at
    return None


def per_shape(result) -> list[dict]:
    """One entry per shape, in run order: its label, dims, each backend's compile_s, reps, and rows cut."""
    shapes, order = {}, []
    for m in result.measurements:
        key = (m.shape.m, m.shape.n, m.shape.k, m.shape.label)
        if key not in shapes:
            shapes[key] = {"shape": m.shape, "compile": {}, "skipped": 0, "warm": []}
            order.append(key)
        entry = shapes[key]
        if m.status == "skipped":
            entry["skipped"] += 1
        elif m.compile_s is not None:
            entry["compile"][m.backend] = m.compile_s
            entry["warm"].append(bool(m.warm))
    return [shapes[k] for k in order]


def autotune_split(logs: Path) -> dict:
    """{(log name, backend): [(benchmarking s, precompiling s, choices), ...]} from child logs: each AUTOTUNE
    summary belongs to the compile that ended next: its ENVCHECK-BENCH-COMPILED line (today's child), or the next row
    line (a child that timed each row right after its compile)."""
    found = defaultdict(list)
    for log in sorted(logs.glob("*.log")):
        pending = None
        for line in log.read_text(encoding="utf-8", errors="replace").splitlines():
            tuned = _AUTOTUNE.search(line)
            if tuned:
                pending = (float(tuned.group(1)), float(tuned.group(2)), int(tuned.group(3)))
                continue
            mark = _COMPILED if line.startswith(_COMPILED) else _ROW if line.startswith(_ROW) else None
            if mark is not None and pending is not None:
                found[(log.name, json.loads(line[len(mark):])["backend"])].append(pending)
                pending = None
    return found


def median(values) -> float:
    values = list(values)
    return statistics.median(values) if values else float("nan")


def report(runs: Path, logs: Path, show_shapes: bool) -> None:
    rest_warm = {}
    lines = []
    summary = []
    phases = []
    for prefix in STACKS:
        for kind in ("warm", "cold"):  # warm first: its per-shape rest estimates the cold run's
            path = runs / f"{prefix}-llm-{kind}.json"
            if not path.is_file():
                continue
            saved = read_result(path)
            result = saved.result
            stack = stack_label(prefix, result)
            shapes = per_shape(result)
            err = runs / f"{prefix}-llm-{kind}.err"
            starts = shape_starts(err) if err.is_file() else []
            measured = [s for s in shapes if s["compile"]]
            walls = [b - a for a, b in zip(starts, starts[1:])] if starts else []
            compiles = [sum(s["compile"].values()) for s in measured]
            timed = time_phases(err) if err.is_file() else []
            if walls and len(timed) == len(walls):  # the rest split: the timing phases, and the compile phases' setup
                timing = sum(b - t for t, b in zip(timed, starts[1:]))
                phases.append((stack, kind, timing, sum(t - a for a, t in zip(starts, timed)) - sum(compiles),
                               phase_length(err, "import-inductor")))
            if walls:
                rests = [w - c for w, c in zip(walls, compiles)]
                rest_warm[prefix] = rests
            else:
                rests = rest_warm.get(prefix, [])[: len(measured)]
            startup = starts[0] if starts else None
            cut = sum(s["skipped"] for s in shapes)
            by_backend = defaultdict(list)
            for s in measured:
                for backend, seconds in s["compile"].items():
                    by_backend[backend].append(seconds)
            total_compile = sum(compiles)
            summary.append((stack, kind, result.elapsed_s, result.budget_s, len(measured), len(shapes), cut,
                            median(walls) if walls else None, median(compiles), median(rests), total_compile,
                            sum(rests), startup, {b: median(v) for b, v in by_backend.items()},
                            {b: sum(v) for b, v in by_backend.items()}))
            if show_shapes:
                lines.append(f"\n{stack}, {kind} ({path.name}): seconds per shape")
                lines.append("  #  shape                                   m     n     k   wall  compile   rest  "
                             + "  ".join(f"{b:>7}" for b in sorted(by_backend)))
                for i, s in enumerate(measured):
                    wall = f"{walls[i]:6.1f}" if i < len(walls) else "     -"
                    rest = f"{rests[i]:6.1f}" if i < len(rests) else "     -"
                    sh = s["shape"]
                    lines.append(f"  {i + 1:2d} {sh.label[:36]:36s} {sh.m:5d} {sh.n:5d} {sh.k:5d} {wall} "
                                 f"{compiles[i]:7.1f} {rest}  "
                                 + "  ".join(f"{s['compile'].get(b, float('nan')):7.2f}" for b in sorted(by_backend)))
    print("Where bench's time goes: the default llm set (30 shapes x 4 backends + 1 repeat), H200")
    print(f"runs: {runs}\n")
    head = (f"{'stack':45s} {'run':4s} {'total':>6s} {'budget':>6s} {'shapes':>7s} {'cut':>4s} "
            f"{'wall/sh':>7s} {'comp/sh':>7s} {'rest/sh':>7s} {'compile':>7s} {'rest':>6s} {'start':>5s} "
            f"{'other':>6s}")
    print(head)
    for (stack, kind, total, budget, done, n, cut, wall, comp, rest, tcomp, trest, startup, _, _) in summary:
        other = total - tcomp - trest - (startup or 0)
        print(f"{stack:45s} {kind:4s} {total:6.0f} {budget:6.0f} {done:3d}/{n:<3d} {cut:4d} "
              f"{(wall if wall is not None else float('nan')):7.1f} {comp:7.1f} {rest:7.1f} {tcomp:7.0f} "
              f"{trest:6.0f} {(startup if startup is not None else float('nan')):5.1f} {other:6.0f}")
    print("\n(wall/sh, comp/sh, rest/sh: medians per measured shape; compile, rest: totals; start: the child's start "
          "to the first shape; other: total - compile - rest - start; cold rest: the warm run's per shape)")
    if phases:
        print("\nthe rest, where the progress lines mark each shape's timing: timing = the `time I/N` phases (kernel "
              "times, do_bench, call times); setup = the compile phases less the compiles (inputs, references, "
              "checks); Inductor's import: its own phase before the first shape (this child since issue 30)")
        for stack, kind, timing, setup, imported in phases:
            print(f"  {stack:45s} {kind:4s} timing {timing:5.1f} s, setup {setup:4.1f} s"
                  + ("" if imported is None else f", Inductor's import {imported:4.1f} s"))
    print("\ncompile per row by backend, median s (total s)")
    for (stack, kind, *_, med, tot) in summary:
        print(f"  {stack:45s} {kind:4s} " + "  ".join(f"{b} {med[b]:.2f} ({tot[b]:.0f})" for b in sorted(med)))
    print("\nenvcheck's own share: the run's total less Inductor's compiles (the user's process pays those too); "
          f"goal: at most {OWN_COLD:.0%} of a cold run, {OWN_WARM_S:g} s of a warm one")
    for (stack, kind, total, budget, done, n, cut, wall, comp, rest, tcomp, trest, startup, _, _) in summary:
        own = total - tcomp
        met = own <= (OWN_WARM_S if kind == "warm" else OWN_COLD * total)
        imported = next((p[4] for p in phases if p[:2] == (stack, kind) and p[4] is not None), None)
        print(f"  {stack:45s} {kind:4s} {own:5.1f} s of {total:5.0f} s ({own / total:5.1%}), "
              f"{own / max(done, 1):.2f} s per shape: {'met' if met else 'NOT met'}"
              + ("" if imported is None else f" (of which Inductor's import {imported:.1f} s, which the user's first "
                                             "torch.compile pays too)"))
    split = autotune_split(logs)
    if split:
        print(f"\nInductor's autotuning inside the compiles ({logs}): per log and backend, total (median per row)")
        for (log, backend), items in sorted(split.items()):
            bench_s = [i[0] for i in items]
            pre_s = [i[1] for i in items]
            choices = median(i[2] for i in items)
            print(f"  {log:22s} {backend:7s} {len(items):2d} rows: benchmarking {sum(bench_s):6.1f} s "
                  f"({median(bench_s):.2f}), precompiling {sum(pre_s):5.1f} s ({median(pre_s):.2f}), "
                  f"{choices:.0f} choices, {median(bench_s) / choices:.3f} s per choice benchmarked")
    timing_section(runs)
    library_section(runs / "bench-library.txt")
    for line in lines:
        print(line)


def timing_section(runs: Path) -> None:
    """The rows that ran to the time cap (spread over the noise target), what they got, and what a shorter cap
    leaves of the median's precision (standard error of a median: 1.2533 sigma / sqrt(n), sigma ~ IQR / 1.349)."""
    print(f"\ntiming: rows whose spread is over the noise target {NOISE_TARGET:g} (before issue 23 item 5 they ran to the "
          f"time cap, {TIME_CAP_S:g} s; since, they stop once the median is known within {PRECISION:.1%}, and since "
          "issue 30 also once every comparison with the shape's other rows is decided: inside/stoprule.py)")
    for prefix in STACKS:
        for kind in ("warm", "cold"):
            path = runs / f"{prefix}-llm-{kind}.json"
            if not path.is_file():
                continue
            result = read_result(path).result
            stack = stack_label(prefix, result)
            rows = [m for m in result.measurements if m.status == "ok" and m.spread is not None]
            capped = [m for m in rows if m.spread > NOISE_TARGET]
            if not capped:
                continue
            reps, spread = median(m.reps for m in capped), median(m.spread for m in capped)
            blocking = sum(m.mode == "blocking" for m in capped)

            def error(n):
                return 1.2533 * spread / 1.349 / n ** 0.5

            print(f"  {stack:45s} {kind:4s} {len(capped):3d} of {len(rows)} rows ({blocking} blocking), median "
                  f"{reps:.0f} reps, spread {spread:.1%}: median within {error(reps):.2%}")
            log = path.with_suffix(".log")
            stops = defaultdict(int)
            for line in log.read_text(encoding="utf-8", errors="replace").splitlines() if log.is_file() else ():
                if line.startswith(_ROW):
                    stops[(json.loads(line[len(_ROW):]).get("kernel_ms") or {}).get("stop")] += 1
            if any(stops):  # the child's log kept, of a child since issue 30: why each row's timing stopped
                print(f"  {'':45s} {kind:4s} why rows stopped ({log.name}): "
                      + ", ".join(f"{why} {count}" for why, count in sorted(stops.items(), key=str) if why))


def library_section(path: Path) -> None:
    """--library's candidates as nvMatmulHeuristics ranks them for an H200 (library.heuristic_order, the child's own
    ranking; it runs on the CPU), against what bench-library.txt measured: where the measured best ranks, and how
    much slower the best of the top K is."""
    if not path.is_file():
        return
    shapes, index = {}, -1
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        if _SHAPE.match(line.strip()):
            index += 1
            continue
        found = _LIBRARY_ROW.match(line)
        if found and index < len(_ANCHORS):
            cm, cn, tm, tn, ms = found.groups()
            shapes.setdefault(_ANCHORS[index], {})[(int(tm), int(tn), int(cm), int(cn))] = float(ms)
    print(f"\n--library: nvMatmulHeuristics' order (H200_SXM) against the measured sweep ({path.name})")
    try:
        orders = {dims: library.heuristic_order(list(measured), *dims, "bfloat16", gpu="H200_SXM")
                  for dims, measured in shapes.items()}
    except ImportError:
        print("  (nvMatmulHeuristics is not installed here: pip install nvidia-matmul-heuristics==0.1.0.27)")
        return
    for dims, measured in shapes.items():
        order = [key for key, _ in orders[dims]]
        best = min(measured, key=measured.get)
        where = order.index(best) + 1 if best in order else None
        tops = []
        for top_k in (1, 3, 5, 10):
            picked = [measured[key] for key in order[:top_k]]
            tops.append(f"top {top_k}: +{min(picked) / measured[best] - 1:.1%}" if picked else f"top {top_k}: -")
        print(f"  {'x'.join(map(str, dims)):15s} {len(measured):2d} measured, {len(order):2d} ranked; measured best "
              f"{best} ranks {where or 'not proposed'}; best of " + ", ".join(tops))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=Path, nargs="+", default=list(RUNS))
    parser.add_argument("--logs", type=Path, default=None, help="default: --runs")
    parser.add_argument("--shapes", action="store_true", help="also every shape's figures")
    args = parser.parse_args(argv)
    for index, runs in enumerate(args.runs):
        print("\n" + "=" * 118 + "\n" if index else "", end="")
        report(runs, args.logs or runs, args.shapes)
    return 0


if __name__ == "__main__":
    sys.exit(main())
