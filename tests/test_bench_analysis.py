"""envcheck.bench.analysis: refusals, noise, winners, the decision and its config snippet, over tables of rows.

The rows are the child's protocol (envcheck/inside/bench_child.py ROW_SCHEMA); each table varies one thing from a
baseline taken from the anchors of issue 9 (H200, bf16: 4096^3 cuBLAS 0.175 ms, Triton 0.193, NVGEMM 0.55)."""

from __future__ import annotations

import pytest

from envcheck.bench import analysis, gpustate
from envcheck.bench.data import peak_for
from envcheck.bench.shapes import Shape
from envcheck.bench.watch import Sample

H200 = peak_for("NVIDIA H200")
BIG = Shape(4096, 4096, 4096, "square")
DECODE = Shape(16, 4096, 4096, "llama-3.1-8b attn-proj")
T0 = 1_000_000.0


def row(shape=BIG, backend="ATEN", ms=0.175, spread=0.005, status="ok", call=None, repeat=False, choice=None, **extra):
    data = {
        "shape": {"m": shape.m, "n": shape.n, "k": shape.k, "label": shape.label},
        "backend": backend, "backends": backend, "repeat": repeat, "status": status,
        "reason": None if status == "ok" else f"{status} here", "compile_s": 2.0, "cache": {"fxgraph_cache_hit": 1},
        "choice": choice or backend, "kernel": f"kernel-{backend}", "device_kernels": [f"dev-{backend}"],
        "max_error": 0.01, "kernel_ms": {"median": ms, "spread": spread, "reps": 40, "gaps": False},
        "call_ms": call if call is not None else ms * 1.05, "host_ms": 0.01, "do_bench_ms": ms, "window": [T0, T0 + 1],
    }
    data.update(extra)
    return data


def judge(rows, samples=(), backend="NVGEMM"):
    found, repeats = analysis.measurements(rows, H200, "bfloat16", samples, "GPU-00000000-0000-0000-0000-000000000001")
    verdicts = analysis.shape_verdicts(found, repeats, backend)
    return found, verdicts, analysis.decide(verdicts, found, backend, "NVIDIA H200")


def by_backend(found):
    return {m.backend: m for m in found}


# --------------------------------------------------------------------------------------------------------------
# Refusals


@pytest.mark.parametrize("ms, status", [
    (0.175, "ok"),  # 785 TF/s: under the 989.4 peak
    (0.1390, "ok"),  # 988.8 TF/s: just under
    (0.1388, "refused"),  # 990.2 TF/s: just over
    (0.0251, "refused"),  # the CUDA-graph reading of issue 9: 5,476 TF/s
])
def test_a_figure_above_the_dense_peak_is_refused(ms, status):
    found, verdicts, decision = judge([row(backend="NVGEMM", ms=ms), row(backend="ATEN", ms=0.175)])
    nvgemm = by_backend(found)["NVGEMM"]
    assert nvgemm.status == status
    if status == "refused":
        assert "above this GPU's dense peak of 989.4" in nvgemm.reason
        assert verdicts[0].verdict == "refused" and BIG.text not in " ".join(decision.wins)


def test_no_known_peak_refuses_nothing_and_reports_no_percentage():
    found, _ = analysis.measurements([row(ms=0.0251)], None, "bfloat16")
    assert found[0].status == "ok" and found[0].pct_peak is None and found[0].tflops > 5000


@pytest.mark.parametrize("own, foreign, unknown, t, refused", [
    ((), (), (), T0 + 0.5, False),  # nothing else on the GPU
    ((4242,), (), (), T0 + 0.5, False),  # the child itself
    ((4242,), (999,), (), T0 + 0.5, True),  # another process while timing
    ((4242,), (999,), (), T0 + 5.0, False),  # another process, but after this row's window
    ((4242,), (999,), (), T0 - 0.2, True),  # just before the window: within the sampling slack
    ((), (), (11, 12), T0 + 0.5, True),  # other pid namespace: two processes at once, the child's never seen
    ((), (), (11,), T0 + 0.5, False),  # other pid namespace: one process (the child, presumably)
])
def test_another_process_on_the_gpu_refuses_the_rows_it_overlapped(own, foreign, unknown, t, refused):
    sample = Sample(t=t, index=0, uuid="GPU-00000000-0000-0000-0000-000000000001", sm_mhz=1980, own=own,
                    foreign=foreign, unknown=unknown)
    found, _, _ = judge([row(backend="ATEN")], samples=[sample])
    assert (found[0].status == "refused") is refused
    if refused:
        assert "another process used the GPU" in found[0].reason


def test_samples_of_another_gpu_are_not_held_against_this_one():
    other = Sample(t=T0 + 0.5, index=1, uuid="GPU-ffffffff-0000-0000-0000-000000000009", foreign=(999,))
    mine = Sample(t=T0 + 0.5, index=0, uuid="GPU-00000000-0000-0000-0000-000000000001", own=(4242,))
    found, _, _ = judge([row()], samples=[other, mine])
    assert found[0].status == "ok" and found[0].gpu["samples"] == 1


