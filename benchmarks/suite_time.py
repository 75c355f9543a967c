"""The README's test command (`python3 -m pytest`), timed with each number of pytest-xdist workers asked for.

    python benchmarks/suite_time.py [--workers 2,4] [--rounds 1] [-- PYTEST ARGS...]

Runs the suite from the repository's root as the README runs it, once per worker count and round (`-n N` after the
addopts of pyproject.toml, so N replaces its own; `-n 0` is one process), and prints per worker count the median wall
time, the CPU time the run and its children used (user + sys: what the machine had to give, whatever else ran on
it), the outcome pytest printed last, and the load average before each run. On a shared machine the wall time grows
with the others' load while the CPU time stays; on an idle one the wall time is at least CPU / cores.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run(workers: int, extra: list[str]) -> tuple[float, float, str, float]:
    """(wall s, user+sys s of the children, pytest's last line, the 1-minute load average before)."""
    load = os.getloadavg()[0]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", str(workers), *extra],
                          cwd=ROOT, capture_output=True, text=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    last = (done.stdout.strip().splitlines() or ["(no output)"])[-1].strip("= ")
    return wall, cpu, last, load


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", default="2,4", help="worker counts to compare, comma-separated (0: one process)")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("pytest_args", nargs="*", help="more pytest arguments, after --")
    args = parser.parse_args()
    counts = [int(n) for n in args.workers.split(",")]
    results: dict[int, list[tuple[float, float, str, float]]] = {n: [] for n in counts}
    for _ in range(args.rounds):
        for n in counts:  # alternating, so that a change of the machine's load hits each count alike
            results[n].append(run(n, args.pytest_args))
    print(f"{os.cpu_count()} CPUs; {args.rounds} round(s); python -m pytest -n N {' '.join(args.pytest_args)}")
    print(f"{'workers':>7} {'wall s':>8} {'cpu s':>8} {'cpu/wall':>8} {'load before':>11}  outcome")
    for n in counts:
        wall = statistics.median(r[0] for r in results[n])
        cpu = statistics.median(r[1] for r in results[n])
        load = ", ".join(f"{r[3]:.1f}" for r in results[n])
        print(f"{n:>7} {wall:>8.1f} {cpu:>8.1f} {cpu / wall:>8.2f} {load:>11}  {results[n][-1][2]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
