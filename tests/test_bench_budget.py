"""benchmarks/bench_time_budget.py on the recorded H200 runs: each run named with the torch it had (its result's
versions), and the rest of its time split into the timing phases and the setup."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "bench"


def budget(*runs: str) -> str:
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_time_budget.py"), "--runs",
                           *(str(DATA / run) for run in runs)], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    return done.stdout


def share_lines(out: str) -> list[str]:
    lines = out.splitlines()
    found = []
    for index, line in enumerate(lines):
        if line.startswith("envcheck's own share"):
            found += [item.strip() for item in lines[index + 1:index + 3]]
    return found


def test_each_run_is_named_with_the_torch_it_had():
    out = budget("h200-8", "h200-s5", "h200-6")
    assert share_lines(out) == [
        "operators, torch 2.14.1 (CUDA 13.0)           warm  19.9 s of    56 s (35.7%), 0.66 s per shape: NOT met",
        "operators, torch 2.14.1 (CUDA 13.0)           cold  21.3 s of   234 s ( 9.1%), 0.71 s per shape: met",
        "operators, torch 2.15.0 (CUDA 13.2)           warm  20.6 s of    64 s (31.9%), 0.69 s per shape: NOT met",
        "operators, torch 2.15.0 (CUDA 13.2)           cold  20.3 s of   385 s ( 5.3%), 0.68 s per shape: met",
        "recipe, torch 2.11.0 (CUDA 13.0)              warm  70.0 s of   106 s (66.4%), 2.33 s per shape: NOT met",
        "recipe, torch 2.11.0 (CUDA 13.0)              cold  68.4 s of   464 s (14.7%), 2.28 s per shape: NOT met",
    ]


def test_the_rest_is_split_into_timing_and_setup_where_the_progress_lines_mark_the_timing():
    out = budget("h200-s5", "h200-6")
    assert "  operators, torch 2.15.0 (CUDA 13.2)           warm timing  15.3 s, setup  3.2 s" in out
    assert "  operators, torch 2.15.0 (CUDA 13.2)           cold timing  15.4 s, setup  2.8 s" in out
    assert "recipe, torch 2.11.0 (CUDA 13.0)              warm timing" not in out  # h200-6: no `time I/N` lines


def test_inductors_import_shows_apart_where_the_child_marks_it(tmp_path):
    """A child since issue 30 imports Inductor in a phase of its own, before the first shape."""
    for name in ("bench-llm-warm.json", "bench-llm-warm.err"):
        text = (DATA / "h200-s5" / name).read_text(encoding="utf-8")
        if name.endswith(".err"):
            text = text.replace("envcheck: shape 1/30", "envcheck: import-inductor +1.700\nenvcheck: shape 1/30", 1)
        (tmp_path / name).write_text(text, encoding="utf-8")
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_time_budget.py"), "--runs", str(tmp_path)],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert "warm timing  15.3 s, setup  3.2 s, Inductor's import  0.2 s" in done.stdout
    assert "20.6 s of    64 s (31.9%), 0.69 s per shape: NOT met (of which Inductor's import 0.2 s" in done.stdout
