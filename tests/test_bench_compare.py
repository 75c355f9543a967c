"""envcheck bench --compare on the real runs of 2026-12-01 (tests/data/bench/h200-4: the llm set on one H200, the
recipe stack on torch 2.11 and the operators stack on torch 2.14.1, cold and warm, as captured), older results
(h200-1, h200-2), and files that are not bench results; the reader of saved results; the plot."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from envcheck.bench import noise
from envcheck.bench.compare import compare, labels
from envcheck.render.bench_compare import render_comparison
from envcheck.bench.results import parse_result, read_result
from envcheck.bench.shapes import llm_shapes
from envcheck.errors import UsageError

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(__file__).parent / "data" / "bench"
H200_4 = DATA / "h200-4"
RECIPE, OPERATORS = H200_4 / "rec-llm-warm.json", H200_4 / "bench-llm-warm.json"
PY = sys.executable


def envcheck(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([PY, "-m", "envcheck", *args], cwd=cwd, capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def warm():
    return compare([read_result(RECIPE), read_result(OPERATORS)])


def speedup(found, backend, scope):
    return next(s for s in found if s.backend == backend and s.scope == scope)


# --------------------------------------------------------------------------------------------------------------
# The two stacks side by side


def test_compare_of_the_two_warm_runs_shows_every_shape_and_prefers_the_operators_stack(tmp_path):
    plot = tmp_path / "compare.png"
    done = envcheck("bench", "--compare", str(RECIPE), str(OPERATORS), "--plot", str(plot))
    assert done.returncode == 0, done.stderr
    table = done.stdout
    lines = table.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("shape ") and " backend " in line)
    rows = [line.split() for line in lines[start + 1:lines.index("", start)]]
    assert len(rows) == 120
    for shape in llm_shapes():  # every shape of the llm set, each backend on its own row
        mine = [r for r in rows if r[0] == shape.text]
        assert [r[4] for r in mine] == ["ATEN", "TRITON", "NVGEMM", "mix"], shape.text
        assert {r[1] for r in mine} == {"row-major"}  # saved before layouts were named: row-major B
    assert "A  torch 2.11.0, cutlass_api 0.1.0a1" in table and "B  torch 2.14.1, cutlass.operators 0.3.0" in table
    assert ("prefer torch 2.14.1, cutlass.operators 0.3.0 for NVGEMM: 2.51x as fast as torch 2.11.0, cutlass_api "
            "0.1.0a1") in table
    assert "prefill (M > 64) 2.05x" in table  # about 2x at the large shapes
    assert plot.read_bytes().startswith(b"\x89PNG") and "plot written to" in done.stderr


def test_nvgemm_is_about_twice_as_fast_on_the_operators_stack_at_large_shapes_and_cublas_is_not(warm):
    found = warm.speedups[0]
    prefill = speedup(found, "NVGEMM", "prefill")
    assert 1.8 < prefill.geomean < 2.3 and prefill.low > 1.8 and prefill.faster == prefill.shapes == 12
    assert speedup(found, "NVGEMM", "decode").geomean > 2.5  # the Sm80 kernels were worst at decode
    aten = speedup(found, "ATEN", "all")  # the same GPU: cuBLAS reads alike on both stacks
    assert 0.99 < aten.geomean < 1.02 and aten.slower == 0 and aten.same >= 25
    assert warm.preference.best == 1
    # the decision metric within each: NVGEMM against its own cuBLAS (STACK.md section 8: 0.67-1.09x on 2.14.1)
    recipe, operators = (speedup(found, "NVGEMM", "all") for found in warm.vs_cublas)
    assert recipe.high < 0.6 and recipe.slower == 30
    assert round(operators.low, 2) == 0.67 and round(operators.high, 2) == 1.09 and operators.faster == 3


def test_the_operators_stack_as_reference_prefers_itself_by_the_same_factor():
    found = compare([read_result(OPERATORS), read_result(RECIPE)])
    assert found.preference.best == 0
    assert found.preference.text.startswith("prefer torch 2.14.1, cutlass.operators 0.3.0 for NVGEMM: 2.51x as fast")


@pytest.mark.parametrize("shape, backend, ratio, verdict", [
    ("2048x4096x4096", "ATEN", 1.01, "same"),  # 1.2% apart, noise 2.6%
    ("8192x14336x4096", "ATEN", 0.99, "same"),  # 1.3% slower, noise 2.6%
    ("1x14336x4096", "mix", 1.04, "same"),  # 3.6% faster, noise 4.0%
    ("2048x4096x4096", "TRITON", 1.03, "faster"),  # 3.4% faster, noise 2.6%
    ("64x4096x4096", "TRITON", 0.84, "slower"),
])
def test_a_difference_counts_only_beyond_both_runs_noise(warm, shape, backend, ratio, verdict):
    row = next(r for r in warm.rows if r.shape.text == shape and r.backend == backend)
    assert round(row.against[0].ratio, 2) == ratio and row.against[0].verdict == verdict


def test_without_the_noise_rule_the_verdicts_of_real_rows_flip(monkeypatch):
    """The noise rule is what keeps these real pairs "same": with it switched off, they differ."""
    monkeypatch.setattr(noise, "noise", lambda *figures, known=(): 0.0)
    found = compare([read_result(RECIPE), read_result(OPERATORS)])
    verdicts = {(r.shape.text, r.backend): r.against[0].verdict for r in found.rows if r.against[0]}
    assert verdicts[("2048x4096x4096", "ATEN")] == "faster"
    assert verdicts[("8192x14336x4096", "ATEN")] == "slower"
    assert verdicts[("1x14336x4096", "mix")] == "faster"


def test_each_result_is_labelled_by_what_differs():
    recipe, operators = read_result(RECIPE), read_result(H200_4 / "bench-llm-cold.json")
    assert labels([recipe, operators]) == ["torch 2.11.0, cutlass_api 0.1.0a1", "torch 2.14.1, cutlass.operators 0.3.0"]
    # the same stack cold and warm: nothing differs but the file
    assert labels([operators, read_result(OPERATORS)]) == ["bench-llm-cold.json", "bench-llm-warm.json"]
    # two files of the same name: the folder tells them apart
    older = [read_result(DATA / "h200-1" / "anchors-cold.json"), read_result(DATA / "h200-2" / "anchors-cold.json")]
    assert labels(older) == ["h200-1/anchors-cold.json", "h200-2/anchors-cold.json"]


def test_results_of_older_envcheck_versions_are_read():
    # h200-1: before call_spread, mode and do_bench_gap; h200-2: before do_bench_gap; h200-4: before a verdict's drift
    found = compare([read_result(DATA / "h200-1" / "anchors-cold.json"), read_result(DATA / "h200-2" / "anchors-warm.json"),
                     read_result(OPERATORS)])
    assert len(found.environments) == 3 and len(found.speedups) == 2
    assert {r.shape.text for r in found.rows} >= {"4096x4096x4096", "16x4096x4096", "1x4096x4096"}
    text = render_comparison(found, "table")
    assert "C/A" in text and "B against A" in text and "C against A" in text
    # the decode anchor is one GEMM in all three, whatever each run labelled it
    nvgemm = next(r for r in found.rows if r.shape.text == "16x4096x4096" and r.backend == "NVGEMM")
    assert nvgemm.shape.label == "llama-3.1-8b attn-proj" and all(a is not None for a in nvgemm.against)
    assert nvgemm.against[1].verdict == "faster" and nvgemm.against[1].ratio > 3  # Sm90 against Sm80 at decode


def test_a_saved_result_read_back_gives_the_verdicts_it_was_saved_with():
    """Judged again by today's rule, with each verdict's saved noise bounding its drift: the same verdicts. One
    difference, on purpose: on 1x28672x8192 the pick's call was 9.3% slower than cuBLAS's call, within that pair's
    noise (cuBLAS's kernel spread there: 10.2%); the saved verdict had taken the noise of the pick against TRITON."""
    for path in sorted(H200_4.glob("*.json")):
        saved = json.loads(path.read_text(encoding="utf-8"))["bench"]["verdicts"]
        run = read_result(path)
        assert not run.drift_saved
        again = {v.shape.text: v for v in run.result.verdicts}
        for verdict in saved:
            mine = again[f"{verdict['shape']['m']}x{verdict['shape']['n']}x{verdict['shape']['k']}"]
            assert (mine.verdict, mine.noise) == (verdict["verdict"], verdict["noise"])
            if (path.name, mine.shape.text) != ("bench-llm-warm.json", "1x28672x8192"):
                assert mine.mix_ok == verdict["mix_ok"], (path.name, mine.shape.text)
            else:
                assert (verdict["mix_ok"], mine.mix_ok) == (False, True)


def test_the_readme_quotes_the_real_compare_table():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    start = readme.index("envcheck bench --compare rec-llm-warm.json bench-llm-warm.json`\n\n```\n")
    quoted = readme[start:].split("```\n", 2)[1].splitlines()
    done = envcheck("bench", "--compare", "rec-llm-warm.json", "bench-llm-warm.json", cwd=H200_4)
    assert done.returncode == 0, done.stderr
    real = done.stdout.splitlines()
    assert len(quoted) > 15 and [line for line in quoted if line not in real] == []


@pytest.mark.parametrize("output_format", ["json", "markdown"])
def test_json_and_markdown(output_format):
    done = envcheck("bench", "--compare", str(RECIPE), str(OPERATORS), "--format", output_format)
    assert done.returncode == 0, done.stderr
    if output_format == "json":
        data = json.loads(done.stdout)
        assert data["schema_version"] == 1 and data["kind"] == "bench-compare" and data["reference"] == "A"
        assert [e["label"] for e in data["environments"]] == ["torch 2.11.0, cutlass_api 0.1.0a1",
                                                              "torch 2.14.1, cutlass.operators 0.3.0"]
        assert len(data["rows"]) == 120 and data["preference"]["best"] == "B"
        nvgemm = [s for s in data["against_reference"]["B"] if s["backend"] == "NVGEMM" and s["scope"] == "prefill"]
        assert 1.8 < nvgemm[0]["geomean"] < 2.3
        assert len(data["autotune"]["B"]["losses"]) == 9
    else:
        assert "| 64x4096x14336 | row-major | llama-3.1-8b mlp-down | NVGEMM | 0.2388 | 0.04381 |" in done.stdout
        assert "**prefer torch 2.14.1, cutlass.operators 0.3.0 for NVGEMM" in done.stdout


# --------------------------------------------------------------------------------------------------------------
# What is not a bench result: exit 2, the file named, nothing drawn


def _mutated(tmp_path: Path, change) -> Path:
    data = json.loads(OPERATORS.read_text(encoding="utf-8"))
    change(data)
    path = tmp_path / "mutated.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def _set(path: str, value):
    def change(data):
        *parents, last = path.split(".")
        node = data
        for key in parents:
            node = node[int(key)] if key.isdigit() else node[key]
        node[int(last) if last.isdigit() else last] = value
    return change


@pytest.mark.parametrize("change, words", [
    (_set("schema_version", 3), "schema_version 3 is not one this envcheck reads (it reads 1, 2"),
    (_set("schema_version", "1"), 'schema_version "1" is not one this envcheck reads'),
    (_set("bench", None), 'not an envcheck bench result (no "schema_version" with a "bench" object)'),
    (_set("bench.measurements.0.kernel_ms", "fast"), 'bench.measurements[0].kernel_ms: expected a number or null, found "fast"'),
    (_set("bench.measurements.0.kernel_ms", None), "bench.measurements[0].kernel_ms: expected a time above 0 (the status is ok)"),
    (_set("bench.measurements.3.status", "great"), "bench.measurements[3].status: expected one of ok, refused"),
    (_set("bench.measurements.5.shape.m", 0), "bench.measurements[5].shape.m: expected an integer from 1 to 131072"),
    (_set("bench.measurements.5.shape.k", 4096.0), "bench.measurements[5].shape.k: expected an integer, found 4096.0"),
    (_set("bench.measurements.7.warm", "yes"), "bench.measurements[7].warm: expected true or false or null"),
    (_set("bench.measurements", {}), "bench.measurements: expected a list"),
    (_set("bench.measurements", []), "a bench result with no measurements"),
    (_set("bench.verdicts.2.noise", None), "bench.verdicts[2].noise: expected a number, found null"),
    (_set("bench.dtype", "int8"), "bench.dtype: expected one of bfloat16, float16"),
    (_set("bench.versions", {"torch": 2.14}), "bench.versions: expected an object of version strings"),
    (_set("bench.gpu.capability", [9]), "bench.gpu.capability: expected [major, minor]"),
])
def test_a_result_that_is_not_one_is_refused_naming_the_file_and_the_field(tmp_path, change, words):
    path = _mutated(tmp_path, change)
    with pytest.raises(UsageError) as error:
        read_result(path)
    assert str(error.value).startswith(f"{path}: ") and words in str(error.value)


@pytest.mark.parametrize("content, words", [
    ("envcheck-bench: row {}\n", "not valid JSON (line 1, column 1: Expecting value); expected the output of"),
    ('{"schema_version": 2, "profile": {"id": "torch-2.11-nvgemm"}, "checks": []}', "not an envcheck bench result"),
    ("[1, 2]", "not an envcheck bench result"),
    ("", "not valid JSON"),
])
def test_compare_exits_2_on_a_file_that_is_not_a_bench_result(tmp_path, content, words):
    other = tmp_path / "other.json"
    other.write_text(content, encoding="utf-8")
    plot = tmp_path / "never.png"
    done = envcheck("bench", "--compare", str(RECIPE), str(other), "--plot", str(plot))
    assert done.returncode == 2 and done.stdout == ""
    assert f"envcheck: error: {other}: {words}" in done.stderr and "Traceback" not in done.stderr
    assert not plot.exists()


def test_o_writes_the_report_and_plot_the_plot(tmp_path):
    """-o is the output file, as on every command; the plot has its own flag."""
    pytest.importorskip("matplotlib")
    report, plot = tmp_path / "out" / "compare.json", tmp_path / "compare.svg"
    report.parent.mkdir()  # envcheck makes no folder for -o
    done = envcheck("bench", "--compare", str(RECIPE), str(OPERATORS), "--json", "-o", str(report), "--plot", str(plot))
    assert done.returncode == 0 and done.stdout == "", done.stderr
    assert json.loads(report.read_text(encoding="utf-8"))["kind"] == "bench-compare"
    assert plot.read_bytes().startswith(b"<?xml")
    table = envcheck("bench", "--compare", str(RECIPE), str(OPERATORS), "-o", str(tmp_path / "compare.txt"))
    assert table.returncode == 0 and (tmp_path / "compare.txt").read_text(encoding="utf-8").startswith("bench --compare")


@pytest.mark.parametrize("argv, words", [
    (["--compare", str(RECIPE)], "--compare: expected two to 26 bench results"),
    ([str(RECIPE), str(OPERATORS)], "saved results are read with --compare"),
    (["--compare", str(RECIPE), "missing.json"], "missing.json: cannot read it"),
    (["--compare", str(RECIPE), str(OPERATORS), "--plot", "plot.pdf"], "--plot plot.pdf: expected a file name ending in .png or .svg"),
    (["--compare", str(RECIPE), str(OPERATORS), "--format", "csv"], "--format 'csv': expected one of table, json, markdown"),
    (["--compare", str(RECIPE), str(OPERATORS), "--plot", "/nonexistent/folder/p.png"], "--plot /nonexistent/folder/p.png: the folder /nonexistent/folder does not exist"),
])
def test_compare_usage(tmp_path, argv, words):
    done = envcheck("bench", *argv, cwd=tmp_path) if "missing.json" in argv else envcheck("bench", *argv)
    assert done.returncode == 2 and words in done.stderr and done.stdout == "" and "Traceback" not in done.stderr


@pytest.mark.parametrize("count, code", [(2, 0), (26, 0), (27, 2), (40, 2)])
def test_compare_takes_up_to_26_results_one_letter_each(count, code):
    done = envcheck("bench", "--compare", *[str(RECIPE)] * count)
    assert done.returncode == code and "Traceback" not in done.stderr, done.stderr[-1000:]
    if code == 0:
        assert "  Z " in done.stdout or count < 26
    else:
        assert f"--compare: expected two to 26 bench results (`envcheck bench --json > FILE`; the comparison names each " \
               f"by a letter, A to Z), got {count}" in done.stderr


def test_a_failed_bench_is_refused_with_what_it_said():
    data = json.loads((DATA / "h200-2" / "no-cuda.json").read_text(encoding="utf-8"))
    with pytest.raises(UsageError, match="no-cuda.json: a bench result with no measurements .*torch sees no CUDA device"):
        parse_result(data, "no-cuda.json")


# --------------------------------------------------------------------------------------------------------------
# The plot


@pytest.mark.parametrize("suffix, magic", [(".png", b"\x89PNG"), (".svg", b"<?xml")])
def test_the_compare_plot_draws_each_stack_against_its_own_cublas(tmp_path, suffix, magic):
    pytest.importorskip("matplotlib")
    from envcheck.render.bench_plot import plot_comparison

    found = compare([read_result(RECIPE), read_result(OPERATORS)])
    path = tmp_path / f"compare{suffix}"
    plot_comparison(found, path)
    assert path.read_bytes().startswith(magic)
    if suffix == ".svg":
        text = path.read_text(encoding="utf-8")
        for words in ("decode (M &lt;= 64)", "prefill (M &gt; 64)", "noise band", "dense peak 989.4 TF/s",
                      "NVGEMM: torch 2.14.1, cutlass.operators 0.3.0", "llama-3.1-70b", "mlp-down", "M=2048"):
            assert words in text, words


def test_the_plot_needs_matplotlib_and_names_the_distribution(tmp_path):
    code = ("import sys; sys.modules['matplotlib'] = None\n"  # as if it were not installed
            f"from envcheck.cli import main\nsys.exit(main(['bench', '--compare', {str(RECIPE)!r}, {str(OPERATORS)!r}, "
            f"'--plot', {str(tmp_path / 'p.png')!r}]))\n")
    done = subprocess.run([PY, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "pip install 'nvgemm-envcheck[plot]'" in done.stderr and done.stdout == ""
