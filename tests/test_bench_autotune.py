"""What Inductor's own pick (mix) costs: per shape beyond the noise, weighted totals, the backend to pin per class and
its snippet (envcheck.bench.autotune), --weights files (envcheck.bench.weights), and the cost in a single run's
report. On tables of rows at every boundary, and on the real runs of 2026-12-01 (tests/data/bench/h200-4)."""

from __future__ import annotations

import json
import subprocess
import sys
import types
from pathlib import Path

import pytest

from envcheck.bench import autotune
from envcheck.render import bench as render
from envcheck.bench.autotune import autotune_report
from envcheck.bench.classes import shape_class
from envcheck.bench.results import parse_result, read_result
from envcheck.bench.shapes import Shape
from envcheck.bench.weights import EQUAL, read_weights
from envcheck.errors import UsageError
from envcheck.redact import Redactor
from test_bench_analysis import judge, row
from test_bench_h200 import H200_1, replay

ROOT = Path(__file__).resolve().parents[1]
H200_4 = Path(__file__).parent / "data" / "bench" / "h200-4"
RECIPE, OPERATORS = H200_4 / "rec-llm-warm.json", H200_4 / "bench-llm-warm.json"
PY = sys.executable
DECODE = Shape(16, 4096, 4096, "llama-3.1-8b attn-proj")
PREFILL = Shape(2048, 4096, 4096, "llama-3.1-8b attn-proj")
BACKENDS = "ATEN,TRITON,NVGEMM"


def report_of(path: Path, weights=EQUAL):
    return autotune_report(read_result(path).result.verdicts, BACKENDS, weights)


