"""Running a script of envcheck/inside/ in the target interpreter, as smoke and bench do.

The script is copied into a run directory of its own under envcheck's cache (logs and generated code stay there;
the newest KEEP_RUNS are kept), with the helpers it imports beside it (write_scripts), run by path with no shell, in
a session of its own (so a timeout kills its whole process group, Inductor's compile workers included), with an
environment that drops what would change the run and points Inductor's, Triton's and CuteDSL's caches into
envcheck's cache (so a second run is warm). The script speaks envcheck/inside/protocol.py: `PREFIX {json}` lines on
stdout, which protocol.result_lines reads back from the log.
"""

from __future__ import annotations

import datetime
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Optional, Sequence, TextIO

from . import paths
from .proc import kill_group, stop_group

__all__ = [
    "BENCH_SCRIPTS",
    "ChildEnd",
    "KEEP_RUNS",
    "LOOKUP_MARKER",
    "SMOKE_SCRIPTS",
    "cache_dirs",
    "child_environment",
    "new_run_dir",
    "run_child",
    "write_scripts",
]

KILL_GRACE = 5.0  # seconds between SIGTERM and SIGKILL for the child's process group
KEEP_RUNS = 20  # run directories kept under the cache (logs, generated code)
LOOKUP_MARKER = "envcheck-kernel-lookup.json"  # the stack on which Inductor's full kernel enumeration worked
INSIDE = Path(__file__).resolve().parent / "inside"  # read as files: nothing of it is imported here
# What a child needs in its run folder: the script (first), then the envcheck/inside/ helpers it imports.
SMOKE_SCRIPTS = ("smoke_child", "protocol", "gemm", "lookup", "loaded", "library")
BENCH_SCRIPTS = ("bench_child", "protocol", "gemm", "lookup", "timing", "library")

# Variables of the caller's environment that would change what a child run measures; the child gets its own.
_DROPPED = (
    "TORCHINDUCTOR_FORCE_DISABLE_CACHES",
    "TORCHINDUCTOR_MAX_AUTOTUNE",
    "TORCHINDUCTOR_MAX_AUTOTUNE_GEMM",
    "TORCHINDUCTOR_MAX_AUTOTUNE_GEMM_BACKENDS",
    "TORCHINDUCTOR_AUTOTUNE_FALLBACK_TO_ATEN",
    "TORCHINDUCTOR_FX_GRAPH_CACHE",
    "TORCHINDUCTOR_AUTOTUNE_LOCAL_CACHE",
    "TORCHINDUCTOR_NVGEMM_MAX_PROFILING_CONFIGS",
    "TORCH_COMPILE_DISABLE",
    "TORCHDYNAMO_DISABLE",
    "CUTE_DSL_DISABLE_FILE_CACHING",
    "PYTHONDONTWRITEBYTECODE",  # torch without .pyc files costs seconds of byte-compiling in every warm run
    "TORCHINDUCTOR_COMPILE_THREADS",
)


def cache_dirs(cache_root: Path) -> tuple[Path, ...]:
    """The compiler caches envcheck owns: Inductor's, Triton's and CuteDSL's."""
    return tuple(cache_root / name for name in ("inductor", "triton", "cutedsl"))


def child_environment(base: Mapping[str, str], cache_root: Path, settings: Mapping[str, str]) -> dict[str, str]:
    """The child's environment: the caller's, less what would change the run, plus envcheck's caches and settings."""
    env = {k: v for k, v in base.items() if k not in _DROPPED}
    inductor, triton, cutedsl = cache_dirs(cache_root)
    env.update(
        PYTHONUNBUFFERED="1",
        TORCHINDUCTOR_CACHE_DIR=str(inductor),
        TRITON_CACHE_DIR=str(triton),
        CUTE_DSL_CACHE_DIR=str(cutedsl),
    )
    env.update(settings)
    return env


def new_run_dir(cache_root: Path, kind: str) -> Path:
    """A fresh directory under cache_root/kind whose name sorts by time; only the newest KEEP_RUNS stay."""
    runs = cache_root / kind
    runs.mkdir(parents=True, exist_ok=True)
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S-%f")  # to the microsecond: names sort by time
    run_dir = Path(tempfile.mkdtemp(prefix=f"{stamp}-", dir=runs))  # two runs never share one
    for old in sorted(p for p in runs.iterdir() if p.is_dir())[:-KEEP_RUNS]:
        shutil.rmtree(old, ignore_errors=True)
    return run_dir


