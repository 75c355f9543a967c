"""The layout of B (issue 23 item 3): `--layout linear|row-major|both` on bench and smoke, nn.Linear's by default.

The pure parts as tables over every boundary (the flag, shapes and weights files, the layout read from strides);
the children for real on the simulated GPU (tests/data/bench/fake_gpu names the kernel's layout letters from the
strides of the B it is handed, as cutlass does: `_tnt_` for nn.Linear's weight, `_ttt_` for row-major B), so that
a child that built the wrong B shows; `bench --compare` of a result saved before layouts against one with them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

import factsbuilder as fb
from envcheck.bench import run_bench
from envcheck.bench.compare import compare, labels
from envcheck.bench.result import BenchOptions
from envcheck.bench.results import parse_result, read_result
from envcheck.bench.shapes import LINEAR, ROW_MAJOR, Shape, parse_layout, parse_shapes
from envcheck.bench.weights import read_weights
from envcheck.errors import UsageError
from envcheck.inside import gemm, library
from envcheck.model import Status
from envcheck.smoke import SmokeShape, run_smoke

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(__file__).parent / "data"
FAKE_GPU = DATA / "bench" / "fake_gpu"
H200_4 = DATA / "bench" / "h200-4"
GOOD = fb.facts(driver=fb.driver(gpus=[fb.gpu(capability=(9, 0), name="NVIDIA H200")]))
PY = sys.executable


# --------------------------------------------------------------------------------------------------------------
# The flag, the shapes, the weights


@pytest.mark.parametrize("value, layouts", [
    ("linear", (LINEAR,)), ("row-major", (ROW_MAJOR,)), ("both", (LINEAR, ROW_MAJOR)),
])
def test_layout_flag(value, layouts):
    assert parse_layout(value) == layouts


@pytest.mark.parametrize("value", ["Linear", "rowmajor", "", "tnt", "both,linear"])
def test_a_layout_that_is_none_of_them_is_refused_naming_the_flag(value):
    with pytest.raises(UsageError, match=r"--layout .*expected linear \(B as nn.Linear stores its weight"):
        parse_layout(value)


def test_the_default_sets_are_nn_linears_layout_and_both_puts_the_two_side_by_side():
    assert {s.layout for s in parse_shapes("llm")} == {LINEAR}
    both = parse_shapes("llm", parse_layout("both"))
    assert len(both) == 60 and [s.layout for s in both[:4]] == [LINEAR, ROW_MAJOR, LINEAR, ROW_MAJOR]
    assert both[0] == replace(both[1], layout=LINEAR) and both[0].text == both[1].text
    assert [s.layout for s in parse_shapes("16x4096x4096,64x4096x4096", (ROW_MAJOR,))] == [ROW_MAJOR, ROW_MAJOR]


def test_a_shapes_file_line_may_name_its_layout_which_wins_over_the_flag(tmp_path):
    path = tmp_path / "shapes.txt"
    path.write_text("16x4096x4096 row-major  # the attention's\n2048x14336x4096\n", encoding="utf-8")
    found = parse_shapes(str(path), parse_layout("both"))
    assert [(s.text, s.layout) for s in found] == [("16x4096x4096", ROW_MAJOR), ("2048x14336x4096", LINEAR),
                                                   ("2048x14336x4096", ROW_MAJOR)]


@pytest.mark.parametrize("text, words", [
    ("16x4096x4096 tnt\n", "line 1: 'tnt' is not a layout; expected MxNxK optionally followed by linear or row-major"),
    ("8x8x8\n16x4096x4096 linear extra\n", "line 2: '16x4096x4096 linear extra': expected MxNxK optionally followed"),
    ("row-major 16x4096x4096\n", "line 1: 'row-major' is not a shape"),
])
def test_a_bad_layout_in_a_shapes_file_names_the_line(tmp_path, text, words):
    path = tmp_path / "shapes.txt"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(UsageError, match=words.replace("(", r"\(").replace(")", r"\)")):
        parse_shapes(str(path))


@pytest.mark.parametrize("shape, count", [
    (Shape(16, 4096, 4096, layout=LINEAR), 100.0),  # the plain line counts for every layout
    (Shape(16, 4096, 4096, layout=ROW_MAJOR), 100.0),
    (Shape(2048, 4096, 4096, layout=ROW_MAJOR), 7.0),  # the layout's own line wins over the plain one
    (Shape(2048, 4096, 4096, layout=LINEAR), 300.0),
    (Shape(64, 4096, 4096, layout=LINEAR), 5.0),  # named for one layout only
    (Shape(64, 4096, 4096, layout=ROW_MAJOR), 0.0),
    (Shape(1, 1, 1, layout=LINEAR), 0.0),  # not in the file
])
def test_weights_per_layout(tmp_path, shape, count):
    path = tmp_path / "weights.txt"
    path.write_text("16x4096x4096 100\n2048x4096x4096 300\n2048x4096x4096 row-major 7\n64x4096x4096 linear 5\n",
                    encoding="utf-8")
    assert read_weights(path).of(shape) == count


def test_weights_name_what_the_bench_did_not_measure_by_layout(tmp_path):
    path = tmp_path / "weights.json"
    path.write_text(json.dumps({"16x4096x4096": 1, "64x4096x4096 row-major": 2, "8x8x8 linear": 3}), encoding="utf-8")
    weights = read_weights(path)
    assert weights.not_in([Shape(16, 4096, 4096, layout=LINEAR), Shape(64, 4096, 4096, layout=LINEAR)]) == (
        "64x4096x4096 row-major", "8x8x8 linear")
    assert weights.to_dict()["counts"] == {"16x4096x4096": 1.0, "64x4096x4096 row-major": 2.0, "8x8x8 linear": 3.0}


@pytest.mark.parametrize("name, text, words", [
    ("w.json", '{"16x4096x4096 tnt": 1}', "'tnt' is not a layout"),
    ("w.txt", "16x4096x4096 linear 1\n16x4096x4096 linear 2\n", "16x4096x4096 linear is listed twice"),
])
def test_bad_layouts_in_weights_are_refused(tmp_path, name, text, words):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(UsageError, match=words):
        read_weights(path)


# The layout a model's GEMM runs, from its operands' strides: m x k @ k x n
@pytest.mark.parametrize("a, b, m, n, k, layout", [
    ((4096, 1), (14336, 1), 16, 14336, 4096, ROW_MAJOR),  # row-major B [K, N]
    ((4096, 1), (1, 4096), 16, 14336, 4096, LINEAR),  # x @ W.T, W [N, K]: STACK.md section 9's [4096, 1], [1, 4096]
    ((8192, 1), (1, 8192), 16, 14336, 4096, LINEAR),  # padded rows (a slice of a wider buffer)
    ((1, 16), (1, 4096), 16, 14336, 4096, None),  # A column-major: neither
    ((4096, 1), (2, 8192), 16, 14336, 4096, None),  # B strided every other element: neither
    ((4096, 1), (4096, 2), 16, 14336, 4096, None),
    ((7, 1), (1, 1), 1, 1, 7, ROW_MAJOR),  # one column: both readings, row-major first
    ((4096, 1), (4096, 1), 1, 1, 4096, ROW_MAJOR),
    ((12345, 1), (1, 4096), 1, 14336, 4096, LINEAR),  # M = 1: A's leading stride is any
    ((4095, 1), (1, 4096), 16, 14336, 4096, None),  # a leading stride shorter than the row: overlapping, neither
])
def test_layout_of_strides(a, b, m, n, k, layout):
    assert gemm.layout_of(a, b, m, n, k) == layout


def test_heuristic_ranks_for_the_layout_asked(monkeypatch):
    # the fake heuristic estimates N-wide tiles slower for B column-major (TN_ROW_MAJOR): the order must follow
    monkeypatch.delitem(sys.modules, "nvMatmulHeuristics", raising=False)
    monkeypatch.syspath_prepend(str(FAKE_GPU))
    monkeypatch.delenv("FAKE_NO_HEURISTICS", raising=False)
    try:
        offered = [library.LibraryKernel(f"k{m}x{n}", None, None, key=(m, n, 32, 1, 1)) for m, n in ((128, 256), (256, 128))]
        assert [k.name for k in library.rank(offered, 4096, 4096, 4096, "bfloat16", 2)[0]] == ["k128x256", "k256x128"]
        assert [k.name for k in library.rank(offered, 4096, 4096, 4096, "bfloat16", 2, LINEAR)[0]] == ["k256x128", "k128x256"]
    finally:
        sys.modules.pop("nvMatmulHeuristics", None)


# --------------------------------------------------------------------------------------------------------------
# The children build B in the layout asked (the simulated GPU names the layout it was handed)


def fake_env(**more) -> dict:
    return {**os.environ, "PYTHONPATH": str(FAKE_GPU), **more}


def test_bench_both_layouts_times_each_with_its_own_kernel(policy, tmp_path):
    shapes = parse_shapes("16x4096x4096", parse_layout("both"))
    result = run_bench(PY, GOOD, policy, BenchOptions(shapes=shapes, budget_s=60), cache_dir=tmp_path / "cache",
                       env=fake_env())
    assert result.status is Status.PASS, (result.summary, Path(result.log).read_text())
    nvgemm = {m.shape.layout: m.kernel for m in result.measurements if m.backend == "NVGEMM"}
    assert nvgemm == {LINEAR: "cutedsl.Sm80TensorOpGemmKernel_tnt_fake", ROW_MAJOR: "cutedsl.Sm80TensorOpGemmKernel_ttt_fake"}
    assert [(v.shape.layout, v.verdict) for v in result.verdicts] == [(LINEAR, "loses"), (ROW_MAJOR, "loses")]
    assert result.decision.loses == ("16x4096x4096 linear (custom)", "16x4096x4096 row-major (custom)")
    saved = result.to_dict()
    assert {m["shape"]["layout"] for m in saved["measurements"]} == {LINEAR, ROW_MAJOR}
    code = sorted(p.name for p in (Path(result.log).parent / "code").iterdir())
    assert "16x4096x4096-linear-custom-NVGEMM.py" in code and "16x4096x4096-row-major-custom-NVGEMM.py" in code
    from envcheck.render import bench as render

    table = render.render(result, {"bench": saved}, "table")
    assert "16x4096x4096    linear     custom  NVGEMM" in table or " linear " in table.split("\n\n")[1]
    plan = json.loads((Path(result.log).parent / "plan.json").read_text())
    assert [s["layout"] for s in plan["shapes"]] == [LINEAR, ROW_MAJOR]


def test_library_builds_b_in_the_layout_and_ranks_for_it(policy, tmp_path):
    shapes = (Shape(4096, 4096, 4096, "square", LINEAR),)
    result = run_bench(PY, GOOD, policy, BenchOptions(shapes=shapes, budget_s=60, library=True),
                       cache_dir=tmp_path / "cache", env=fake_env())
    kernels = [m.kernel.rsplit("_", 1)[-1] for m in result.measurements if m.backend != "cuBLAS"]
    # nvMatmulHeuristics for B column-major: 256x128 ahead of 128x256 (row-major B: the other way round)
    assert kernels.index("tile256x128x32") < kernels.index("tile128x256x32"), kernels


def smoke(policy, tmp_path, layouts, **env):
    return run_smoke(PY, GOOD, policy, timeout=60, cache_dir=tmp_path / "cache", shape=SmokeShape(layouts=layouts),
                     env=fake_env(**env))


def test_the_default_smoke_proves_nn_linears_layout(policy, tmp_path):
    result = run_smoke(PY, GOOD, policy, timeout=60, cache_dir=tmp_path / "cache", env=fake_env())
    assert result.status is Status.PASS and result.kernel == "cutedsl.Sm80TensorOpGemmKernel_tnt_fake"
    assert result.shape == "256x512x256 bfloat16, B linear" and [g.layout for g in result.gemms] == [LINEAR]


def test_smoke_row_major_proves_the_row_major_kernel(policy, tmp_path):
    result = smoke(policy, tmp_path, (ROW_MAJOR,))
    assert result.status is Status.PASS and result.kernel == "cutedsl.Sm80TensorOpGemmKernel_ttt_fake"


def test_smoke_both_proves_a_gemm_per_layout(policy, tmp_path):
    result = smoke(policy, tmp_path, (LINEAR, ROW_MAJOR))
    assert result.status is Status.PASS, result.summary
    assert [(g.layout, g.kernel) for g in result.gemms] == [(LINEAR, "cutedsl.Sm80TensorOpGemmKernel_tnt_fake"),
                                                           (ROW_MAJOR, "cutedsl.Sm80TensorOpGemmKernel_ttt_fake")]
    assert result.kernel == result.gemms[0].kernel and all(g.run_s and g.max_error == 0 for g in result.gemms)
    assert "; B row-major: cutedsl.Sm80TensorOpGemmKernel_ttt_fake, run " in result.summary
    data = result.to_dict()
    assert [g["layout"] for g in data["gemms"]] == [LINEAR, ROW_MAJOR]
    run_dir = Path(result.log).parent
    assert (run_dir / "output_code-linear.py").is_file() and (run_dir / "output_code-row-major.py").is_file()
    from envcheck.render.smoke import render_text

    assert "  B row-major cutedsl.Sm80TensorOpGemmKernel_ttt_fake (nv_universal_gemm_fused_mm_0): run" in render_text(result)


def test_smoke_both_on_the_library_proves_each_layout(policy, tmp_path):
    result = run_smoke(PY, GOOD, policy, timeout=60, cache_dir=tmp_path / "cache", library=True,
                       shape=SmokeShape(layouts=(LINEAR, ROW_MAJOR)), env=fake_env())
    assert result.status is Status.PASS, result.summary
    assert [g.layout for g in result.gemms] == [LINEAR, ROW_MAJOR] and all(g.kernel for g in result.gemms)


def test_smoke_both_that_fails_on_the_second_layout_says_which(policy, tmp_path):
    # FAKE_WRONG=ttt: the simulated kernel miscomputes for row-major B only
    result = smoke(policy, tmp_path, (LINEAR, ROW_MAJOR), FAKE_WRONG="ttt")
    assert result.status is Status.FAIL and result.layout == ROW_MAJOR
    assert result.summary.startswith("smoke failed on B row-major (B linear passed): "), result.summary


def test_the_smoke_cli_refuses_a_bad_layout_before_anything_runs(tmp_path):
    done = subprocess.run([PY, "-m", "envcheck", "smoke", "--layout", "tnt"], capture_output=True, text=True,
                          timeout=60, env={**os.environ, "ENVCHECK_CACHE_DIR": str(tmp_path)})
    assert done.returncode == 2 and "--layout 'tnt': expected linear" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "smoke").exists()


# --------------------------------------------------------------------------------------------------------------
# bench --compare: a result saved before layouts (row-major B) against one in nn.Linear's layout


def _as_linear(path: Path, out: Path) -> Path:
    """The same run, its GEMMs said to be nn.Linear's layout (what a run with --layout linear writes)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    for item in data["bench"]["measurements"] + data["bench"]["verdicts"]:
        item["shape"]["layout"] = LINEAR
    out.write_text(json.dumps(data), encoding="utf-8")
    return out


