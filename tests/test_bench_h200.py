"""envcheck bench on real output of the bench child, captured on an NVIDIA H200 with the recipe stack (torch 2.11.0
+cu130, cutlass_api at e594def95, nvidia-cutlass-dsl 4.3.5): tests/data/bench/README.md says how. The child's logs
are replayed by a small child process, so the parent, the analysis and the decision run exactly as on the GPU."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

import factsbuilder as fb
from envcheck.bench.result import BenchOptions
from envcheck.bench import analysis, run_bench
from envcheck.inside import bench_child, protocol
from envcheck.bench.data import peak_for
from envcheck.bench.shapes import Shape
from envcheck.bench.weights import EQUAL
from envcheck.inside.protocol import result_lines
from envcheck.model import Status

H200_1 = Path(__file__).parent / "data" / "bench" / "h200-1"
H200_3 = Path(__file__).parent / "data" / "bench" / "h200-3"  # the sustained-state timing (README: h200-3)
GOOD = fb.facts(driver=fb.driver(gpus=[fb.gpu(capability=(9, 0), name="NVIDIA H200")]))
PEAK = peak_for("NVIDIA H200")
ANCHORS = (Shape(4096, 4096, 4096, "custom"), Shape(8192, 8192, 8192, "custom"), Shape(16, 4096, 4096, "custom"))


def replay(policy, tmp_path: Path, log: Path, shapes=ANCHORS, budget=150.0, weights=EQUAL):
    lines = [line for line in log.read_text(encoding="utf-8").splitlines() if not line.startswith("#")]
    tmp_path.mkdir(parents=True, exist_ok=True)
    child = tmp_path / "child.py"
    child.write_text(f"import sys\nsys.stdout.write({chr(10).join(lines) + chr(10)!r})\n", encoding="utf-8")
    return run_bench(sys.executable, GOOD, policy, BenchOptions(shapes=shapes, budget_s=budget, weights=weights),
                     cache_dir=tmp_path / "cache", child=child)


def rows(log: str, capture: Path = H200_1) -> list[dict]:
    return result_lines((capture / log).read_text(encoding="utf-8"), protocol.BENCH_ROW)


def by_shape(result) -> dict:
    return {(m.shape.m, m.shape.n, m.shape.k, m.backend): m for m in result.measurements}


def test_the_anchors_cold_give_the_true_verdicts(policy, tmp_path):
    result = replay(policy, tmp_path, H200_1 / "anchors-cold.log")
    assert result.status is Status.PASS and result.gpu == "NVIDIA H200" and result.capability == (9, 0)
    found = by_shape(result)
    assert all(m.status == "ok" for m in result.measurements)
    assert max(m.tflops for m in result.measurements) < 989.4  # nothing above the dense peak
    # issue 9's anchors: cuBLAS ~785 TF/s at 4096^3, Triton ~713, NVGEMM with the Sm80 kernels far below
    assert 760 < found[(4096, 4096, 4096, "ATEN")].tflops < 800
    assert 700 < found[(4096, 4096, 4096, "TRITON")].tflops < 740
    assert found[(4096, 4096, 4096, "NVGEMM")].tflops < 400 and found[(8192, 8192, 8192, "NVGEMM")].tflops < 400
    assert found[(4096, 4096, 4096, "NVGEMM")].kernel.startswith("cutedsl.Sm80TensorOpGemmKernel")
    # NVGEMM with Sm80 kernels loses on the large shapes, and on decode
    assert [v.verdict for v in result.verdicts] == ["loses", "loses", "loses"]
    assert [v.mix_choice for v in result.verdicts] == ["ATEN", "ATEN", "TRITON"]
    assert not result.decision.enable and result.decision.loses == tuple(s.described for s in ANCHORS)
    assert 'max_autotune_gemm_backends = "ATEN,TRITON"' in result.decision.snippet


def test_decode_shows_nvgemm_host_overhead_apart_from_its_kernel_time(policy, tmp_path):
    nvgemm = by_shape(replay(policy, tmp_path, H200_1 / "anchors-cold.log"))[(16, 4096, 4096, "NVGEMM")]
    assert nvgemm.kernel_ms < 0.1 < 0.3 < nvgemm.call_ms  # a 0.075 ms kernel behind a Python launch path
    assert nvgemm.host_ms > 0.9 * nvgemm.call_ms  # the call is the host's time, not the GPU's


def test_the_repeat_measures_run_to_run_drift_into_the_noise():
    found, repeats = analysis.measurements(rows("anchors-cold.log"), PEAK, "bfloat16")
    verdicts = {v.shape.m: v for v in analysis.shape_verdicts(found, repeats, "NVGEMM")}
    aten = {m.shape.m: m.kernel_ms for m in found if m.backend == "ATEN"}
    again = {shape.m: ms for (shape, backend), ms in repeats.items()}
    assert verdicts[8192].noise == pytest.approx(abs(again[8192] - aten[8192]) / aten[8192])
    assert verdicts[8192].noise > 0.1  # seen: the same cuBLAS kernel 12% slower after 10 s of other GEMMs


@pytest.mark.parametrize("tflops, status", [(989.0, "ok"), (990.0, "refused"), (5476.0, "refused")])
def test_a_real_row_above_the_peak_is_refused(tflops, status):
    real = next(r for r in rows("anchors-cold.log") if r["backend"] == "NVGEMM" and r["shape"]["m"] == 4096)
    bogus = json.loads(json.dumps(real))
    bogus["kernel_ms"]["median"] = 2 * 4096 ** 3 / (tflops * 1e12) * 1e3
    found, _ = analysis.measurements([bogus], PEAK, "bfloat16")
    assert found[0].status == status


def test_warm_run_reuses_compiled_kernels_and_agrees_with_the_cold_one(policy, tmp_path):
    cold = by_shape(replay(policy, tmp_path / "cold", H200_1 / "anchors-cold.log"))
    warm_result = replay(policy, tmp_path / "warm", H200_1 / "anchors-warm.log")
    warm = by_shape(warm_result)
    assert all(m.warm for m in warm_result.measurements)  # Inductor's FX graph cache answered every compile
    assert sum(m.compile_s for m in warm.values()) < sum(m.compile_s for m in cold.values()) / 5
    for key, m in warm.items():
        if m.backend != "mix" and m.kernel_ms >= 0.05:
            assert m.kernel_ms == pytest.approx(cold[key].kernel_ms, rel=0.05), key


def test_budget_runs_out_midway_and_the_rest_is_listed_not_hidden(policy, tmp_path):
    from envcheck.bench.shapes import llm_shapes

    result = replay(policy, tmp_path, H200_1 / "llm-partial.log", shapes=llm_shapes(), budget=50)
    assert result.status is Status.WARN and "incomplete" in result.summary
    measured = [v for v in result.verdicts if v.verdict != "not measured"]
    assert [v.shape.m for v in measured] == [1, 16, 64] and {v.verdict for v in measured} == {"loses"}
    assert "the time budget (50 s) ran out" in result.verdicts[3].note


def test_profiled_run_names_the_kernels_that_ran():
    names = {r["backend"]: r["device_kernels"][0] for r in rows("kernels-profiled.log") if not r["repeat"]}
    assert names["ATEN"].startswith("nvjet_sm90")  # cuBLAS's Hopper kernel
    assert names["TRITON"] == "triton_tem_fused_mm_0"
    assert "cutlass" in names["NVGEMM"] and names["mix"] == names["ATEN"]


def test_torch_without_a_visible_gpu_is_a_failure_with_its_reason(policy, tmp_path):
    result = replay(policy, tmp_path, H200_1 / "no-cuda.log", shapes=(Shape(256, 512, 256, "custom"),))
    assert result.status is Status.FAIL and result.exit_code == 1 and not result.measurements
    assert "sees no CUDA device" in result.cause


@pytest.mark.parametrize("backend, choice, kernel", [
    ("NVGEMM", "NVGEMM", "cutedsl.Sm80TensorOpGemmKernel_ttt_ABFloat16_BBFloat16_outBFloat16_accFloat32_tile64x128x32"),
    ("TRITON", "TRITON", "triton_tem_fused_mm_0"),
    ("ATEN", "ATEN", "cuBLAS (extern_kernels.mm)"),
])
def test_classify_real_generated_code(backend, choice, kernel):
    code = (H200_1 / f"16x4096x4096-custom-{backend}.py.txt").read_text(encoding="utf-8")
    assert bench_child.classify(code, "NVGEMM") == (choice, kernel)


# --------------------------------------------------------------------------------------------------------------
# h200-3: the timing as it is now (a sustained-state warm-up, the host's launch time measured behind a sleep)


def test_sustained_timing_agrees_with_do_bench_where_the_gpu_is_the_bottleneck():
    # issue 9: do_bench on the same compiled function agrees within 5% for kernels of 50 us or more. It can only
    # where it times the kernel: calls back to back. Behind a host-bound launch path it times the host (NVGEMM's
    # Python launch path here), which call_ms reports.
    for log in ("anchors-cold.log", "anchors-warm.log"):
        found, _ = analysis.measurements(rows(log, H200_3), PEAK, "bfloat16")
        gpu_bound = [m for m in found if m.kernel_ms >= 0.05 and m.mode == "back-to-back"]
        assert len(gpu_bound) == 7, log  # 4096^3 ATEN, TRITON, mix; 8192^3 all four
        assert max(m.do_bench_gap for m in gpu_bound) < 0.05, [(m.shape.text, m.backend, m.do_bench_gap) for m in gpu_bound]
        host_bound = [m for m in found if m.mode == "blocking" and m.kernel_ms >= 0.05]
        assert {m.backend for m in host_bound} == {"NVGEMM"}
        assert all(m.do_bench_ms > m.kernel_ms and m.do_bench_gap is None for m in host_bound)


def test_the_earlier_timing_disagreed_with_do_bench():
    # h200-1 timed short batches behind sleep kernels, under the sustained clock: do_bench read 10-16% slower
    found, _ = analysis.measurements(rows("anchors-cold.log"), PEAK, "bfloat16")
    gaps = [m.do_bench_ms / m.kernel_ms - 1 for m in found if m.backend == "ATEN" and m.kernel_ms >= 0.05]
    assert min(gaps) > 0.05


def test_sustained_timing_two_runs_agree_within_5_percent(policy, tmp_path):
    cold = by_shape(replay(policy, tmp_path / "cold", H200_3 / "anchors-cold.log"))
    warm_result = replay(policy, tmp_path / "warm", H200_3 / "anchors-warm.log")
    warm = by_shape(warm_result)
    assert set(warm) == set(cold) and all(m.warm for m in warm_result.measurements)
    for key, m in warm.items():  # every row this time, the mix and the 19 us decode kernels included
        assert m.kernel_ms == pytest.approx(cold[key].kernel_ms, rel=0.05), key


def test_sustained_timing_keeps_the_true_verdicts(policy, tmp_path):
    result = replay(policy, tmp_path, H200_3 / "anchors-cold.log", budget=100)
    found = by_shape(result)
    assert result.status is Status.PASS and max(m.tflops for m in result.measurements) < 989.4
    assert 680 < found[(4096, 4096, 4096, "ATEN")].tflops < 740  # the sustained clock: ~10% under h200-1's 785
    assert [v.verdict for v in result.verdicts] == ["loses", "loses", "loses"] and not result.decision.enable
    decode = found[(16, 4096, 4096, "NVGEMM")]
    assert decode.kernel_ms < 0.1 and decode.call_ms > 3 * decode.kernel_ms  # host overhead shown apart


H200_5 = Path(__file__).parent / "data" / "bench" / "h200-5"  # 2026-12-01, after issue 18's speed work (README)


def test_a_budget_that_ends_inside_a_shape_is_reported_not_a_crash(policy, tmp_path):
    """The recipe's cold llm run of 2026-12-01: the 420 s budget ran out after ATEN and mix of 1x8192x28672 (shape 26), so
    that shape has a measured pick and no single backend to hold it against. The cost of autotuning summed that
    shape's missing savings and crashed (TypeError, exit 3) on the H200; now the shape's pick is kept, no pin rests on
    a class whose shapes were not all measured, and the cut rows are reported."""
    lines = (H200_5 / "rec-llm-cold-cut.lines").read_text(encoding="utf-8").splitlines()
    shapes = tuple(dict.fromkeys(Shape(**row["shape"]) for row in result_lines("\n".join(lines), protocol.BENCH_ROW)))
    assert len(shapes) == 30
    result = replay(policy, tmp_path, H200_5 / "rec-llm-cold-cut.lines", shapes=shapes, budget=420.0)
    skipped = [m for m in result.measurements if m.status == "skipped"]
    assert len(skipped) == 2 + 4 * 4  # TRITON and NVGEMM of shape 26, and shapes 27-30 whole (no repeat row)
    assert result.status is Status.WARN and "incomplete: 18" in result.summary
    cut = next(c for c in result.autotune.costs if (c.shape.m, c.shape.n, c.shape.k) == (1, 8192, 28672))
    assert cut.kernel_ms is not None and cut.saving("NVGEMM", False) is None
    # shapes of both classes were never measured: the cost is reported, no pin rests on part of a class
    assert {t.scope for t in result.autotune.totals} == {"decode", "prefill", "all"}
    assert all(t.pin is None and t.call_pin is None for t in result.autotune.totals)
    assert result.autotune.snippet == ""
    json.dumps(result.to_dict())  # the JSON a user gets is whole