def prepare_run(cache_root: Path, kind: str, *, fresh: bool, env: Mapping[str, str], named: bool) -> tuple[Path, bool]:
    """Before a child run: the cache folder checked (the one thing here that is the user's, not the target's: one
    that cannot be written is a UsageError naming the variable that chose it, or the caller's cache_dir when named),
    the compiler caches emptied when fresh, a new run folder under cache_root/kind, and Inductor's cache folder made.
    Returns (the run folder, whether Inductor's cache held anything already)."""
    what = " ".join(filter(None, ("" if named else paths.folder_origin(env), "(envcheck's cache folder)")))
    paths.usable_folder(cache_root, what, create=True)
    inductor = cache_dirs(cache_root)[0]
    if fresh:
        for folder in cache_dirs(cache_root):
            shutil.rmtree(folder, ignore_errors=True)
    warm = inductor.is_dir() and any(inductor.iterdir())
    # The run folders, and the compiler caches the child loads compiled code from: the user's alone, or refused.
    for folder, make in ((cache_root / kind, True), (inductor, True), *((f, False) for f in cache_dirs(cache_root)[1:])):
        paths.usable_folder(folder, what, create=make, root=cache_root)
    return new_run_dir(cache_root, kind), warm


def _copied_name(scripts: Sequence[str], name: str) -> str:
    """The file name of an envcheck/inside/ module in a run folder: the script (scripts[0]) under its own name, the
    one logs and users know; each helper as envcheck_<name>.py, so that it shadows no top-level module torch, Triton
    or the DSL imports (the run folder is sys.path[0] of the child)."""
    return f"{name}.py" if name == scripts[0] else f"envcheck_{name}.py"


def write_scripts(run_dir: Path, scripts: Sequence[str], source: Optional[Path] = None) -> Path:
    """Copy a child script of envcheck/inside/ and the helpers it imports (SMOKE_SCRIPTS, BENCH_SCRIPTS) into
    run_dir; return the script's path. source: another script in place of scripts[0] (tests)."""
    for name in scripts:
        origin = source if source is not None and name == scripts[0] else INSIDE / f"{name}.py"
        (run_dir / _copied_name(scripts, name)).write_text(origin.read_text(encoding="utf-8"), encoding="utf-8")
    return run_dir / _copied_name(scripts, scripts[0])


@dataclass(frozen=True)
class ChildEnd:
    """How the child process ended."""

    returncode: Optional[int]
    timed_out: bool
    elapsed_s: float
    pid: Optional[int] = None  # its process (and process group) id


def run_child(argv: list[str], env: Mapping[str, str], cwd: Path, log: TextIO, timeout: float, started=None) -> ChildEnd:
    """Run argv (no shell) in a new session writing to log; on timeout kill its whole process group.

    started: called with the child's pid once it runs (bench watches the GPU for processes that are not its own)."""
    began = time.monotonic()
    process = subprocess.Popen(
        argv, env=dict(env), cwd=str(cwd), stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    if started is not None:
        started(process.pid)
    timed_out = False
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        stop_group(process, KILL_GRACE)
    finally:
        if process.poll() is None:  # interrupted while waiting: take the child down with us
            kill_group(process.pid)
            process.wait()
        kill_group(process.pid)  # helpers it left behind (Inductor's compile workers)
    return ChildEnd(None if timed_out else process.returncode, timed_out, round(time.monotonic() - began, 3), process.pid)


def warm_compile(counters: Optional[Mapping[str, int]]) -> Optional[bool]:
    """From the Inductor counters a child reports for one compile: True when its FX graph came from the cache (hits,
    no miss), False when it was compiled, None when the counters do not say."""
    counters = counters or {}
    if "fxgraph_cache_hit" not in counters and "fxgraph_cache_miss" not in counters:
        return None
    return counters.get("fxgraph_cache_hit", 0) > 0 and not counters.get("fxgraph_cache_miss", 0)


def versions_of(result: Optional[Mapping]) -> tuple[tuple[str, str], ...]:
    """The (distribution, version) pairs a child's result names, sorted; the ones it could not read left out."""
    return tuple(sorted((str(k), str(v)) for k, v in ((result or {}).get("versions") or {}).items() if v))