def test_compare_never_pairs_rows_of_different_layouts_and_labels_them(tmp_path):
    before = read_result(H200_4 / "bench-llm-warm.json")  # saved before layouts: row-major B
    assert {m.shape.layout for m in before.result.measurements} == {ROW_MAJOR}
    linear = read_result(_as_linear(H200_4 / "bench-llm-warm.json", tmp_path / "linear.json"))
    comparison = compare([before, linear])
    assert labels([before, linear]) == ["B row-major", "B linear"]
    assert all(sum(f is not None for f in row.figures) == 1 for row in comparison.rows)  # none paired
    assert all(a is None for row in comparison.rows for a in row.against) and comparison.speedups == ((),)
    assert comparison.unpaired.startswith("rows of different layouts are not paired")
    assert "B row-major measured B row-major; B linear measured B linear" in comparison.unpaired
    same = compare([before, read_result(H200_4 / "bench-llm-warm.json")])
    assert same.unpaired == "" and any(a is not None for row in same.rows for a in row.against)


def test_compare_cli_prints_the_layouts_and_why_rows_are_alone(tmp_path):
    linear = _as_linear(H200_4 / "bench-llm-warm.json", tmp_path / "linear.json")
    done = subprocess.run([PY, "-m", "envcheck", "bench", "--compare", str(H200_4 / "bench-llm-warm.json"), str(linear)],
                          capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert "rows of different layouts are not paired" in done.stdout
    assert any(line.startswith("1x4096x4096      linear ") for line in done.stdout.splitlines())
    json_done = subprocess.run([PY, "-m", "envcheck", "bench", "--compare", str(H200_4 / "bench-llm-warm.json"),
                                str(linear), "--json"], capture_output=True, text=True, timeout=60, cwd=ROOT)
    data = json.loads(json_done.stdout)
    assert {row["shape"]["layout"] for row in data["rows"]} == {LINEAR, ROW_MAJOR} and data["unpaired"]


def test_a_saved_layout_that_is_not_one_is_refused():
    data = json.loads((H200_4 / "bench-llm-warm.json").read_text(encoding="utf-8"))
    data["bench"]["measurements"][0]["shape"]["layout"] = "tnt"
    with pytest.raises(UsageError, match=r"bench.measurements\[0\].shape.layout: expected one of linear, row-major"):
        parse_result(data, "x.json")
