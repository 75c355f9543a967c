"""bench accounts for every NVGEMM candidate: the real child log of `envcheck bench` on a model's four GEMM shapes on
torch 2.14.1 on the H200 (tests/data/h200-s4/mlp-bench-child.log.gz: 22 candidates lost to the precompile workers'
target, of which its output and JSON said nothing then), replayed by a small child process so that the parent, the
analysis and the decision run exactly as on the GPU."""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

import pytest

import factsbuilder as fb
from envcheck.bench import run_bench
from envcheck.bench.result import BenchOptions
from envcheck.bench.run import rows_and_candidates
from envcheck.bench.shapes import parse_shapes
from envcheck.model import Status
from envcheck.profile import load_builtin
from envcheck.render.bench import render

S4 = Path(__file__).parent / "data" / "h200-s4"
H200 = fb.facts(interpreter=fb.stack(), driver=fb.driver("580.159.04", "13.0", [fb.gpu((9, 0), "NVIDIA H200")]))
SHAPES = parse_shapes("16x14336x4096,16x4096x14336,2048x14336x4096,2048x4096x14336")
ARCH = "error: expects arch to be sm_90a, but got sm_100a"


@pytest.fixture(scope="module")
def operators():
    return load_builtin("torch-2.14-operators")


def replayed(tmp_path: Path, text: str) -> Path:
    child = tmp_path / "child.py"
    lines = [line for line in text.splitlines() if not line.startswith("#")]
    child.write_text(f"import sys\nsys.stdout.write({chr(10).join(lines) + chr(10)!r})\n", encoding="utf-8")
    return child


def bench(operators, tmp_path: Path, log: str):
    text = gzip.open(S4 / log, "rt", encoding="utf-8").read()
    return run_bench(sys.executable, H200, operators, BenchOptions(shapes=SHAPES, budget_s=400),
                     cache_dir=tmp_path / "cache", child=replayed(tmp_path, text))


def test_every_row_carries_the_candidates_its_compile_autotuned():
    text = gzip.open(S4 / "mlp-bench-child.log.gz", "rt", encoding="utf-8").read()
    rows, candidates = rows_and_candidates(text)
    assert len(rows) == len(candidates) == 20
    assert [(r["backend"], sum(g.failed for g in c)) for r, c in zip(rows, candidates) if c] == [
        ("mix", 3), ("mix", 3), ("mix", 4), ("NVGEMM", 4), ("mix", 4), ("NVGEMM", 4)]


def test_the_lost_candidates_make_the_bench_a_warning_that_names_them_and_the_remedy(operators, tmp_path):
    result = bench(operators, tmp_path, "mlp-bench-child.log.gz")
    assert result.status is Status.WARN and result.cause_id == "dsl-arch-mismatch"
    assert "CUTE_DSL_ARCH=sm_90a" in result.remedy.text
    # per shape: the mix's compile (it autotunes first); the NVGEMM row's second try of the same candidates counts no more
    assert [(v.shape.text, sum(g.failed for g in v.candidates), sum(g.offered for g in v.candidates))
            for v in result.verdicts] == [("16x14336x4096", 3, 6), ("16x4096x14336", 3, 7), ("2048x14336x4096", 4, 10),
                                          ("2048x4096x14336", 4, 10)]
    said = f"14 of at least 33 NVGEMM candidates failed to compile: dsl-arch-mismatch ({ARCH})"
    assert result.decision.lost == said and result.decision.lost_causes == ("dsl-arch-mismatch",)
    assert result.decision.text.endswith(f"; {said}, so the verdict was measured without them")
    assert said in result.summary


def test_the_json_has_per_gemm_counts_and_cause_ids(operators, tmp_path):
    data = bench(operators, tmp_path, "mlp-bench-child.log.gz").to_dict()
    mix = next(m for m in data["measurements"] if m["backend"] == "mix" and m["shape"]["m"] == 2048)
    [gemm] = mix["candidates"]
    assert (gemm["gemm"], gemm["sizes"], gemm["offered"], gemm["failed"], gemm["left"]) == (
        "mm", "2048x4096, 4096x14336", 10, 4, 6)
    assert gemm["lost"] == [{"cause": "dsl-arch-mismatch", "count": 4, "first_line": ARCH, "where": "precompile worker",
                             "environment": True}]
    # this run's tables list the first 10 of 28 choices (Inductor's default; envcheck's children now list them all)
    assert data["verdicts"][2]["lost"].startswith("4 of at least 10 NVGEMM candidates failed to compile")
    assert gemm["exact"] is False
    assert data["decision"]["lost_candidates"]["causes"] == ["dsl-arch-mismatch"]
    assert data["cause"]["id"] == "dsl-arch-mismatch" and "CUTE_DSL_ARCH" in data["remedy"]["text"]
    json.dumps(data)  # all of it serialisable


