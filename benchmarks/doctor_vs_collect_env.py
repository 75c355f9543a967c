"""envcheck doctor --json against `python -m torch.utils.collect_env`, on the same interpreter, in one run.

    python benchmarks/doctor_vs_collect_env.py --python /path/to/python-with-torch [--rounds 7]

Both commands run as a user would run them, alternately, so that machine noise hits both alike. Prints each
command's median wall time and the ratio (goal: doctor <= 1/10 of collect_env), the median time each of doctor's
gatherers took to answer (from its JSON), and the typer in use. Also checks that doctor's run imported no torch,
cutlass or triton in envcheck's own process, and prints how much of its modules' import time is envcheck's, typer's
and pydantic's (typer 0.29 converts options through pydantic; envcheck/optionvalues.py converts envcheck's own, so
that pydantic's share is 0: benchmarks/startup_options.py measures what that and each other start-up option is worth).

envcheck's own modules are byte-compiled first, as `pip install` compiles them: run from a source tree where
PYTHONDONTWRITEBYTECODE is set, every run would otherwise compile them again, which no installed envcheck does.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import statistics
import subprocess
import sys
import time


def timed(command: list[str], env: dict) -> tuple[float, subprocess.CompletedProcess]:
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    return time.perf_counter() - started, done


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", required=True, help="an interpreter with torch installed")
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    env = dict(os.environ)
    doctor = [sys.executable, "-m", "envcheck", "doctor", "--json", "--python", args.python]
    collect = [args.python, "-m", "torch.utils.collect_env"]
    check = subprocess.run([args.python, "-c", "import torch; print(torch.__version__)"], capture_output=True, text=True)
    if check.returncode != 0:
        print(f"{args.python} has no importable torch: {check.stderr.strip()[-200:]}", file=sys.stderr)
        return 2
    import envcheck

    compileall.compile_dir(os.path.dirname(envcheck.__file__), quiet=1)  # what `pip install` does
    timed(doctor, env), timed(collect, env)  # warm the file cache for both
    doctor_times, collect_times = [], []
    gatherers: dict[str, list[float]] = {}
    for _ in range(args.rounds):
        seconds, done = timed(doctor, env)
        try:
            report = json.loads(done.stdout)  # a crash that exits 1 must not count as a doctor run
        except ValueError:
            print(f"envcheck doctor did not print its report (exit {done.returncode}):\n{done.stderr}", file=sys.stderr)
            return 3
        for name, at in report["facts"].get("timings") or ():
            gatherers.setdefault(name, []).append(at)
        doctor_times.append(seconds)
        seconds, _ = timed(collect, env)
        collect_times.append(seconds)
    imports = subprocess.run([sys.executable, "-X", "importtime", *doctor[1:]], capture_output=True, text=True, env=env).stderr
    heavy = sorted({line.split("|")[-1].strip() for line in imports.splitlines()
                    if line.startswith("import time:") and line.split("|")[-1].strip().split(".")[0] in ("torch", "cutlass", "triton")})
    d, c = statistics.median(doctor_times), statistics.median(collect_times)
    print(f"target: {args.python} (torch {check.stdout.strip()}); {args.rounds} rounds, alternating")
    print(f"{'command':<40} {'median s':>9} {'min s':>7} {'max s':>7}")
    print(f"{'envcheck doctor --json':<40} {d:>9.3f} {min(doctor_times):>7.3f} {max(doctor_times):>7.3f}")
    print(f"{'python -m torch.utils.collect_env':<40} {c:>9.3f} {min(collect_times):>7.3f} {max(collect_times):>7.3f}")
    print(f"ratio doctor/collect_env: {d / c:.3f} (goal <= 0.100: {'met' if d / c <= 0.1 else 'NOT met'})")
    answered = ", ".join(f"{name} {statistics.median(times):.3f} s" for name, times in sorted(gatherers.items()))
    print(f"doctor's gatherers answered (median, from the start of gathering): {answered or 'not reported'}")
    typer_version = subprocess.run([sys.executable, "-c", "import typer; print(typer.__version__)"],
                                   capture_output=True, text=True).stdout.strip()
    print(f"typer {typer_version or 'missing'} (0.29 and later would build a pydantic adapter per option; "
          "envcheck converts its options itself)")
    print(f"heavy modules imported by envcheck's own process: {', '.join(heavy) or 'none'}")
    owners: dict[str, float] = {}
    for line in imports.splitlines():
        fields = line.split("|")
        if line.startswith("import time:") and fields[0].split(":")[1].strip().isdigit():
            top = fields[-1].strip().split(".")[0]
            owner = "pydantic" if top in ("pydantic", "pydantic_core") else top if top in ("envcheck", "typer") else "the rest"
            owners[owner] = owners.get(owner, 0) + int(fields[0].split(":")[1]) / 1000
    print("import self-time of doctor's modules (one -X importtime run, ms): "
          + ", ".join(f"{owner} {owners.get(owner, 0):.0f}" for owner in ("envcheck", "typer", "pydantic", "the rest")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
