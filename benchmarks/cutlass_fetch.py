"""Bytes and time of envcheck's CUTLASS fetch from a local mirror, against a full clone of the same mirror.

    python benchmarks/cutlass_fetch.py [MIRROR] [--repeat N] [--commit SHA] [--branch NAME]

MIRROR is a local CUTLASS repository (bare or not) holding branch cutlass_api; the default is the profile's commit
from /work/.mirror/NVIDIA+cutlass/repo. "Bytes" are what lands in .git/objects: for the fetch, the shallow,
blob-filtered pack plus the blobs the sparse checkout of python/cutlass_api pulls; for the full clone, the whole
history. The goal is at most 5 MB moved by envcheck.

A full clone goes through git's file:// transport (git clone --no-local); a mirror that is itself a partial clone
cannot serve that, and then the full clone is a plain local copy of its object store (git clone --no-hardlinks),
which moves the same bytes.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from envcheck.cutlass_fetch import fetch  # noqa: E402
from envcheck.profile import DEFAULT_PROFILE, load_builtin  # noqa: E402

GOAL_BYTES = 5 * 1000 * 1000
DEFAULT_MIRROR = "/work/.mirror/NVIDIA+cutlass/repo"


def objects_bytes(git_dir: Path) -> int:
    total = 0
    for root, _dirs, files in os.walk(git_dir / "objects"):
        total += sum(os.stat(os.path.join(root, f)).st_size for f in files)
    return total


def envcheck_fetch(mirror: Path, workdir: Path, branch: str, commit: str, subdir: str) -> tuple[int, float]:
    dest = workdir / "sparse"
    started = time.perf_counter()
    result = fetch(dest, str(mirror), branch, commit, subdir)
    seconds = time.perf_counter() - started
    assert result.commit == commit and (dest / subdir / "pyproject.toml").is_file()
    return objects_bytes(dest / ".git"), seconds


def full_clone(mirror: Path, workdir: Path, branch: str) -> tuple[int, float, str]:
    dest = workdir / "full"
    started = time.perf_counter()
    done = subprocess.run(
        ["git", "clone", "--quiet", "--no-local", "--bare", "--branch", branch, mirror.as_uri(), str(dest)],
        capture_output=True, text=True,
    )
    how = "git clone --no-local (file:// transport, all history)"
    if done.returncode != 0:
        shutil.rmtree(dest, ignore_errors=True)
        started = time.perf_counter()
        subprocess.run(["git", "clone", "--quiet", "--bare", "--no-hardlinks", str(mirror), str(dest)],
                       check=True, capture_output=True, text=True)
        how = "git clone --no-hardlinks (a local copy of the whole object store; the mirror is partial)"
    return objects_bytes(dest), time.perf_counter() - started, how


def main() -> int:
    policy = load_builtin(DEFAULT_PROFILE)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mirror", nargs="?", default=DEFAULT_MIRROR)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--branch", default=policy.cutlass.branch)
    parser.add_argument("--commit", default=policy.cutlass.commit)
    args = parser.parse_args()
    mirror = Path(args.mirror).resolve()
    if not mirror.is_dir():
        print(f"no mirror at {mirror}", file=sys.stderr)
        return 2
    sparse_runs, full_runs, how = [], [], ""
    for _ in range(args.repeat):
        with tempfile.TemporaryDirectory(prefix="envcheck-bench-") as tmp:
            sparse_runs.append(envcheck_fetch(mirror, Path(tmp), args.branch, args.commit, policy.cutlass.subdir))
        with tempfile.TemporaryDirectory(prefix="envcheck-bench-") as tmp:
            *run, how = full_clone(mirror, Path(tmp), args.branch)
            full_runs.append(tuple(run))
    sparse_bytes = sparse_runs[0][0]
    sparse_time = statistics.median(t for _, t in sparse_runs)
    full_bytes = full_runs[0][0]
    full_time = statistics.median(t for _, t in full_runs)
    print(f"mirror: {mirror}  branch {args.branch} at {args.commit[:12]}  ({args.repeat} runs, median time)")
    print(f"envcheck fetch (shallow, blob:none, sparse {policy.cutlass.subdir}): "
          f"{sparse_bytes / 1e6:8.2f} MB in {sparse_time:6.2f} s")
    print(f"full clone, {how}: {full_bytes / 1e6:8.2f} MB in {full_time:6.2f} s")
    timing = (f" in {100 * sparse_time / full_time:.1f}% of the time" if "transport" in how
              else " (a local copy only reads files: its time is no transfer's)")
    print(f"envcheck moves {100 * sparse_bytes / full_bytes:.2f}% of the bytes{timing}; "
          f"goal <= {GOAL_BYTES / 1e6:.0f} MB: {'met' if sparse_bytes <= GOAL_BYTES else 'NOT met'}")
    return 0 if sparse_bytes <= GOAL_BYTES else 1


if __name__ == "__main__":
    sys.exit(main())
