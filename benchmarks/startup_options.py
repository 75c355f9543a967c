"""What each start-up option of envcheck is worth: the quick commands timed with each option on and off, in one run.

    python benchmarks/startup_options.py --python /path/to/python-with-torch [--rounds 9] [--before PYTHON]

Run it with the interpreter of a venv where envcheck's wheel is installed (`python -m build --wheel`, then pip
install it into a new venv): users get the wheel, byte-compiled by pip. The commands, each as a user starts it:

    doctor     envcheck doctor --json --python TARGET       (TARGET: a venv with torch)
    explain    envcheck explain LOG                         (a three-line traceback)
    diff       envcheck diff A B                            (two doctor --json reports of TARGET)
    fix        envcheck fix --dry-run --python EMPTY        (a new venv of the base Python, no torch: a Python too
                                                             old for the recipe when it is below 3.12)
    collect    python -m torch.utils.collect_env            (in TARGET: doctor's reference, goal <= 1/10)

and the variants, each the installed envcheck with one option taken away (a few lines run before its main() patch
the module of the option as it is imported):

    as built                 every option on
    typer's adapters         optionvalues.plain does nothing: typer 0.29 builds a pydantic TypeAdapter per parameter
    + PYDANTIC_DISABLE_PLUGINS=1   the same, with pydantic's switch that skips its scan of entry points
    probe after the profiles (doctor only)  profile.builtin_only says no: the target starts only once the built-in
                             profiles are read, as it does for a profile the user wrote
    shims run (fix only)     gather.pythons reads no version from an install's files and runs every candidate,
                             pyenv's shims too (at once: the figure of running them in parallel)
    before (--before PYTHON) another envcheck as it is installed there (main's wheel): the figures to compare with

Every command runs in a new temporary folder (no pyproject.toml: in a project's folder doctor reads the project file
before it starts the target, as it reads any profile a user wrote). Every round runs every command under every variant, the variants in a rotated order, so that the noise of a shared
machine falls on all alike. Prints, per command and variant, the median wall time and the median CPU time (user +
sys of the process and its children: what the machine had to give, which noise changes less), the difference from
`as built`, and doctor's ratio to collect_env.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RUN_MAIN = "import sys\nfrom envcheck.__main__ import main\nsys.exit(main())\n"


def after_import(module: str, patch: str) -> str:
    """Lines that run `patch` (on `module`, named `module` there) right after `module` is first imported, wherever
    envcheck imports it: importing it in the prelude instead would move its import (typer's, the profiles') before
    __main__'s head start, and so change more than the one option."""
    return f"""import importlib.abc, importlib.machinery, sys
class _After(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name != {module!r}:
            return None
        sys.meta_path.remove(self)
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        run = spec.loader.exec_module
        def exec_module(module):
            run(module)
            {patch}
        spec.loader.exec_module = exec_module
        return spec
sys.meta_path.insert(0, _After())
"""


AS_BUILT = after_import("envcheck.__main__", "pass")  # the same machinery, patching nothing: a fair baseline
NO_PLAIN = after_import("envcheck.optionvalues", "module.plain = lambda params: params")
PROBE_AFTER = after_import("envcheck.profile", "module.builtin_only = lambda named=None, cwd=None: False")
SHIMS_RUN = after_import("envcheck.gather.pythons", "module.is_script = lambda path: False; "
                                                     "module.stated_version = lambda executable: None")
LOG = ("Traceback (most recent call last):\n  File \"train.py\", line 7, in <module>\n"
       "AttributeError: module 'cutlass.cute.nvgpu.cpasync' has no attribute 'ProxyKind'\n")


