"""envcheck bench with real processes: the CLI without a GPU, the real child in an interpreter without torch, small
children that replay rows, hang or die; the shape sets and the peaks table; the renderers; doctor --bench."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import factsbuilder as fb
from envcheck.bench.result import BenchOptions
from envcheck.bench import last_bench, run_bench
from envcheck.inside import bench_child, protocol, timing
from envcheck.inside.protocol import result_lines
from envcheck.bench import data
from envcheck.render import bench as render
from envcheck.bench.run import SCHEMA_VERSION, save_last
from envcheck.bench.shapes import Shape, parse_shapes
from envcheck.errors import UsageError
from envcheck.model import Status

ROOT = Path(__file__).resolve().parents[1]
SMOKE_DATA = Path(__file__).parent / "data" / "smoke"
H200 = fb.gpu(capability=(9, 0), name="NVIDIA H200")
GOOD = fb.facts(driver=fb.driver(gpus=[H200]))
PY = sys.executable  # the dev venv: no torch
SQUARE = (Shape(4096, 4096, 4096, "square"),)


def script(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "child.py"
    path.write_text(textwrap.dedent(body), encoding="utf-8")
    return path


def replaying(tmp_path: Path, rows: list[dict], result: dict | None = None, tail: str = "") -> Path:
    lines = [protocol.BENCH_ROW + json.dumps(r) for r in rows]
    if result is not None:
        lines.append(protocol.BENCH_RESULT + json.dumps(result))
    return script(tmp_path, f"import sys, time\nsys.stdout.write({chr(10).join(lines) + chr(10)!r})\nsys.stdout.flush()\n{tail}\n")


def row(backend: str, ms: float, shape: Shape = SQUARE[0], **extra) -> dict:
    now = time.time()
    return {"shape": {"m": shape.m, "n": shape.n, "k": shape.k, "label": shape.label}, "backend": backend,
            "backends": backend, "repeat": False, "status": "ok", "reason": None, "compile_s": 3.0, "cache": {},
            "choice": backend, "kernel": backend.lower(), "device_kernels": [], "max_error": 0.01,
            "kernel_ms": {"median": ms, "spread": 0.004, "reps": 30, "gaps": False}, "call_ms": ms * 1.1,
            "host_ms": 0.01, "do_bench_ms": ms, "window": [now - 1, now], **extra}


RESULT = {"protocol": 1, "ok": True, "phase": "done", "gpu": {"name": "NVIDIA H200", "capability": [9, 0]},
          "versions": {"torch": "2.11.0"}, "error": None}


def bench(policy, tmp_path, child, budget=60.0, shapes=SQUARE):
    return run_bench(PY, GOOD, policy, BenchOptions(shapes=shapes, budget_s=budget), cache_dir=tmp_path / "cache",
                     child=child)


# --------------------------------------------------------------------------------------------------------------
# Without a GPU


def test_without_a_gpu_bench_exits_1_with_one_line_and_starts_nothing(tmp_path):
    # How fast that is is measured, not asserted (a timed test failed under a loaded CI machine): NVML alone answers,
    # no interpreter is started and no run folder made.
    env = {k: v for k, v in os.environ.items() if k != "CUDA_VISIBLE_DEVICES"}
    env["ENVCHECK_CACHE_DIR"] = str(tmp_path)
    done = subprocess.run([PY, "-m", "envcheck", "bench"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=30)
    if "no GPU" not in done.stderr:
        pytest.skip("this machine has a GPU")
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("envcheck bench: no GPU to measure on: ")
    assert not (tmp_path / "bench").exists()  # nothing was started


def test_without_a_gpu_json_goes_where_o_says(tmp_path):
    report = tmp_path / "bench.json"
    done = subprocess.run([PY, "-m", "envcheck", "bench", "--json", "-o", str(report)], cwd=ROOT, capture_output=True,
                          text=True, timeout=30, env={**os.environ, "ENVCHECK_CACHE_DIR": str(tmp_path)})
    if done.returncode == 0:
        pytest.skip("this machine has a GPU")
    assert done.returncode == 1 and done.stdout == ""
    document = json.loads(report.read_text(encoding="utf-8"))
    assert document["status"] == "skip" and document["exit_code"] == 1 and "no GPU" in document["message"]


@pytest.mark.parametrize("argv, words", [
    (["--shapes", "16x4096"], "--shapes '16x4096'"),
    (["--shapes", "0x1x1"], "every dimension must be between 1"),
    (["--dtype", "fp8"], "--dtype 'fp8'"),
    (["--budget", "0"], "--budget 0"),
    (["--timeout", "-1"], "--timeout -1"),
    (["--format", "xml"], "--format 'xml'"),
    (["--plot", "bench.pdf"], "--plot bench.pdf"),
    (["--python", "/nonexistent/python"], "--python /nonexistent/python"),
])
def test_bad_input_is_exit_2_with_the_flag_named(argv, words, tmp_path):
    done = subprocess.run([PY, "-m", "envcheck", "bench", *argv], cwd=ROOT, capture_output=True, text=True, timeout=30,
                          env={**os.environ, "ENVCHECK_CACHE_DIR": str(tmp_path)})
    assert done.returncode == 2 and words in done.stderr and "Traceback" not in done.stderr


# --------------------------------------------------------------------------------------------------------------
# The real child, and children that stand in for it


def test_real_child_without_torch_is_a_named_failure_with_a_log(policy, tmp_path):
    result = bench(policy, tmp_path, None)
    assert result.status is Status.FAIL and result.exit_code == 1
    assert "torch" in result.cause and result.measurements == ()
    log = Path(result.log).read_text(encoding="utf-8")
    assert "ModuleNotFoundError" in log and "bench_child.py" in log
    run_dir = Path(result.log).parent
    assert {p.name for p in run_dir.glob("*.py")} == {"bench_child.py", "envcheck_protocol.py", "envcheck_gemm.py",
                                                      "envcheck_lookup.py", "envcheck_timing.py", "envcheck_stoprule.py",
                                                      "envcheck_shape_timing.py", "envcheck_library.py"}
    plan = json.loads((run_dir / "plan.json").read_text())
    # mix right after ATEN: its autotuning times every choice TRITON's and NVGEMM's compiles then find cached
    assert [b["name"] for b in plan["backends"]] == ["ATEN", "mix", "TRITON", "NVGEMM"] and plan["top_k"] == 5


def test_replayed_rows_become_measurements_verdicts_and_a_decision(policy, tmp_path):
    rows = [row("ATEN", 0.175), row("TRITON", 0.193), row("NVGEMM", 0.55), row("mix", 0.176, choice="ATEN"),
            {**row("ATEN", 0.1752), "repeat": True}]
    result = bench(policy, tmp_path, replaying(tmp_path, rows, RESULT))
    assert result.status is Status.PASS, result.summary
    assert [m.backend for m in result.measurements] == ["ATEN", "TRITON", "NVGEMM", "mix"]
    assert round(result.measurements[0].tflops) == 785 and result.peak.name == "H200 SXM"
    assert result.verdicts[0].verdict == "loses" and not result.decision.enable
    assert result.gpu == "NVIDIA H200" and result.capability == (9, 0)


def test_a_child_killed_by_the_timeout_still_gives_what_it_measured(policy, tmp_path):
    # budget 0.5 s + the start-up allowance is the timeout; the child prints two rows and then hangs
    from envcheck.bench import run as bench_run

    child = replaying(tmp_path, [row("ATEN", 0.175), row("NVGEMM", 0.55)], tail="time.sleep(600)")
    saved = bench_run.STARTUP_S
    bench_run.STARTUP_S = 1.0
    try:
        began = time.monotonic()
        result = bench(policy, tmp_path, child, budget=0.5)
    finally:
        bench_run.STARTUP_S = saved
    assert time.monotonic() - began < 15
    assert result.status is Status.WARN and "incomplete" in result.summary
    assert [m.backend for m in result.measurements] == ["ATEN", "NVGEMM"]


def test_a_child_that_dies_before_any_row_is_a_failure(policy, tmp_path):
    child = script(tmp_path, "import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n")
    result = bench(policy, tmp_path, child)
    assert result.status is Status.FAIL and result.cause_id
    assert "SIGSEGV" in result.cause or "signal" in result.cause


def test_budget_skips_are_reported_not_hidden(policy, tmp_path):
    skipped = {**row("NVGEMM", 0.0), "status": "skipped", "reason": "the time budget (60 s) ran out", "kernel_ms": None}
    result = bench(policy, tmp_path, replaying(tmp_path, [row("ATEN", 0.175), skipped], RESULT))
    assert result.status is Status.WARN and "incomplete: 1" in result.summary
    assert result.verdicts[0].verdict == "not measured"


# --------------------------------------------------------------------------------------------------------------
# The child's pure helpers


@pytest.mark.parametrize("values, q, expected", [
    ([1.0], 0.5, 1.0),
    ([1.0, 2.0], 0.5, 1.5),
    ([1.0, 2.0, 3.0, 4.0, 5.0], 0.25, 2.0),
    ([1.0, 2.0, 3.0, 4.0], 0.75, 3.25),
])
def test_quantile_matches_numpy_linear(values, q, expected):
    assert timing.quantile(values, q) == pytest.approx(expected)


def test_summarize_spread_is_the_interquartile_range_over_the_median():
    summary = timing.summarize([1.0, 1.0, 1.0, 1.1, 0.9])
    assert summary["median"] == 1.0 and summary["spread"] == pytest.approx(0.0) and summary["reps"] == 5
    assert timing.summarize([0.9, 1.0, 1.1, 1.2, 0.8])["spread"] == pytest.approx(0.2)


def test_classify_reads_real_inductor_code():
    nvgemm = (SMOKE_DATA / "nvgemm-output-code-h200.py.txt").read_text(encoding="utf-8")
    choice, kernel = bench_child.classify(nvgemm, "NVGEMM")
    assert choice == "NVGEMM" and kernel.startswith("cutedsl.Sm80TensorOpGemmKernel")
    aten = "buf0 = empty_strided_cuda((16, 4096), (4096, 1), torch.bfloat16)\nextern_kernels.mm(arg0_1, arg1_1, out=buf0)\n"
    assert bench_child.classify(aten, "NVGEMM") == ("ATEN", "cuBLAS (extern_kernels.mm)")
    triton = ("triton_tem_fused_mm_0 = async_compile.triton('triton_tem_fused_mm_0', '''\n"
              "@triton_heuristics.template(num_stages=3, num_warps=8)\n'''\n")
    assert bench_child.classify(triton, "NVGEMM") == ("TRITON", "triton_tem_fused_mm_0")
    split = ("triton_red_fused_sum_0 = async_compile.triton('triton_red_fused_sum_0', \"\"\"\n\"\"\")\n"
             "extern_kernels.bmm(reinterpret_tensor(arg0_1, (4, 16, 1024)), arg1_1, out=buf0)\n")
    assert bench_child.classify(split, "NVGEMM") == (
        "decompose-k", "extern_kernels.bmm + triton_red_fused_sum_0")


# --------------------------------------------------------------------------------------------------------------
# Shapes and peaks


@pytest.mark.parametrize("value, count, first", [
    ("square", 4, Shape(1024, 1024, 1024, "square", "linear")),
    ("llm", 30, Shape(1, 4096, 4096, "llama-3.1-8b attn-proj", "linear")),
    ("16x4096x4096", 1, Shape(16, 4096, 4096, "custom", "linear")),
    ("16x4096x4096, 2048X14336X4096", 2, Shape(16, 4096, 4096, "custom", "linear")),
])
def test_shape_sets(value, count, first):
    shapes = parse_shapes(value)  # nn.Linear's layout unless --layout says otherwise (tests/test_bench_layout.py)
    assert len(shapes) == count and shapes[0] == first


def test_llm_shapes_come_from_the_cited_configs():
    shapes = parse_shapes("llm")
    assert Shape(2048, 14336, 4096, "llama-3.1-8b mlp-up", "linear") in shapes
    assert Shape(8192, 8192, 28672, "llama-3.1-70b mlp-down", "linear") in shapes
    assert {s.m for s in shapes} == {1, 16, 64, 2048, 8192}
    assert all("config.json" in m.source for m in data.models())


def test_shapes_from_a_file(tmp_path):
    path = tmp_path / "shapes.txt"
    path.write_text("# decode\n16x4096x4096\n\n2048x4096x4096  # prefill\n", encoding="utf-8")
    assert [s.text for s in parse_shapes(str(path))] == ["16x4096x4096", "2048x4096x4096"]
    path.write_text("16x4096x4096\nbogus\n", encoding="utf-8")
    with pytest.raises(UsageError, match="line 2"):
        parse_shapes(str(path))


@pytest.mark.parametrize("name, peak_name, bf16", [
    ("NVIDIA H200", "H200 SXM", 989.4),
    ("NVIDIA H200 NVL", "H200 NVL", 835.5),
    ("NVIDIA H100 80GB HBM3", "H100 SXM / GH200", 989.4),
    ("NVIDIA H100 PCIe", "H100 PCIe", 756.5),
    ("NVIDIA GH200 480GB", "H100 SXM / GH200", 989.4),
    ("NVIDIA A100-SXM4-80GB", "A100", 312.0),
    ("NVIDIA B200", "B200", 2250.0),
    ("NVIDIA L4", "L4", 121.0),
    ("NVIDIA GB200", "GB200", 2500.0),
    ("NVIDIA L40S", "L40S", 362.05),
    ("NVIDIA GeForce RTX 4090", None, None),
])
def test_peaks_table(name, peak_name, bf16):
    peak = data.peak_for(name)
    assert (peak.name if peak else None) == peak_name
    if peak:
        assert peak.for_dtype("bfloat16") == bf16 == peak.for_dtype("float16") and peak.source


# --------------------------------------------------------------------------------------------------------------
# Output, and doctor --bench


def test_formats_and_the_saved_result(policy, tmp_path):
    rows = [row("ATEN", 0.175), row("TRITON", 0.193), row("NVGEMM", 0.55), row("mix", 0.176, choice="ATEN")]
    result = bench(policy, tmp_path, replaying(tmp_path, rows, RESULT))
    saved = {"schema_version": SCHEMA_VERSION, "profile": policy.id, "target": PY, "bench": result.to_dict()}
    table = render.render(result, saved, "table")
    assert "785.4" in table and "79.4%" in table and 'max_autotune_gemm_backends = "ATEN,TRITON"' in table
    markdown = render.render(result, saved, "markdown")
    assert "| 4096x4096x4096 | row-major | square | NVGEMM |" in markdown
    loaded = json.loads(render.render(result, saved, "json"))
    assert loaded["schema_version"] == 2 and loaded["bench"]["decision"]["enable"] is False
    assert loaded["bench"]["peak"]["tflops"] == 989.4 and loaded["bench"]["measurements"][0]["tflops"] > 785

    save_last(tmp_path / "cache", saved)
    assert last_bench(tmp_path / "cache") == json.loads(json.dumps(saved))
    env = {**os.environ, "ENVCHECK_CACHE_DIR": str(tmp_path / "cache")}
    done = subprocess.run([PY, "-m", "envcheck", "doctor", "--no-gpu", "--json", "--bench"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=60)
    assert json.loads(done.stdout)["bench"]["bench"]["decision"]["enable"] is False


def test_plot_needs_matplotlib_and_says_so():
    code = ("import sys; sys.modules['matplotlib'] = None\n"  # as if it were not installed
            "from envcheck.render import bench as render\nrender.require_matplotlib()\n")
    done = subprocess.run([PY, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=30)
    assert done.returncode != 0 and "pip install 'nvgemm-envcheck[plot]'" in done.stderr


@pytest.mark.parametrize("suffix, magic", [(".png", b"\x89PNG"), (".svg", b"<?xml")])
def test_plot_draws_tflops_by_shape_with_the_peak(policy, tmp_path, suffix, magic):
    pytest.importorskip("matplotlib")
    rows = [row("ATEN", 0.175), row("TRITON", 0.193), row("NVGEMM", 0.55), row("mix", 0.176, choice="ATEN")]
    result = bench(policy, tmp_path, replaying(tmp_path, rows, RESULT))
    path = tmp_path / f"bench{suffix}"
    render.plot(result, path)
    assert path.read_bytes().startswith(magic)
    if suffix == ".svg":
        assert "dense peak 989.4 TF/s" in path.read_text(encoding="utf-8")


# --------------------------------------------------------------------------------------------------------------
# The real child on a simulated GPU (tests/data/bench/fake_gpu: torch and triton stand-ins, device time simulated)

FAKE_GPU = Path(__file__).parent / "data" / "bench" / "fake_gpu"


def on_fake_gpu(policy, tmp_path, shapes, budget=60.0, **env):
    environment = {**os.environ, "PYTHONPATH": str(FAKE_GPU), **env}
    return run_bench(PY, GOOD, policy, BenchOptions(shapes=shapes, budget_s=budget), cache_dir=tmp_path / "cache",
                     env=environment)


def test_real_child_compiles_mix_second_and_shows_it_last(policy, tmp_path):
    # mix right after ATEN, so that its autotuning leaves every choice timed for TRITON's and NVGEMM's compiles;
    # the repeat stays ATEN's; the report keeps the order a reader compares in
    result = on_fake_gpu(policy, tmp_path, SQUARE)
    compiled = [line.split()[3] + (" (repeat)" if "(repeat)" in line else "")
                for line in Path(result.log).read_text().splitlines() if line.startswith("envcheck-bench: row ")]
    assert compiled == ["ATEN", "mix", "TRITON", "NVGEMM", "ATEN (repeat)"]
    assert [m.backend for m in result.measurements] == ["ATEN", "TRITON", "NVGEMM", "mix"]


def test_real_child_runs_every_backend_and_times_it(policy, tmp_path):
    result = on_fake_gpu(policy, tmp_path, (Shape(4096, 4096, 4096, "square"), Shape(16, 4096, 4096, "decode")))
    assert result.status is Status.PASS, (result.summary, Path(result.log).read_text())
    found = {(m.shape.m, m.backend): m for m in result.measurements}
    assert set(found) == {(m, b) for m in (4096, 16) for b in ("ATEN", "TRITON", "NVGEMM", "mix")}
    # the simulated rates come back through the flush, the sleep kernel and the events: 785, 713, 251 TF/s
    assert found[(4096, "ATEN")].tflops == pytest.approx(785, rel=1e-6)
    assert found[(4096, "NVGEMM")].tflops == pytest.approx(251, rel=1e-6)
    assert found[(4096, "NVGEMM")].choice == "NVGEMM" and found[(4096, "NVGEMM")].kernel == "cutedsl.Sm80TensorOpGemmKernel_ttt_fake"
    assert found[(4096, "TRITON")].kernel == "triton_tem_fused_mm_0" and found[(4096, "mix")].choice == "NVGEMM"
    assert all(m.reps >= 10 and m.spread < 1e-9 and m.call_ms is not None for m in found.values())
    assert [v.verdict for v in result.verdicts] == ["loses", "loses"] and not result.decision.enable
    code = sorted(p.name for p in (Path(result.log).parent / "code").iterdir())
    assert code[0] == "16x4096x4096-row-major-decode-ATEN.py" and len(code) == 8


def test_real_child_times_a_host_bound_call_behind_a_sleep_kernel(policy, tmp_path):
    # a Python launch path of 0.3 ms before a 0.02 ms kernel: timed back to back, the events would read the host
    result = on_fake_gpu(policy, tmp_path, (Shape(16, 4096, 4096, "decode"),), FAKE_HOST_MS="NVGEMM:0.3",
                         FAKE_TFLOPS="NVGEMM:900")
    found = {m.backend: m for m in result.measurements}
    assert found["NVGEMM"].mode == "blocking" and found["ATEN"].mode == "back-to-back"
    assert found["NVGEMM"].kernel_ms == pytest.approx(2 * 16 * 4096 * 4096 / 900e12 * 1e3, rel=1e-6)
    assert found["NVGEMM"].host_ms > 0.25 and found["NVGEMM"].call_ms > 0.25
    verdict = result.verdicts[0]
    assert verdict.verdict == "loses" and "host overhead" in verdict.note  # a faster kernel, a slower call


def child_rows(result):
    """{(backend, repeat): the child's row} of a one-shape run, from its log."""
    rows = protocol.result_lines(Path(result.log).read_text(encoding="utf-8"), protocol.BENCH_ROW)
    return {(row["backend"], row["repeat"]): row for row in rows}


@pytest.mark.parametrize("env, stops", [
    # ATEN's times spread over 6%: not quiet, and after its first round its median is known within ~0.9%, not 0.5%;
    # but TRITON is 10% slower (785 against 713 TF/s), NVGEMM and mix 3x: every comparison is decided beyond the
    # 6% noise by 3 standard errors, so it stops there; its repeat too (the same times: within the noise)
    ({"FAKE_NOISE": "ATEN:0.06"}, {"ATEN": "decided", "ATEN (repeat)": "decided", "TRITON": "quiet"}),
    # TRITON as fast as ATEN within that noise's edge (785 / 740 = 1.06): undecided, ATEN runs on until its median
    # is known within 0.5%, as the rule was before comparisons were looked at
    ({"FAKE_NOISE": "ATEN:0.06", "FAKE_TFLOPS": "TRITON:740"}, {"ATEN": "precise", "TRITON": "quiet"}),
    # NVGEMM faster than the H200's peak: broken, it decides nothing (the analysis refuses it)
    ({"FAKE_NOISE": "ATEN:0.06,NVGEMM:0.06", "FAKE_TFLOPS": "NVGEMM:5476"},
     {"ATEN": "precise", "NVGEMM": "precise"}),
])
def test_real_child_stops_a_noisy_row_once_its_comparisons_are_decided(policy, tmp_path, env, stops):
    result = on_fake_gpu(policy, tmp_path, SQUARE, **env)
    rows = child_rows(result)
    found = {backend + (" (repeat)" if repeat else ""): row["kernel_ms"]["stop"] for (backend, repeat), row in rows.items()
             if (backend + (" (repeat)" if repeat else "")) in stops}
    assert found == stops
    aten = rows[("ATEN", False)]["kernel_ms"]
    assert aten["spread"] > 0.02  # the noise came through: not quiet
    # decided: one round (the rule before ran on to 0.5%: more rounds, as the undecided rows here still do)
    assert (aten["rounds"] == 1) is (stops["ATEN"] == "decided")


def test_real_child_figure_above_peak_is_refused(policy, tmp_path):
    result = on_fake_gpu(policy, tmp_path, SQUARE, FAKE_TFLOPS="NVGEMM:5476")  # issue 9's CUDA-graph reading
    nvgemm = [m for m in result.measurements if m.backend == "NVGEMM"]
    assert nvgemm[0].status == "refused" and "5476.0 TF/s is above" in nvgemm[0].reason
    assert result.status is Status.WARN and result.verdicts[0].verdict == "refused"
    assert "refused" in result.summary and not result.decision.wins


def test_real_child_on_a_torch_that_sees_no_gpu_fails_with_smokes_error_named_bare(policy, tmp_path):
    """The bench child raises the smoke run's no-CUDA error (envcheck/inside/gemm.py), named as the smoke child names
    it in its result line, so that the one table of failure signatures explains both."""
    result = on_fake_gpu(policy, tmp_path, SQUARE, FAKE_NO_CUDA="1")
    assert result.status is Status.FAIL and result.cause_id == "no-cuda" and not result.measurements
    assert "torch sees no CUDA device" in result.cause
    (line,) = result_lines(Path(result.log).read_text(encoding="utf-8"), protocol.BENCH_RESULT)
    assert line["phase"] == "cuda" and line["error"]["type"] == "SmokeNoCuda"
    assert line["error"]["message"].startswith("torch 2.11.0+fake (CUDA build 13.0) sees no CUDA device")


def test_real_child_out_of_budget_measures_nothing_and_says_why(policy, tmp_path):
    result = on_fake_gpu(policy, tmp_path, SQUARE, budget=0.001)
    assert {m.status for m in result.measurements} == {"skipped"}
    assert result.status is Status.FAIL and "time budget" in result.cause


def library_rows(policy, tmp_path, **options):
    environment = {**os.environ, "PYTHONPATH": str(FAKE_GPU), **options.pop("env", {})}
    result = run_bench(PY, GOOD, policy, BenchOptions(shapes=SQUARE, library=True, **options),
                       cache_dir=tmp_path / "cache", env=environment)
    return result, [(m.backend, m.kernel.rsplit("_", 1)[-1], m.status) for m in result.measurements]


def test_library_with_all_candidates_times_cublas_and_every_candidate_kernel(policy, tmp_path):
    result, rows = library_rows(policy, tmp_path, all_candidates=True)
    assert rows == [("cuBLAS", "torch.mm (cuBLAS)", "ok")] + [
        ("cutlass_api", "tile" + tile, "ok") for tile in
        ("128x128x32", "64x64x32", "128x256x32", "256x128x32", "64x128x32", "128x64x32", "32x32x32")] + [
        ("cutlass_api", "broken", "wrong-result")]
    verdict = result.verdicts[0]
    assert verdict.baseline == "cuBLAS" and verdict.verdict == "loses" and verdict.speedup == pytest.approx(371 / 785)
    assert result.decision.text.startswith("cutlass_api called directly on NVIDIA H200") and result.decision.snippet == ""
    assert "wrong results from 1 kernel" in result.decision.text
    assert result.candidates == "every candidate (8), as asked" and "every candidate (8), as asked" in result.summary


def test_library_times_the_heuristics_best_five_in_its_order(policy, tmp_path):
    # the fake model ranks by tile area: 256x256 (the broken kernel), 128x256, 256x128, 128x128, then 64x128 and
    # 128x64 (the same area: its own order decides); 64x64 and 32x32 are not timed
    result, rows = library_rows(policy, tmp_path)
    assert rows == [("cuBLAS", "torch.mm (cuBLAS)", "ok"), ("cutlass_api", "broken", "wrong-result")] + [
        ("cutlass_api", "tile" + tile, "ok") for tile in ("128x256x32", "256x128x32", "128x128x32", "64x128x32")]
    assert result.candidates == "nvMatmulHeuristics' top 5 of 8 candidates"
    assert result.summary.endswith("(cutlass_api: nvMatmulHeuristics' top 5 of 8 candidates per shape)") or \
        "(cutlass_api: nvMatmulHeuristics' top 5 of 8 candidates per shape)" in result.summary
    assert result.to_dict()["candidates"] == result.candidates


def test_library_without_the_heuristic_times_every_candidate_and_says_so(policy, tmp_path):
    result, rows = library_rows(policy, tmp_path, env={"FAKE_NO_HEURISTICS": "1"})
    assert len(rows) == 9 and rows[1] == ("cutlass_api", "tile128x128x32", "ok")  # the library's own order
    assert result.candidates == "every candidate (8): nvMatmulHeuristics is not installed"
    assert "nvMatmulHeuristics is not installed" in result.summary


def test_processes_are_told_apart_by_session_and_ancestry(tmp_path):
    from envcheck.bench.watch import _sorted_pids, descends_from

    # a child in a session of its own, and a grandchild that leaves that session (setsid), as a helper might
    code = ("import os, subprocess, sys, time\n"
            "g = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(30)'], start_new_session=True)\n"
            "print(g.pid, flush=True)\ntime.sleep(30)\n")
    child = subprocess.Popen([PY, "-c", code], stdout=subprocess.PIPE, text=True, start_new_session=True)
    grandchild = None
    try:
        grandchild = int(child.stdout.readline())
        assert descends_from(grandchild, child.pid) and not descends_from(os.getpid(), child.pid)
        split = _sorted_pids([child.pid, grandchild, os.getpid(), 2 ** 22 + 7], child.pid)
        assert split == {"own": (child.pid, grandchild), "foreign": (os.getpid(),), "unknown": (2 ** 22 + 7,)}
    finally:
        os.killpg(child.pid, 9)
        child.wait()
        if grandchild is not None:
            os.kill(grandchild, 9)


def test_a_cache_folder_that_cannot_be_used_is_a_usage_error_naming_its_variable(policy, tmp_path, monkeypatch):
    from envcheck.errors import UsageError

    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("ENVCHECK_CACHE_DIR", str(blocker / "cache"))
    with pytest.raises(UsageError, match=f"ENVCHECK_CACHE_DIR={blocker / 'cache'}"):
        run_bench(PY, GOOD, policy, BenchOptions(shapes=SQUARE))
    assert blocker.read_text() == ""


def test_all_candidates_without_library_is_exit_2_naming_both_flags(tmp_path):
    env = {**os.environ, "ENVCHECK_CACHE_DIR": str(tmp_path)}
    done = subprocess.run([PY, "-m", "envcheck", "bench", "--all-candidates"], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 2 and done.stdout == "" and "Traceback" not in done.stderr
    assert "--all-candidates" in done.stderr and "--library" in done.stderr
    assert not any(tmp_path.iterdir())  # nothing started, nothing written
