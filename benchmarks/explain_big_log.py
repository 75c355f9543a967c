"""How long `envcheck explain` takes on a big log, and how much memory it holds, measured as a user meets it.

    python benchmarks/explain_big_log.py [--mb 200] [--runs 3] [--keep DIR]

Writes a log of --mb megabytes (a training run's output: progress lines of about 120 characters with colour codes,
warnings, a few over-long lines of 1 MiB without a newline break, then a traceback whose last line is the DSL's
`ProxyKind` AttributeError), runs `envcheck explain LOG --json` on it --runs times, each as its own process, and
prints each run's wall time, the median, the rate in MB/s and the largest resident memory of a run (ru_maxrss).
Exits 1 if a run did not find the cause on the log's last line.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LAST = "AttributeError: module 'cutlass.cute.nvgpu.cpasync' has no attribute 'ProxyKind'\n"


def write_log(path: Path, megabytes: int) -> int:
    """The log, written in 1 MiB blocks; its number of lines."""
    target = megabytes * 1_000_000
    step = ("\x1b[32m[rank0]\x1b[0m step {n:>8} | loss 2.3{m:04d} | lr 3.0e-04 | tokens/s 41234.5 | "
            "mem 61.2 GiB | grad-norm 0.87\n")
    warning = "/usr/lib/python3.12/site-packages/torch/_inductor/select_algorithm.py:1234: UserWarning: slow\n"
    lines = 0
    written = 0
    with open(path, "w", encoding="utf-8") as log:
        n = 0
        while written < target - len(LAST):
            block = []
            for _ in range(8000):
                n += 1
                block.append(warning if n % 97 == 0 else step.format(n=n, m=n % 10000))
            if n % 400_000 < 8000:
                block.append("x" * (1 << 20) + "\n")  # an over-long line: searched in windows of 16 KiB
            text = "".join(block)
            log.write(text)
            written += len(text)
            lines += len(block)
        log.write("Traceback (most recent call last):\n  File \"train.py\", line 7, in <module>\n" + LAST)
    return lines + 3


def run_once(log: Path) -> dict:
    began = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "envcheck", "explain", str(log), "--json"], cwd=ROOT,
                          capture_output=True, text=True, check=False)
    wall = time.monotonic() - began
    try:
        shown = json.loads(done.stdout)
    except ValueError:
        shown = {"causes": [], "error": (done.stderr or done.stdout)[-300:]}
    first = (shown.get("causes") or [{}])[0]
    return {"wall_s": round(wall, 2), "exit": done.returncode, "cause": first.get("id"),
            "line": (first.get("evidence") or {}).get("line"), "lines_read": shown.get("lines_read")}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=200)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--keep", type=Path, default=None, help="write the log in this folder and keep it")
    args = parser.parse_args()
    folder = args.keep or Path(tempfile.mkdtemp(prefix="envcheck-explain-bench-"))
    folder.mkdir(parents=True, exist_ok=True)
    log = folder / f"big-{args.mb}mb.log"
    lines = write_log(log, args.mb)
    size = log.stat().st_size
    print(f"log: {log} ({size / 1e6:.0f} MB, {lines} lines, the cause on line {lines})")
    runs = []
    for index in range(args.runs):
        run = run_once(log)
        runs.append(run)
        print(f"  run {index + 1}: {run['wall_s']:.2f} s, exit {run['exit']}, cause {run['cause']} on line {run['line']}")
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    median = statistics.median(r["wall_s"] for r in runs)
    print(f"median {median:.2f} s ({size / 1e6 / median:.0f} MB/s); largest resident memory of a run {peak:.0f} MiB")
    if args.keep is None:
        log.unlink()
        folder.rmdir()
    found = all(r["cause"] == "dsl-too-new" and r["line"] == lines for r in runs)
    if not found:
        print("FAILED: a run did not find the cause on the last line", file=sys.stderr)
    return 0 if found else 1


if __name__ == "__main__":
    sys.exit(main())