def timed(argv: list[str], env: dict, cwd: Path) -> tuple[float, float, int]:
    """(wall s, CPU s of the process and the children it waited for, exit code)."""
    started = time.perf_counter()
    child = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             env=env, cwd=cwd)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - started
    child.returncode = os.waitstatus_to_exitcode(status)
    return wall, usage.ru_utime + usage.ru_stime, child.returncode


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", required=True, help="a venv's interpreter with torch installed")
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--before", help="the interpreter of a venv with another envcheck installed (main's wheel)")
    parser.add_argument("--only", help="comma-separated commands to time (default: all)")
    args = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if k != "PYDANTIC_DISABLE_PLUGINS"}
    work = Path(tempfile.mkdtemp(prefix="envcheck-startup-"))
    log = work / "three.log"
    log.write_text(LOG)
    empty = work / "empty"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(empty)], check=True)
    reports = []
    for name in ("a.json", "b.json"):
        done = subprocess.run([sys.executable, "-m", "envcheck", "doctor", "--json", "--python", args.python, "-o",
                               str(work / name)], capture_output=True, text=True, env=env)
        if not (work / name).is_file():
            print(f"envcheck doctor wrote no report (exit {done.returncode}):\n{done.stderr}", file=sys.stderr)
            return 3
        reports.append(str(work / name))
    commands = {
        "doctor": ["doctor", "--json", "--python", args.python],
        "explain": ["explain", str(log)],
        "diff": ["diff", *reports],
        "fix": ["fix", "--dry-run", "--python", str(empty / "bin" / "python")],
    }
    if args.only:
        commands = {name: argv for name, argv in commands.items() if name in args.only.split(",")}
    variants: dict[str, tuple[str, str, dict]] = {  # name: (interpreter, prelude, environment)
        "as built": (sys.executable, AS_BUILT, env),
        "typer's adapters": (sys.executable, NO_PLAIN, env),
        "+ PYDANTIC_DISABLE_PLUGINS=1": (sys.executable, NO_PLAIN, {**env, "PYDANTIC_DISABLE_PLUGINS": "1"}),
        "probe after the profiles": (sys.executable, PROBE_AFTER, env),
        "shims run": (sys.executable, SHIMS_RUN, env),
    }
    if args.before:
        variants["before"] = (args.before, AS_BUILT, env)
    only = {"shims run": "fix", "probe after the profiles": "doctor"}  # the one command each of these changes
    runs = [(command, variant) for command in commands for variant in variants if only.get(variant, command) == command]
    collect = [args.python, "-m", "torch.utils.collect_env"]
    figures: dict[tuple[str, str], list[tuple[float, float]]] = {run: [] for run in runs}
    figures[("collect", "as built")] = []
    codes: dict[tuple[str, str], set] = {}
    for argv in [*(_argv(variants[v], commands[c]) for c, v in runs), collect]:  # warm the file cache
        timed(argv, env, work)
    for round_ in range(args.rounds):
        order = runs[round_ % len(runs):] + runs[:round_ % len(runs)]
        for command, variant in order:
            python, _, environment = variants[variant]
            wall, cpu, code = timed(_argv(variants[variant], commands[command]), environment, work)
            figures[(command, variant)].append((wall, cpu))
            codes.setdefault((command, variant), set()).add(code)
        wall, cpu, code = timed(collect, env, work)
        figures[("collect", "as built")].append((wall, cpu))
    _print(args, figures, codes, commands)
    return 0


def _argv(variant: tuple[str, str, dict], args: list[str]) -> list[str]:
    python, prelude, _ = variant
    return [python, "-c", prelude + RUN_MAIN, *args]


def _print(args, figures, codes, commands) -> None:
    typer_version = subprocess.run([sys.executable, "-c", "import typer; print(typer.__version__)"],
                                   capture_output=True, text=True).stdout.strip()
    pydantic_version = subprocess.run([sys.executable, "-c", "import pydantic; print(pydantic.VERSION)"],
                                      capture_output=True, text=True).stdout.strip()
    print(f"envcheck of {sys.executable} (typer {typer_version or '-'}, pydantic {pydantic_version or '-'}, "
          f"Python {sys.version.split()[0]}); target {args.python}; {args.rounds} rounds, interleaved; "
          f"load average {os.getloadavg()[0]:.1f}")
    print(f"{'command':<9} {'variant':<30} {'wall s':>7} {'vs built':>9} {'cpu s':>7} {'vs built':>9}  exit")
    medians = {key: (statistics.median(w for w, _ in runs), statistics.median(c for _, c in runs))
               for key, runs in figures.items() if runs}
    for (command, variant), (wall, cpu) in medians.items():
        base = medians.get((command, "as built"), (wall, cpu))
        exits = ",".join(str(c) for c in sorted(codes.get((command, variant), ())))
        print(f"{command:<9} {variant:<30} {wall:>7.3f} {wall - base[0]:>+9.3f} {cpu:>7.3f} {cpu - base[1]:>+9.3f}  "
              f"{exits}")
    collect = medians[("collect", "as built")]
    for variant in ("as built", "typer's adapters", "before"):
        if ("doctor", variant) in medians:
            wall = medians[("doctor", variant)][0]
            print(f"doctor/collect_env, {variant}: {wall / collect[0]:.3f} (goal <= 0.100: "
                  f"{'met' if wall / collect[0] <= 0.1 else 'NOT met'})")
    for command in ("explain", "diff", "fix"):
        if (command, "as built") in medians and ("doctor", "as built") in medians:
            wall, doctor = medians[(command, "as built")][0], medians[("doctor", "as built")][0]
            print(f"{command} as built against doctor: {wall:.3f} s / {doctor:.3f} s "
                  f"({'no slower' if wall <= doctor else 'SLOWER'})")


if __name__ == "__main__":
    sys.exit(main())
