"""How long `envcheck smoke` takes, cold and warm, measured the way a user meets it: the whole command.

    python benchmarks/smoke_times.py [--python PATH] [--warm 2] [--cache-dir DIR] [--out times.json]

Runs `envcheck smoke --fresh --json` once (cold: envcheck's Inductor, Triton and CuTeDSL caches emptied), then
`envcheck smoke --json` --warm times (warm), each as its own process, and prints per run: the wall-clock time of the
command, the compile time the child measured (first call of the compiled GEMM), the child's whole life, the
status and the kernel. Exits 1 if a run did not pass or the median is over the goal (--goal-cold, --goal-warm:
60 s and 8 s on an H200).

It runs envcheck from this checkout (`python -m envcheck`), in the interpreter running this script, against the
target --python; with --cache-dir the caches go there instead of envcheck's default.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


# The same call as `envcheck smoke`, for a checkout whose CLI cannot start (it should; the table says which ran).
_DIRECT = (
    "import sys; from envcheck.commands.smoke import smoke_command; "
    "sys.exit(smoke_command(sys.argv[1], None, timeout=float(sys.argv[2]), fresh=sys.argv[3] == '1', as_json=True))"
)


def entry_point(env: dict) -> str:
    ok = subprocess.run([sys.executable, "-m", "envcheck", "smoke", "--help"], cwd=ROOT, env=env,
                        capture_output=True, check=False).returncode == 0
    return "cli" if ok else "function"


def run_once(python: str, fresh: bool, timeout: float, env: dict, entry: str = "cli") -> dict:
    if entry == "cli":
        command = [sys.executable, "-m", "envcheck", "smoke", "--json", "--python", python, "--timeout", str(timeout)]
        command += ["--fresh"] if fresh else []
    else:
        command = [sys.executable, "-c", _DIRECT, python, str(timeout), "1" if fresh else "0"]
    began = time.monotonic()
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    wall = time.monotonic() - began
    try:
        smoke = json.loads(done.stdout)["smoke"]
    except (ValueError, KeyError):
        smoke = {"status": "error", "summary": (done.stderr or done.stdout).strip()[-500:]}
    timings = smoke.get("timings") or {}
    return {
        "kind": "cold" if fresh else "warm",
        "entry": entry,
        "wall_s": round(wall, 2),
        "exit": done.returncode,
        "status": smoke.get("status"),
        "compile_s": timings.get("compile_s"),
        "child_s": timings.get("elapsed_s"),
        "run_s": timings.get("run_s"),
        "phases": timings.get("phases"),
        "warm_cache": (smoke.get("cache") or {}).get("warm"),
        "kernel": smoke.get("kernel"),
        "gpu": smoke.get("gpu"),
        "summary": smoke.get("summary"),
        "log": smoke.get("log"),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--python", default=sys.executable, help="the target interpreter")
    parser.add_argument("--warm", type=int, default=2, help="warm runs after the cold one")
    parser.add_argument("--cache-dir", default=None, help="envcheck's cache root for these runs")
    parser.add_argument("--timeout", type=float, default=300.0)
    parser.add_argument("--goal-cold", type=float, default=60.0)
    parser.add_argument("--goal-warm", type=float, default=8.0)
    parser.add_argument("--out", default=None, help="also write the runs as JSON here")
    args = parser.parse_args(argv)

    env = dict(os.environ)
    if args.cache_dir:
        env["ENVCHECK_CACHE_DIR"] = args.cache_dir
    entry = entry_point(env)
    if entry != "cli":
        print("note: `python -m envcheck smoke` does not start here; timing smoke_command() directly", file=sys.stderr)
    runs = [run_once(args.python, True, args.timeout, env, entry)]
    runs += [run_once(args.python, False, args.timeout, env, entry) for _ in range(args.warm)]

    print(f"{'run':5} {'wall s':>7} {'compile s':>9} {'child s':>8} {'run ms':>8}  status  kernel")
    for run in runs:
        run_ms = f"{run['run_s'] * 1e3:.3f}" if run["run_s"] else "-"
        print(f"{run['kind']:5} {run['wall_s']:7.2f} {run['compile_s'] or '-':>9} {run['child_s'] or '-':>8} "
              f"{run_ms:>8}  {run['status']:6}  {run['kernel'] or run['summary']}")
    cold = runs[0]["wall_s"]
    warm = statistics.median(r["wall_s"] for r in runs[1:]) if runs[1:] else None
    verdict = {
        "cold_wall_s": cold,
        "warm_wall_s": warm,
        "goal_cold_s": args.goal_cold,
        "goal_warm_s": args.goal_warm,
        "all_passed": all(r["status"] == "pass" for r in runs),
        "within_goals": cold <= args.goal_cold and (warm is None or warm <= args.goal_warm),
    }
    print(f"cold {cold:.1f} s (goal {args.goal_cold:g}), warm median {warm if warm is None else round(warm, 1)} s "
          f"(goal {args.goal_warm:g}): {'within goals' if verdict['within_goals'] else 'OVER GOAL'}")
    if args.out:
        Path(args.out).write_text(json.dumps({"runs": runs, "verdict": verdict}, indent=2), encoding="utf-8")
    return 0 if verdict["all_passed"] and verdict["within_goals"] else 1


if __name__ == "__main__":
    sys.exit(main())
