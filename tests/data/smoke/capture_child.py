"""Helper for capture.sh: run envcheck's smoke the way the CLI does, or its child raw, and keep what they print.

    python tests/data/smoke/capture_child.py smoke OUT.json [--fresh] [--timeout S] [--backends B] [--python PY]
    python tests/data/smoke/capture_child.py raw OUT.log [child arguments...]      (target: $CAPTURE_PYTHON)

`smoke` is `envcheck smoke --json` (preflight included) and adds the wall time; `raw` runs the smoke child
(envcheck/inside/smoke_child.py, from a run folder with its helpers) directly in the environment the smoke run gives
it, without a preflight, so that the child's own failure is seen.
"""

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))

from envcheck import paths  # noqa: E402
from envcheck.runner import run_child  # noqa: E402
from envcheck.smoke import child_environment, run_smoke  # noqa: E402
from envcheck.smoke.run import write_child  # noqa: E402


def smoke(argv):
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--fresh", action="store_true")
    parser.add_argument("--timeout", type=float, default=300.0)
    parser.add_argument("--backends", default=None)
    parser.add_argument("--python", default=os.environ.get("CAPTURE_PYTHON", sys.executable))
    args = parser.parse_args(argv)
    from envcheck import profile as policy_module
    from envcheck.gather import Sources, gather

    began = time.monotonic()
    policy = policy_module.resolve(None)
    facts = gather(Sources(python=args.python))
    result = run_smoke(args.python, facts, policy, timeout=args.timeout, fresh=args.fresh, backends=args.backends,
                       progress=lambda m: print("envcheck:", m, file=sys.stderr))
    data = {"wall_s": round(time.monotonic() - began, 3), "smoke": result.to_dict()}
    Path(args.out).write_text(json.dumps(data, indent=2), encoding="utf-8")
    print(args.out, result.status.value, data["wall_s"], result.summary)


def raw(argv):
    out, child_args = Path(argv[0]), argv[1:]
    python = os.environ.get("CAPTURE_PYTHON", sys.executable)
    backends = child_args[child_args.index("--backends") + 1] if "--backends" in child_args else "NVGEMM"
    env = child_environment(os.environ, paths.cache_dir(), backends).variables
    with tempfile.TemporaryDirectory() as cwd, open(out, "w", encoding="utf-8") as log:
        script = write_child(Path(cwd))
        end = run_child([python, str(script), *child_args], env, Path(cwd), log, 300)
    print(out, end)


if __name__ == "__main__":
    {"smoke": smoke, "raw": raw}[sys.argv[1]](sys.argv[2:])