def test_wrong_result_is_never_a_win_and_blocks_the_decision():
    found, verdicts, decision = judge([row(backend="ATEN"), row(backend="NVGEMM", ms=0.05, status="wrong-result")])
    assert verdicts[0].verdict == "failed"
    assert not decision.enable and "wrong result" in decision.text and not decision.wins


# --------------------------------------------------------------------------------------------------------------
# Noise and winners


@pytest.mark.parametrize("nvgemm_ms, spread, verdict", [
    (0.55, 0.005, "loses"),  # the recipe stack at 4096^3: Sm80 kernels, 251 TF/s
    (0.1733, 0.005, "same"),  # 1.0% faster: inside the 1% floor
    (0.1715, 0.005, "wins"),  # 2.0% faster, noise 1%
    (0.1715, 0.03, "same"),  # 2.0% faster, but its own spread is 3%
    (0.1785, 0.005, "loses"),  # 2.0% slower
    (0.1766, 0.005, "same"),  # 0.9% slower
])
def test_a_backend_wins_only_beyond_the_measured_noise(nvgemm_ms, spread, verdict):
    rows = [row(backend="ATEN", ms=0.175), row(backend="TRITON", ms=0.193), row(backend="NVGEMM", ms=nvgemm_ms, spread=spread)]
    _, verdicts, _ = judge(rows)
    assert verdicts[0].verdict == verdict and verdicts[0].baseline == "ATEN"


def test_run_to_run_drift_of_the_repeat_widens_the_noise():
    rows = [row(backend="ATEN", ms=0.175), row(backend="NVGEMM", ms=0.1715)]
    assert judge(rows)[1][0].verdict == "wins"
    drifted = rows + [row(backend="ATEN", ms=0.180, repeat=True)]  # the same function measured again: 2.9% apart
    verdict = judge(drifted)[1][0]
    assert verdict.verdict == "same" and verdict.noise == pytest.approx(0.005 / 0.175, rel=1e-6)


@pytest.mark.parametrize("mode, do_bench_ms, verdict, noise", [
    ("back-to-back", 0.1715, "wins", 0.01),  # do_bench agrees: the 2% margin stands
    ("back-to-back", 0.1767, "same", 0.03),  # do_bench 3% away on the same function: a 2% margin is inside that
    ("back-to-back", 0.1664, "same", 0.03),  # 3% the other way
    ("blocking", 0.5145, "wins", 0.01),  # the host is the slower one: do_bench times the launch path, not the kernel
    ("back-to-back", None, "wins", 0.01),  # no Triton, no cross-check
])
def test_do_bench_disagreeing_on_a_gpu_bound_figure_widens_the_noise(mode, do_bench_ms, verdict, noise):
    timing = {"median": 0.1715, "spread": 0.005, "reps": 400, "gaps": False, "mode": mode}
    rows = [row(backend="ATEN", ms=0.175), row(backend="NVGEMM", kernel_ms=timing, do_bench_ms=do_bench_ms)]
    found, verdicts, _ = judge(rows)
    assert verdicts[0].verdict == verdict and verdicts[0].noise == pytest.approx(noise, abs=1e-3)
    assert by_backend(found)["NVGEMM"].to_dict()["do_bench_gap"] == (
        None if mode == "blocking" or do_bench_ms is None else pytest.approx(abs(do_bench_ms / 0.1715 - 1)))


def test_host_overhead_turns_a_faster_kernel_into_a_loss():
    # issue 9's decode anchor: an Sm90 kernel 1.5x faster than cuBLAS, through a Python launch path of 0.298 ms
    rows = [row(DECODE, "ATEN", ms=0.018, spread=0.02, call=0.025),
            row(DECODE, "NVGEMM", ms=0.012, spread=0.02, call=0.298)]
    verdict = judge(rows)[1][0]
    assert verdict.verdict == "loses" and "host overhead" in verdict.note
    assert verdict.speedup == pytest.approx(1.5) and verdict.call_speedup < 0.1


@pytest.mark.parametrize("statuses, verdict", [
    ({"NVGEMM": "error"}, "failed"),
    ({"NVGEMM": "skipped"}, "not measured"),
    ({"ATEN": "error", "TRITON": "error"}, "not measured"),  # nothing to compare with
])
def test_shapes_without_a_comparison_have_no_winner(statuses, verdict):
    rows = [row(backend=b, ms=ms, status=statuses.get(b, "ok")) for b, ms in (("ATEN", 0.175), ("TRITON", 0.193), ("NVGEMM", 0.16))]
    assert judge(rows)[1][0].verdict == verdict


# --------------------------------------------------------------------------------------------------------------
# The decision and the snippet


def shape_rows(shape, aten, nvgemm, mix=None, mix_choice="ATEN"):
    rows = [row(shape, "ATEN", ms=aten), row(shape, "TRITON", ms=aten * 1.1), row(shape, "NVGEMM", ms=nvgemm)]
    if mix is not None:
        rows.append(row(shape, "mix", ms=mix, choice=mix_choice))
    return rows