def test_the_text_names_the_losses_per_shape_and_the_fix(operators, tmp_path):
    result = bench(operators, tmp_path, "mlp-bench-child.log.gz")
    text = render(result, {}, "table")
    assert "2048x14336x4096 row-major custom                   NVGEMM" in text  # replayed rows: row-major B
    assert "; 4 of at least 10 NVGEMM candidates failed to compile" in text
    assert "cause  dsl-arch-mismatch:" in text and "fix       Set CUTE_DSL_ARCH=sm_90a" in text


def test_a_bench_that_lost_nothing_passes_and_says_nothing_of_losses(operators, tmp_path):
    # the same run with the failure records removed: every candidate left, no cause
    text = gzip.open(S4 / "mlp-bench-child.log.gz", "rt", encoding="utf-8").read()
    kept = "\n".join(line for line in text.splitlines() if "select_algorithm.py:4866]" not in line)
    result = run_bench(sys.executable, H200, operators, BenchOptions(shapes=SHAPES, budget_s=400),
                       cache_dir=tmp_path / "cache", child=replayed(tmp_path, kept))
    assert result.status is Status.PASS and result.cause_id is None and result.decision.lost is None
    assert all(v.candidates and not any(g.failed for g in v.candidates) for v in result.verdicts)


def test_a_saved_result_reads_back_its_candidates_and_refuses_counts_that_do_not_add_up(operators, tmp_path):
    from envcheck.bench.results import parse_result
    from envcheck.errors import UsageError

    result = bench(operators, tmp_path, "mlp-bench-child.log.gz")
    saved = {"schema_version": 2, "bench": json.loads(json.dumps(result.to_dict()))}
    again = parse_result(saved, "saved.json").result
    assert [v.candidates for v in again.verdicts] == [v.candidates for v in result.verdicts]
    assert again.decision.lost == result.decision.lost
    mix = next(i for i, m in enumerate(saved["bench"]["measurements"]) if m["candidates"])
    saved["bench"]["measurements"][mix]["candidates"][0]["offered"] = 99
    with pytest.raises(UsageError, match=rf"saved.json: bench.measurements\[{mix}\].candidates\[0\].offered: expected 6"):
        parse_result(saved, "saved.json")
    saved["bench"]["measurements"][mix]["candidates"][0]["lost"] = [{"cause": "x", "count": 0}]
    with pytest.raises(UsageError, match=r"lost\[0\].count: expected an integer of at least 1"):
        parse_result(saved, "saved.json")


def marked(text: str) -> str:
    """The H200's log as today's child writes it: each compile marked where its row line was, the shape's rows
    after all of its compiles (it times them back to back)."""
    out, held = [], []
    for line in text.splitlines():
        if line.startswith("ENVCHECK-BENCH-ROW "):
            row = json.loads(line.split(" ", 1)[1])
            if not row["repeat"]:
                out.append("ENVCHECK-BENCH-COMPILED " + json.dumps({"shape": row["shape"], "backend": row["backend"]}))
            held.append(line)
        elif line.startswith("envcheck-bench: phase "):
            out += held + [line]
            held = []
        else:
            out.append(line)
    return "\n".join(out + held) + "\n"


def test_a_log_with_compile_marks_gives_each_row_the_candidates_of_its_own_compile():
    text = gzip.open(S4 / "mlp-bench-child.log.gz", "rt", encoding="utf-8").read()
    rows, candidates = rows_and_candidates(marked(text))
    before_rows, before = rows_and_candidates(text)

    def seen(per_row):  # what each row's compile lost and left (the log's line numbers moved with its rows)
        return [[(g.op, g.sizes, g.failed, g.left, g.lost) for g in gemms] for gemms in per_row]

    assert rows == before_rows and seen(candidates) == seen(before)
    assert [r["backend"] for r in rows[:5]] == ["ATEN", "mix", "TRITON", "NVGEMM", "ATEN"]
    assert sum(g.failed for c in candidates for g in c) == 22


def test_the_h200s_marked_log_gives_each_mix_row_the_recipes_four_kernels():
    # tests/data/bench/h200-7: the child that marks its compiles, on the recipe stack (torch 2.11, four Sm80 kernels)
    text = (Path(__file__).parent / "data" / "bench" / "h200-7" / "bench-cold.log").read_text(encoding="utf-8")
    rows, candidates = rows_and_candidates(text)
    assert len(rows) == 15 and "ENVCHECK-BENCH-COMPILED " in text
    assert [(r["shape"]["m"], r["backend"], [(g.offered, g.failed) for g in c]) for r, c in zip(rows, candidates) if c] == [
        (4096, "mix", [(4, 0)]), (8192, "mix", [(4, 0)]), (16, "mix", [(4, 0)])]
