"""envcheck.runner and the parent's side of envcheck.inside.protocol: the line protocol read back from a child's log,
the environment it gets, its run folders."""

from __future__ import annotations

from pathlib import Path

import pytest

from envcheck.runner import child_environment, new_run_dir, KEEP_RUNS
from envcheck.inside.protocol import result_lines


@pytest.mark.parametrize("text, expected", [
    ("", []),
    ("P {\"a\": 1}\n", [{"a": 1}]),
    ("noise\nP {\"a\": 1}\nmore P {\"b\": 2}\nP {\"c\": 3}", [{"a": 1}, {"c": 3}]),  # only at the start of a line
    ("P {\"a\": 1\n", []),  # torn by a kill
    ("P [1, 2]\nP 3\n", []),  # not an object
    ("PX {\"a\": 1}\n", []),  # another prefix
])
def test_result_lines(text, expected):
    assert result_lines(text, "P ") == expected


def test_child_environment_drops_what_changes_a_run_and_owns_the_caches():
    base = {"PATH": "/bin", "TORCHINDUCTOR_MAX_AUTOTUNE_GEMM_BACKENDS": "TRITON", "TORCHINDUCTOR_FORCE_DISABLE_CACHES": "1",
            "TORCHINDUCTOR_NVGEMM_MAX_PROFILING_CONFIGS": "all"}
    env = child_environment(base, Path("/c"), {"X": "1"}).variables
    assert env["PATH"] == "/bin" and env["X"] == "1" and env["TORCHINDUCTOR_CACHE_DIR"] == "/c/inductor"
    assert env["TRITON_CACHE_DIR"] == "/c/triton" and env["CUTE_DSL_CACHE_DIR"] == "/c/cutedsl"
    assert not {"TORCHINDUCTOR_MAX_AUTOTUNE_GEMM_BACKENDS", "TORCHINDUCTOR_FORCE_DISABLE_CACHES"} & set(env)
    # the user's NVGEMM settings decide how many choices a GEMM gets: the child compiles with them (issue 29)
    assert env["TORCHINDUCTOR_NVGEMM_MAX_PROFILING_CONFIGS"] == "all"


def test_run_dirs_are_new_and_only_the_newest_are_kept(tmp_path):
    made = [new_run_dir(tmp_path, "bench") for _ in range(KEEP_RUNS + 3)]
    assert len(set(made)) == KEEP_RUNS + 3
    kept = sorted(p for p in (tmp_path / "bench").iterdir())
    assert len(kept) == KEEP_RUNS and made[-1] in kept