@pytest.mark.parametrize("plan, enable, words", [
    ([(BIG, 0.175, 0.55), (DECODE, 0.018, 0.03)], False, "faster on none of the 2"),
    ([(BIG, 0.175, 0.15), (DECODE, 0.018, 0.0179)], True, "wins on 1 of 2 shapes and loses on none"),
    ([(BIG, 0.175, 0.15)], True, "wins on 1 of 1 shape and loses on none"),
    ([(BIG, 0.175, 0.15, 0.151), (DECODE, 0.018, 0.03, 0.018)], True, "picked well on every shape"),
    ([(BIG, 0.175, 0.15, 0.151), (DECODE, 0.018, 0.03, 0.03)], False, "picked a slower kernel on 16x4096x4096"),
])
def test_decision(plan, enable, words):
    rows = [r for item in plan for r in shape_rows(*item)]
    _, _, decision = judge(rows)
    assert decision.enable is enable and words in decision.text
    assert ("NVGEMM" in decision.snippet.splitlines()[-1]) is enable


def test_decision_lists_the_shapes_where_it_wins_and_loses():
    rows = shape_rows(BIG, 0.175, 0.15, 0.151) + shape_rows(DECODE, 0.018, 0.03, 0.018)
    _, _, decision = judge(rows)
    assert decision.wins == ("4096x4096x4096 row-major (square)",)
    assert decision.loses == ("16x4096x4096 row-major (llama-3.1-8b attn-proj)",)


def test_no_decision_without_measurements():
    decision = judge([row(backend="NVGEMM", status="error"), row(backend="ATEN", status="error")])[2]
    assert not decision.enable and decision.text.startswith("no decision")


@pytest.mark.parametrize("enable, line", [
    (True, 'inductor_config.max_autotune_gemm_backends = "ATEN,TRITON,NVGEMM"'),
    (False, 'inductor_config.max_autotune_gemm_backends = "ATEN,TRITON"'),
])
def test_config_snippet_runs_and_sets_the_backends(enable, line):
    snippet = analysis.config_snippet("NVGEMM", enable, "because")
    assert line in snippet.splitlines()
    # it is Python that runs, against a stand-in for torch._inductor.config
    import sys
    import types

    config = types.ModuleType("torch._inductor.config")
    package = types.ModuleType("torch._inductor")
    package.config = config
    torch = types.ModuleType("torch")
    torch._inductor = package
    saved = {k: sys.modules.get(k) for k in ("torch", "torch._inductor", "torch._inductor.config")}
    sys.modules.update({"torch": torch, "torch._inductor": package, "torch._inductor.config": config})
    try:
        exec(compile(snippet, "snippet", "exec"), {})
    finally:
        for key, value in saved.items():
            if value is None:
                sys.modules.pop(key, None)
            else:
                sys.modules[key] = value
    assert config.max_autotune is True
    assert config.max_autotune_gemm_backends == ("ATEN,TRITON,NVGEMM" if enable else "ATEN,TRITON")


@pytest.mark.parametrize("text, expected", [
    ("GPU-3b8b9a5c-1d2e-4f60-a1b2-c3d4e5f60718", "3b8b9a5c1d2e4f60a1b2c3d4e5f60718"),
    ("3b8b9a5c-1d2e-4f60-a1b2-c3d4e5f60718", "3b8b9a5c1d2e4f60a1b2c3d4e5f60718"),
    ("UUID('3B8B9A5C-1D2E-4F60-A1B2-C3D4E5F60718')", "3b8b9a5c1d2e4f60a1b2c3d4e5f60718"),
    ("", ""),
    (None, ""),
])
def test_gpu_uuids_match_however_written(text, expected):
    assert gpustate.normalize_uuid(text) == expected


def test_gpu_state_names_throttle_reasons_but_not_idle():
    samples = [Sample(t=1, index=0, uuid="", sm_mhz=1980, power_w=300.0, temp_c=40, throttle=0x1),
               Sample(t=2, index=0, uuid="", sm_mhz=1755, power_w=690.5, temp_c=61, throttle=0x4)]
    assert gpustate.gpu_state(samples) == {"samples": 2, "sm_mhz": [1755, 1980], "power_w_max": 690.5,
                                           "temp_c_max": 61, "throttle": ["sw-power-cap"]}


@pytest.mark.parametrize("mix_call, mix_ok", [
    (0.025, True),  # Inductor picked cuBLAS: as fast per call as the best
    (0.026, True),  # 4% slower per call: inside the 5% floor of call times
    (0.298, False),  # Inductor picked the CuteDSL kernel for its kernel time, and each call pays its host overhead
])
def test_the_mix_is_judged_per_call_too(mix_call, mix_ok):
    rows = [row(DECODE, "ATEN", ms=0.018, call=0.025), row(DECODE, "TRITON", ms=0.053, call=0.06),
            row(DECODE, "NVGEMM", ms=0.012, call=0.298), row(DECODE, "mix", ms=0.012, call=mix_call, choice="NVGEMM")]
    assert judge(rows)[1][0].mix_ok is mix_ok