def envcheck(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([PY, "-m", "envcheck", *args], cwd=cwd, capture_output=True, text=True, timeout=120)


# --------------------------------------------------------------------------------------------------------------
# The real runs


def test_on_the_operators_stack_the_pick_loses_on_9_shapes_mostly_per_call():
    """STACK.md section 8 counted 10 (the run's own verdicts); judged with the noise of the pair compared, the pick's
    call on 1x28672x8192 (9.3% slower than cuBLAS's) is within cuBLAS's own 10.2% spread there: 9."""
    report = report_of(OPERATORS)
    assert [c.shape.text for c in report.losses] == [
        "1x4096x4096", "16x4096x4096", "64x4096x4096", "1x4096x14336", "16x4096x14336", "2048x4096x14336",
        "1x8192x8192", "16x8192x8192", "64x8192x8192"]
    kernel = {c.shape.text: round(c.kernel_cost, 3) for c in report.losses if c.kernel_loss}
    assert kernel == {"2048x4096x14336": 0.101, "1x8192x8192": 0.048}  # picked ATEN over NVGEMM, TRITON over ATEN
    decode, prefill, whole = report.totals
    assert (decode.scope, len(decode.shapes), len(decode.losses)) == ("decode", 18, 8)
    assert 0.12 < decode.call_cost < 0.14 and decode.cost < 0.01  # the loss is the host's, not the kernels'
    assert decode.pin is None and decode.call_pin.backend == "TRITON" and 0.09 < decode.call_pin.fraction < 0.1
    assert prefill.losses == ("2048x4096x14336",) and prefill.pin is None
    assert whole.scope == "all" and len(whole.shapes) == 30


def test_on_the_recipe_stack_the_pick_loses_on_the_10_shapes_its_run_named_and_aten_alone_does_better_at_decode():
    saved = json.loads(RECIPE.read_text(encoding="utf-8"))["bench"]["verdicts"]
    named = [f"{v['shape']['m']}x{v['shape']['n']}x{v['shape']['k']}" for v in saved if v["mix_ok"] is False]
    report = report_of(RECIPE)
    assert [c.shape.text for c in report.losses] == named and len(named) == 10
    assert report.unmeasured == ("8192x8192x28672",)  # the budget ran out before its mix
    decode = report.total("decode")
    assert decode.pin.backend == "ATEN" and 0.01 < decode.pin.fraction < 0.015
    assert report.total("prefill").pin is None
    assert '# inductor_config.max_autotune_gemm_backends = "ATEN"' in report.snippet.splitlines()


def test_the_kernel_cost_counts_only_beyond_the_noise(monkeypatch):
    cost = next(c for c in report_of(OPERATORS).costs if c.shape.text == "1x28672x8192")
    assert round(cost.kernel_cost, 3) == 0.057 and round(cost.fastest.noise, 3) == 0.091 and not cost.kernel_loss
    monkeypatch.setattr(autotune, "noise", lambda *figures, known=(): 0.0)  # the rule switched off
    verdicts = read_result(OPERATORS).result.verdicts
    assert next(v for v in verdicts if v.shape.text == "1x28672x8192").mix_cost.kernel_loss


# --------------------------------------------------------------------------------------------------------------
# Per shape, at the boundaries


@pytest.mark.parametrize("mix_ms, spread, loss", [
    (0.1767, 0.005, False),  # 0.97% slower than cuBLAS: inside the 1% floor
    (0.1769, 0.005, True),  # 1.09% slower
    (0.1800, 0.03, False),  # 2.9% slower, inside the pick's own 3% spread
    (0.1820, 0.03, True),  # 4.0% slower
    (0.1830, 0.05, False),  # 4.6%, inside 5%
    (0.1855, 0.05, True),  # 6.0%
])
def test_the_pick_loses_a_shape_only_beyond_its_noise(mix_ms, spread, loss):
    rows = [row(backend="ATEN", ms=0.175, call=0.2), row(backend="TRITON", ms=0.193, call=0.2),
            row(backend="NVGEMM", ms=0.55, call=0.6), row(backend="mix", ms=mix_ms, spread=spread, call=0.2, choice="ATEN")]
    cost = judge(rows)[1][0].mix_cost
    assert cost.kernel_loss is loss and judge(rows)[1][0].mix_ok is not loss
    assert cost.fastest.backend == "ATEN" and cost.pick == "ATEN" and not cost.call_loss


@pytest.mark.parametrize("mix_ms, verdict", [
    (0.1767, "same"), (0.1770, "slower per kernel"), (0.1730, "faster per kernel"), (0.1750, "same"),
])
def test_the_pick_against_the_fastest_single_backend(mix_ms, verdict):
    rows = [row(backend="ATEN", ms=0.175, call=0.2), row(backend="TRITON", ms=0.193, call=0.2),
            row(backend="mix", ms=mix_ms, call=0.2)]
    cost = judge(rows)[1][0].mix_cost
    from envcheck.render.bench_autotune import _verdict

    assert (_verdict(cost) or "same") == verdict
    excess = cost.excess()
    assert (excess > 0, excess < 0) == (verdict == "slower per kernel", verdict == "faster per kernel")


@pytest.mark.parametrize("mix_call, loss", [(0.0262, False), (0.0263, True)])  # 5% floor of call times
def test_the_pick_loses_per_call_beyond_the_call_noise(mix_call, loss):
    rows = [row(DECODE, "ATEN", ms=0.018, call=0.025), row(DECODE, "TRITON", ms=0.02, call=0.03),
            row(DECODE, "mix", ms=0.018, call=mix_call, choice="ATEN")]
    cost = judge(rows)[1][0].mix_cost
    assert cost.call_loss is loss and cost.quickest.backend == "ATEN" and not cost.kernel_loss


@pytest.mark.parametrize("m, scope", [(1, "decode"), (64, "decode"), (65, "prefill"), (8192, "prefill")])
def test_shape_classes(m, scope):
    assert shape_class(Shape(m, 4096, 4096)) == scope


# --------------------------------------------------------------------------------------------------------------
# Totals, weights, pins


def _two_classes(decode_mix: float, prefill_mix: float, decode_choice: str = "TRITON"):
    rows = [row(DECODE, "ATEN", ms=0.018, call=0.03), row(DECODE, "TRITON", ms=0.02, call=0.03),
            row(DECODE, "NVGEMM", ms=0.03, call=0.3), row(DECODE, "mix", ms=decode_mix, call=0.03, choice=decode_choice),
            row(PREFILL, "ATEN", ms=0.09, call=0.09), row(PREFILL, "TRITON", ms=0.097, call=0.097),
            row(PREFILL, "NVGEMM", ms=0.088, call=0.088), row(PREFILL, "mix", ms=prefill_mix, call=prefill_mix, choice="ATEN")]
    return judge(rows)[1]


def test_totals_are_weighted_by_how_often_each_shape_runs(tmp_path):
    verdicts = _two_classes(decode_mix=0.02, prefill_mix=0.0885)  # decode: picked TRITON, 11% slower than ATEN
    equal = autotune_report(verdicts, BACKENDS)
    decode, prefill, whole = equal.totals
    assert decode.excess_ms == pytest.approx(0.002) and decode.cost == pytest.approx(0.002 / 0.018)
    assert prefill.excess_ms == 0 and prefill.pin is None  # 0.6% slower than NVGEMM: within the noise
    assert whole.excess_ms == pytest.approx(0.002) and whole.mix_ms == pytest.approx(0.02 + 0.0885)
    weights = tmp_path / "trace.txt"
    weights.write_text("# calls per shape in one trace\n16x4096x4096  1000\n2048x4096x4096 10\n", encoding="utf-8")
    counted = autotune_report(verdicts, BACKENDS, read_weights(weights))
    whole = counted.total("all")
    assert whole.excess_ms == pytest.approx(1000 * 0.002)
    assert whole.mix_ms == pytest.approx(1000 * 0.02 + 10 * 0.0885)
    assert whole.cost == pytest.approx(2.0 / (1000 * 0.018 + 10 * 0.0885))
    assert counted.total("decode").pin.backend == "ATEN"
    assert counted.total("decode").pin.saving_ms == pytest.approx(1000 * 0.002)


def test_a_prefill_pick_slower_than_nvgemm_beyond_the_noise_pins_nvgemm_for_prefill():
    verdicts = _two_classes(decode_mix=0.018, prefill_mix=0.092, decode_choice="ATEN")
    report = autotune_report(verdicts, BACKENDS)
    assert report.total("decode").pin is None and report.total("decode").losses == ()
    prefill = report.total("prefill")
    assert prefill.losses == ("2048x4096x4096",) and prefill.pin.backend == "NVGEMM"
    lines = report.snippet.splitlines()
    assert "# a prefill-only process (M > 64): the pick cost +4.5% of kernel time and +0.0% per call" in lines
    assert '# inductor_config.max_autotune_gemm_backends = "NVGEMM"' in lines


def test_a_class_whose_shapes_were_not_all_measured_gets_its_cost_and_no_pin():
    """The budget ran out before a second decode shape's pick: decode's cost is over what was measured, and no pin
    rests on part of the class (prefill, measured whole, keeps its pin); so does the scope of every shape."""
    verdicts = _two_classes(decode_mix=0.018, prefill_mix=0.092, decode_choice="ATEN")
    cut = Shape(64, 4096, 4096, "llama-3.1-8b attn-proj")
    later = judge([row(cut, "ATEN", ms=0.02, call=0.03), row(cut, "mix", status="skipped", ms=0.0, kernel_ms=None, call_ms=None)])[1]
    report = autotune_report([*verdicts, *later], BACKENDS)
    assert report.unmeasured == ("64x4096x4096",)
    assert not report.total("decode").complete and report.total("decode").pin is None
    assert report.total("prefill").complete and report.total("prefill").pin.backend == "NVGEMM"
    assert not report.total("all").complete and report.total("all").pin is None
    lines = report.snippet.splitlines()
    assert '# inductor_config.max_autotune_gemm_backends = "NVGEMM"' in lines
    assert lines.count("#   not every shape of it was measured (the budget ran out first): no backend is pinned") == 2


def test_weights_leave_out_shapes_they_do_not_list_and_name_those_not_measured(tmp_path):
    verdicts = _two_classes(decode_mix=0.02, prefill_mix=0.0885)  # only decode loses
    weights = tmp_path / "w.json"
    weights.write_text('{"2048x4096x4096": 5, "1x4096x4096": 7}', encoding="utf-8")
    report = autotune_report(verdicts, BACKENDS, read_weights(weights))
    assert [t.scope for t in report.totals] == ["prefill"] and report.not_in_bench == ("1x4096x4096",)
    assert report.snippet == ""  # the pick lost nothing where the workload runs


def test_no_loss_no_snippet_and_a_snippet_that_runs():
    assert autotune_report(_two_classes(decode_mix=0.018, prefill_mix=0.088, decode_choice="ATEN"), BACKENDS).snippet == ""
    snippet = autotune_report(_two_classes(decode_mix=0.02, prefill_mix=0.09), BACKENDS).snippet
    config = types.ModuleType("torch._inductor.config")
    package = types.ModuleType("torch._inductor")
    package.config = config
    torch = types.ModuleType("torch")
    torch._inductor = package
    saved = {k: sys.modules.get(k) for k in ("torch", "torch._inductor", "torch._inductor.config")}
    sys.modules.update({"torch": torch, "torch._inductor": package, "torch._inductor.config": config})
    try:
        exec(compile(snippet, "snippet", "exec"), {})
        for line in snippet.splitlines():  # each pin, uncommented, is Python too
            if "max_autotune_gemm_backends =" in line:
                exec(compile("import torch._inductor.config as inductor_config\n" + line.lstrip("# "), "pin", "exec"), {})
    finally:
        for key, value in saved.items():
            if value is None:
                sys.modules.pop(key, None)
            else:
                sys.modules[key] = value
    assert config.max_autotune is True and config.max_autotune_gemm_backends == "ATEN"


@pytest.mark.parametrize("name, content", [
    ("w.txt", "16x4096x4096 1000  # decode\n\n2048x4096x4096 2.5\n"),
    ("w.json", '{"16x4096x4096": 1000, "2048x4096x4096": 2.5}'),
    ("w.toml", '"16x4096x4096" = 1000\n"2048x4096x4096" = 2.5\n'),
])
def test_weights_files(tmp_path, name, content):
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    weights = read_weights(path)
    assert weights.of(DECODE) == 1000 and weights.of(PREFILL) == 2.5 and weights.of(Shape(1, 2, 3)) == 0


@pytest.mark.parametrize("name, content, words", [
    ("w.txt", "16x4096x4096 10\n1x4096 12\n", "w.txt:2: '1x4096' is not a shape; expected MxNxK"),
    ("w.txt", "16x4096x4096\n", "w.txt:1: '16x4096x4096': expected 'MxNxK COUNT'"),
    ("w.txt", "# a trace\n16x4096x4096 -1\n", "w.txt:2: '-1': expected a count, a number >= 0"),
    ("w.txt", "16x4096x4096 many\n", "w.txt:1: 'many': expected a count"),
    ("w.txt", "16x4096x4096 nan\n", "w.txt:1: 'nan': expected a count"),
    ("w.txt", "16x4096x4096 1 2\n", "w.txt:1: '1' is not a layout; expected linear or row-major"),
    ("w.txt", "16x4096x4096 linear 1 2\n", "w.txt:1: '16x4096x4096 linear 1 2': expected 'MxNxK COUNT' or 'MxNxK LAYOUT COUNT'"),
    ("w.txt", "16x4096x4096 1\n16X4096X4096 2\n", "w.txt:2: 16x4096x4096 is listed twice (first at --weights"),
    ("w.txt", "16x4096x4096 0\n", "no shape with a count above 0"),
    ("w.txt", "", "no shape with a count above 0"),
    ("w.json", '{"16x4096x4096": 1,', "w.json:1: not valid JSON"),
    ("w.json", '{"16x4096x4096": "10"}', "w.json: '16x4096x4096': expected a count"),
    ("w.json", '{"16x4096x4096": true}', "w.json: '16x4096x4096': expected a count"),
    ("w.json", '{"16x4096x4096": 1, "16x4096x4096": 2}', "'16x4096x4096' is listed twice"),
    ("w.json", '[["16x4096x4096", 1]]', "w.json: expected a map of \"MxNxK\" to a count, found list"),
    ("w.toml", '"16x4096x4096" = [1]\n', "w.toml: '16x4096x4096': expected a count"),
    ("w.toml", '16x4096x4096 = \n', "w.toml: not valid TOML"),
])
def test_bad_weights_are_refused_naming_the_file_and_line(tmp_path, name, content, words):
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    with pytest.raises(UsageError) as error:
        read_weights(path)
    assert str(error.value).startswith(f"--weights {path}") and words in str(error.value)


def test_compare_with_weights_from_a_file(tmp_path):
    weights = tmp_path / "decode.txt"
    weights.write_text("".join(f"{m}x{n}x{k} 1000\n" for m in (1, 16, 64)
                               for n, k in ((4096, 4096), (14336, 4096), (4096, 14336))), encoding="utf-8")
    done = envcheck("bench", "--compare", str(RECIPE), str(OPERATORS), "--weights", str(weights), "--format", "json")
    assert done.returncode == 0, done.stderr
    mine = json.loads(done.stdout)["autotune"]["A"]
    assert mine["weights"]["source"] == Redactor()(str(weights)) and len(mine["weights"]["counts"]) == 9
    assert [t["scope"] for t in mine["totals"]] == ["decode"] and len(mine["totals"][0]["shapes"]) == 9
    expected = report_of(RECIPE, read_weights(weights)).total("decode")
    assert mine["totals"][0]["excess_ms"] == pytest.approx(expected.excess_ms) and expected.excess_ms > 0


@pytest.mark.parametrize("argv", [
    ["bench", "--weights", "{bad}"],  # before any GPU or interpreter is looked at
    ["bench", "--compare", str(RECIPE), str(OPERATORS), "--weights", "{bad}"],
])
def test_bad_weights_exit_2_naming_file_and_line(tmp_path, argv):
    bad = tmp_path / "bad.txt"
    bad.write_text("16x4096x4096 100\n2048x4096 7\n", encoding="utf-8")
    done = envcheck(*[a.replace("{bad}", str(bad)) for a in argv])
    assert done.returncode == 2 and f"--weights {bad}:2: '2048x4096' is not a shape" in done.stderr
    assert done.stdout == "" and "Traceback" not in done.stderr


# --------------------------------------------------------------------------------------------------------------
# In a single run's report


def test_a_single_run_reports_the_cost_of_the_pick_and_saves_it(policy, tmp_path):
    result = replay(policy, tmp_path, H200_1 / "anchors-cold.log")
    report = result.autotune
    assert report is not None and [c.shape.text for c in report.costs] == ["4096x4096x4096", "8192x8192x8192", "16x4096x4096"]
    table = render.render(result, {}, "table")
    assert "Inductor's own pick among ATEN,TRITON,NVGEMM (mix) against the best single backend" in table
    assert table.index("Inductor's own pick") < table.index("decision:")
    data = {"schema_version": 1, "profile": policy.id, "bench": result.to_dict()}
    saved = json.loads(json.dumps(data))
    assert saved["bench"]["autotune"]["backends"] == BACKENDS
    assert saved["bench"]["verdicts"][1]["drift"] == pytest.approx(result.verdicts[1].drift)
    assert result.verdicts[1].drift > 0.1  # 8192^3: the repeat 12% apart (test_bench_h200)
    again = parse_result(saved, "saved.json")  # what this version saves, it reads back: the same verdicts
    assert again.drift_saved and [v.to_dict() for v in again.result.verdicts] == [v.to_dict() for v in result.verdicts]


def test_a_single_run_totals_its_pick_with_the_weights_given(policy, tmp_path):
    weights = tmp_path / "w.txt"
    weights.write_text("16x4096x4096 50\n", encoding="utf-8")
    result = replay(policy, tmp_path / "run", H200_1 / "anchors-cold.log", weights=read_weights(weights))
    weighted = result.autotune
    assert [t.scope for t in weighted.totals] == ["decode"] and weighted.totals[0].mix_ms == pytest.approx(
        50 * next(c.kernel_ms for c in weighted.costs if c.shape.text == "16x4096x4096"))
    assert f"weights: {weights} (1 shapes)" in render.render(result, {}, "table")
