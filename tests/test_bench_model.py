"""`envcheck bench --model FILE.py[:FUNCTION]` (issue 23 item 4).

Fast: the flag and its conflicts as tables; the pure steps (model_result.py: recorded GEMMs -> shapes and weights,
the sets to time, the model-level verdict over every branch); the whole run with its three children stood in for:
the recording child replays the real output of model_record.py on torch 2.13.0 (tests/data/model/, captured from
benchmarks/llama_mlp.py on this machine's CPU torch), the bench child is the real one on the simulated GPU
(tests/data/bench/fake_gpu), and the timing child, which needs CUDA, replays rows made from the H200 reference's own
times (../shared/h200/2026-12-01-s4/model-mlp.log).

Slow: the recording child for real, in a virtual environment with the real torch 2.13.0 CPU wheel, on the meta
device with real nn.Modules (nn.Linear with and without bias, 3-D inputs, attention's batched GEMM, a forward the
meta device cannot run), and `envcheck bench --model` as a process on this machine without a GPU."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import factsbuilder as fb
from envcheck.bench.analysis import Decision
from envcheck.bench.autotune import AutotuneReport, Pin, Total
from envcheck.bench.model import parse_model, run_model_bench
from envcheck.bench.model_result import ModelGemm, Recording, bench_inputs, timing_sets
from envcheck.bench.result import BenchOptions
from envcheck.bench.shapes import LINEAR, ROW_MAJOR, Shape
from envcheck.errors import UsageError
from envcheck.inside import protocol
from envcheck.render.bench_model import model_lines, model_markdown

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(__file__).parent / "data"
FAKE_GPU = DATA / "bench" / "fake_gpu"
MLP = ROOT / "benchmarks" / "llama_mlp.py"
BLOCK = ROOT / "benchmarks" / "transformer_block.py"
GOOD = fb.facts(driver=fb.driver(gpus=[fb.gpu(capability=(9, 0), name="NVIDIA H200")]))
PY = sys.executable


def envcheck(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([PY, "-m", "envcheck", *args], capture_output=True, text=True, timeout=300, cwd=ROOT,
                          env={**os.environ, **(env or {})})


# --------------------------------------------------------------------------------------------------------------
# The flag


def test_model_flag_takes_a_file_and_a_function():
    assert parse_model(f"{MLP}:decode").function == "decode"
    assert parse_model(str(MLP)).function == "model" and parse_model(str(MLP)).path == str(MLP)


@pytest.mark.parametrize("value, words", [
    ("model.txt", "expected FILE.py or FILE.py:FUNCTION"),
    ("benchmarks/nothere.py", "--model benchmarks/nothere.py: cannot read it"),
    ("benchmarks", "expected FILE.py"),
    (f"{MLP}:1st", "'1st' is not a function name"),
    (f"{MLP}:", "'' is not a function name"),
    (f"{MLP}:a.b", "'a.b' is not a function name"),
])
def test_a_bad_model_flag_is_exit_2_naming_it(value, words, tmp_path):
    with pytest.raises(UsageError, match=words.replace("(", r"\(")):
        parse_model(value)
    done = envcheck("bench", "--model", value, env={"ENVCHECK_CACHE_DIR": str(tmp_path)})
    assert done.returncode == 2 and words in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "model").exists()  # nothing ran


@pytest.mark.parametrize("flags", [["--shapes", "llm"], ["--layout", "both"], ["--dtype", "fp16"], ["--library"],
                                   ["--weights", "w.txt"]])
def test_what_the_model_decides_cannot_be_given_too(flags, tmp_path):
    done = envcheck("bench", "--model", str(MLP), *flags, env={"ENVCHECK_CACHE_DIR": str(tmp_path)})
    assert done.returncode == 2 and f"{flags[0]}: --model benches the GEMMs the model runs" in done.stderr


@pytest.mark.parametrize("flags, words", [
    (["--record-on", "meta"], "--record-on: it chooses the device --model's GEMMs are recorded on; add --model"),
    (["--model", str(MLP), "--record-on", "gpu"], "--record-on"),
])
def test_record_on_goes_with_the_model_and_names_a_device(flags, words, tmp_path):
    done = envcheck("bench", *flags, env={"ENVCHECK_CACHE_DIR": str(tmp_path)})
    assert done.returncode == 2 and words in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert not (tmp_path / "model").exists()  # nothing ran


def test_only_the_flag_reaches_the_user_file():
    # the file runs only when the user names it: the one caller of the model run is bench's command, with --model
    callers = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "envcheck").rglob("*.py")
                     if "run_model_bench(" in p.read_text() and p.name != "model.py")
    assert callers == ["envcheck/commands/bench.py"]
    scripts = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "envcheck").rglob("*.py")
                     if "RECORD_SCRIPTS" in p.read_text() or "TIME_SCRIPTS" in p.read_text())
    assert scripts == ["envcheck/bench/model.py"]
    import re

    profile = "\n".join(p.read_text() for p in (ROOT / "envcheck" / "profile" / "builtin").glob("*.toml"))
    assert not re.search(r"^\s*(model|function|script)\s*=", profile, re.M)  # no key a profile could name one with
    assert not any("bench.model" in p.read_text() or "usermodel" in p.read_text()
                   for p in (ROOT / "envcheck" / "profile").rglob("*.py"))


# --------------------------------------------------------------------------------------------------------------
# The recorded GEMMs -> what bench times


def g(op="mm", m=16, n=14336, k=4096, batch=1, dtype="bfloat16", layout=LINEAR, count=1, modules=("g",), out="",
      bias=()) -> ModelGemm:
    return ModelGemm(op, m, n, k, batch, dtype, layout, count, modules=modules, out_dtype=out, bias=bias)


def test_bench_inputs_are_each_gemm_as_its_op_weighted_by_their_calls():
    recording = Recording(ok=True, gemms=(
        g(count=2, modules=("g", "u")), g(n=4096, k=14336, modules=("d",)),
        g(op="addmm", count=3, modules=("proj",), bias=(14336,)),  # the same dimensions with a bias: its own GEMM
        g(op="addmm", count=1, modules=("proj2",), bias=(14336,)),  # the same addmm again: counts summed
        g(op="bmm", batch=32, m=128, n=128, k=128),  # attention's q @ k.T, or experts: a batch of its own
        g(op="baddbmm", batch=8, m=64, n=64, k=32, bias=(8, 64, 64), layout=ROW_MAJOR),
        g(op="_scaled_mm", m=32, n=64, k=128, dtype="float8_e4m3fn", out="bfloat16"),  # fp8 in, bf16 out
        g(op="_scaled_mm", m=32, n=64, k=128, dtype="float8_e5m2", out="bfloat16"),
        g(layout=None, m=64),  # A column-major
        g(dtype="float32", m=8, count=9), g(dtype="float32", m=9, count=9),  # more calls, but bench cannot time fp32
        g(dtype="float16", m=1, count=1),  # another dtype than the most run one
        g(layout=ROW_MAJOR, m=16),
    ))
    shapes, weights, dtype, skipped = bench_inputs(recording, "mlp.py")
    assert dtype == "bfloat16"
    assert shapes == (Shape(16, 14336, 4096, "g, u", LINEAR), Shape(16, 4096, 14336, "d", LINEAR),
                      Shape(16, 14336, 4096, "proj", LINEAR, "addmm", 1, (14336,)),
                      Shape(128, 128, 128, "g", LINEAR, "bmm", 32), Shape(64, 64, 32, "g", ROW_MAJOR, "baddbmm", 8, (8, 64, 64)),
                      Shape(32, 64, 128, "g", LINEAR, "_scaled_mm"), Shape(16, 14336, 4096, "g", ROW_MAJOR))
    assert [weights.of(s) for s in shapes] == [2.0, 1.0, 4.0, 1.0, 1.0, 1.0, 1.0] and weights.source == "--model mlp.py"
    assert [s.text for s in shapes[2:6]] == ["addmm 16x14336x4096", "bmm 32x128x128x128", "baddbmm 8x64x64x32",
                                             "_scaled_mm 32x64x128"]
    assert shapes[3].flops == 2 * 32 * 128 ** 3  # the batch counts
    whys = [why for _, why in skipped]
    assert whys == ["float8_e5m2 operands, B linear: bench times _scaled_mm on float8_e4m3fn operands, B column-major",
                    "strides [], []: a layout bench does not build",
                    "float32: bench times one dtype per run (bfloat16)", "float32: bench times one dtype per run (bfloat16)",
                    "float16: bench times one dtype per run (bfloat16)"]
    assert "bench times 2-D GEMMs" not in str(whys)


def test_a_model_of_fp32_gemms_only_has_nothing_to_bench():
    shapes, weights, dtype, skipped = bench_inputs(Recording(ok=True, gemms=(g(dtype="float32"),)), "m.py")
    assert shapes == () and dtype is None and weights.equal
    assert skipped[0][1] == "float32: bench times one dtype per run (bfloat16 or float16)"


def test_labels_name_the_modules():
    assert g(modules=("g", "u")).label == "g, u" and g(modules=("a", "b", "c")).label == "a +2"
    assert g(modules=()).label == "mm"


def decision(enable: bool, measured=True) -> Decision:
    return Decision("NVGEMM", enable, "text", wins=("x",) if enable and measured else (),
                    loses=() if enable or not measured else ("y",))


def report(*totals) -> AutotuneReport:
    from envcheck.bench.weights import EQUAL

    return AutotuneReport(costs=(), weights=EQUAL, totals=totals, unmeasured=(), not_in_bench=(), backends="ATEN,TRITON,NVGEMM")


def total(scope, pin=None) -> Total:
    return Total(scope, ("16x1x1",), (), 1.0, 0.1, None, None, None if pin is None else Pin(pin, 0.1, 0.1), None)


@pytest.mark.parametrize("enable, autotune, names, recommended", [
    (False, None, ["ATEN,TRITON", "ATEN,TRITON,NVGEMM", "NVGEMM"], "ATEN,TRITON"),
    (True, None, ["ATEN,TRITON", "ATEN,TRITON,NVGEMM", "NVGEMM"], "ATEN,TRITON,NVGEMM"),
    (False, report(total("decode", "TRITON")), ["ATEN,TRITON", "ATEN,TRITON,NVGEMM", "NVGEMM", "TRITON"], "ATEN,TRITON"),
    (False, report(total("decode", "TRITON"), total("prefill"), total("all")),  # a class's pin is not the model's
     ["ATEN,TRITON", "ATEN,TRITON,NVGEMM", "NVGEMM"], "ATEN,TRITON"),
    (False, report(total("decode"), total("prefill"), total("all", "ATEN")),
     ["ATEN,TRITON", "ATEN,TRITON,NVGEMM", "NVGEMM", "ATEN"], "ATEN,TRITON"),
    (False, report(total("all", "NVGEMM")), ["ATEN,TRITON", "ATEN,TRITON,NVGEMM", "NVGEMM"], "ATEN,TRITON"),
])
def test_the_sets_the_model_is_timed_with(enable, autotune, names, recommended):
    sets = timing_sets("NVGEMM", decision(enable), autotune)
    assert [s["name"] for s in sets] == names and [s["name"] for s in sets if s["recommended"]] == [recommended]


# --------------------------------------------------------------------------------------------------------------
# The whole run, its children stood in for


def replaying(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / f"{name}.py"
    path.write_text(f"import sys\nsys.stdout.write({text!r})\nsys.stdout.flush()\n", encoding="utf-8")
    return path


def time_rows(times, calls, errors=None) -> str:
    """The timing child's lines: one row per set with its time per forward (do_bench's spread 0.5%) and the GEMMs
    each backend ran in its code, the first set again (the repeat), the result line. errors: {set: message} of the
    sets that failed to compile (the message whole, as model_time.py saves it)."""
    names = ("ATEN,TRITON", "ATEN,TRITON,NVGEMM", "NVGEMM")
    errors = errors or {}
    rows = [dict(name=n, backends=n, repeat=False, status="ok", reason=None, compile_s=17.0,
                 ms={"median": t, "q25": t * 0.9975, "q75": t * 1.0025, "spread": 0.005}, max_error=0.002,
                 max_ref=0.3, gemm_calls=c) if n not in errors else
            dict(name=n, backends=n, repeat=False, status="error", compile_s=None, ms=None,
                 reason="InductorError: " + errors[n].splitlines()[0],
                 error={"type": "torch._inductor.exc.InductorError", "message": errors[n]})
            for n, t, c in zip(names, times, calls)]
    rows.append(dict(rows[0], repeat=True, ms={"median": times[0] * 1.002, "spread": 0.005}))
    result = {"protocol": 1, "ok": True, "phase": "done", "eager_ms": {"median": 0.112}, "error": None}
    return "".join(protocol.MODEL_ROW + json.dumps(r) + "\n" for r in rows) + protocol.MODEL_RESULT + json.dumps(result) + "\n"


def h200_rows(m: int) -> str:
    """The timing child's lines with the H200 reference's times at M (model-mlp.log; do_bench's spread, which that
    log does not give, set to 0.5%). The GEMMs per backend at M = 2048 are h200-8/model.json's (ATEN,TRITON,NVGEMM
    ran none of the three on NVGEMM); at M = 16, made up: two of the three on NVGEMM."""
    times = {16: (0.1096, 0.1052, 0.1328), 2048: (1.0599, 1.0703, 1.0823)}[m]
    served = {16: 2, 2048: 0}[m]
    return time_rows(times, ({"ATEN": 3}, {"ATEN": 3 - served, "NVGEMM": served}, {"NVGEMM": 3}))


def run(policy, tmp_path, record: str, time_text: str | None = None, gpu=True, model=f"{MLP}:decode", env=None):
    children = {"record": replaying(tmp_path, "record", record)}
    if time_text is not None:
        children["time"] = replaying(tmp_path, "time", time_text)
    spec = parse_model(model)
    return run_model_bench(PY, GOOD, policy, spec, BenchOptions(shapes=(), budget_s=60), gpu=gpu,
                           cache_dir=tmp_path / "cache", env={**os.environ, "PYTHONPATH": str(FAKE_GPU), **(env or {})},
                           children=children)


@pytest.mark.parametrize("m, holds, served", [(16, False, "NVGEMM ran 2 of its 3 GEMMs with ATEN,TRITON,NVGEMM, and it runs 1.04x as fast"),
                                              (2048, True, "Inductor ran none of its 3 GEMMs on NVGEMM (0 of 3)")])
def test_the_model_run_benches_its_gemms_by_their_counts_and_checks_the_advice(policy, tmp_path, m, holds, served):
    record = (DATA / "model" / ("record-decode.lines" if m == 16 else "record-2048.lines")).read_text()
    found, bench = run(policy, tmp_path, record, h200_rows(m))
    # the bench (real child, simulated GPU) timed exactly the model's two GEMMs, in nn.Linear's layout
    assert [(s.shape.m, s.shape.n, s.shape.k, s.shape.layout, s.shape.label) for s in bench.verdicts] == [
        (m, 14336, 4096, LINEAR, "g, u"), (m, 4096, 14336, LINEAR, "d")]
    assert {x.kernel for x in bench.measurements if x.backend == "NVGEMM"} == {"cutedsl.Sm80TensorOpGemmKernel_tnt_fake"}
    assert bench.autotune.weights.source.endswith("llama_mlp.py")
    assert [bench.autotune.weights.of(v.shape) for v in bench.verdicts] == [2.0, 1.0]
    assert not bench.decision.enable  # NVGEMM at the simulated 251 TF/s loses
    # the model timed per set; the decision's set recommended; the advice held against the model's times
    assert [(r.backends, r.ms, r.recommended) for r in found.timing.rows][:2] == [
        ("ATEN,TRITON", {16: 0.1096, 2048: 1.0599}[m], True), ("ATEN,TRITON,NVGEMM", {16: 0.1052, 2048: 1.0703}[m], False)]
    assert found.timing.drift == pytest.approx(0.002) and found.verdict.holds is holds and served in found.verdict.text
    data = found.to_dict()
    assert data["verdict"]["holds"] is holds and data["recording"]["gemms"][0]["b_strides"] == [1, 4096]
    plan = json.loads((tmp_path / "cache" / "model" / "time-plan.json").read_text())
    # the simulated mix picks NVGEMM, slower than ATEN alone: bench pins ATEN for the process, so it is timed too
    assert bench.autotune.totals[-1].pin.backend == "ATEN"
    assert [s["backends"] for s in plan["sets"]] == ["ATEN,TRITON", "ATEN,TRITON,NVGEMM", "NVGEMM", "ATEN"]
    text = "\n".join(model_lines(found))
    # NVGEMM's kernel in the code of its own compile; no autotuning table in this (simulated) log
    assert "aten.mm  %dx14336x4096  linear  bfloat16  2      g, u     yes      at least 1 (not autotuned in this run)" % m in text
    assert "recorded on the cpu device, one real forward" in text
    assert "ATEN,TRITON (recommended)" in text and "model verdict: the per-shape advice (do not enable NVGEMM)" in text
    assert "| aten.mm |" in "\n".join(model_markdown(found))


# NVGEMM-alone's failure on a Linear with bias, as torch 2.15.0 raised it on the H200 (tests/data/h200-s5/d3-ops.log:
# its first line, cut there at 160 characters), with the lines LoweringException adds (torch 2.15.0
# torch/_inductor/exc.py:79, operator_str: `target:` and the arguments)
ADDMM_ERROR = ((DATA / "h200-s5" / "d3-ops.log").read_text().split("OPS addmm: InductorError: ")[1].splitlines()[0]
               + "\n  target: aten.addmm.default\n  args[0]: TensorBox(StorageBox(\n    InputBuffer(name='arg2_1', "
               "layout=FixedLayout('cuda:0', torch.bfloat16, size=[6144], stride=[1]))\n  ))")
# The cause the causes table gives that failure on this branch; after the merge with explain (issue 30), whose row
# `nvgemm-no-kernel-for-op` matches a NoValidChoicesError with its `target: aten.<op>` line: that id.
NO_KERNEL_CAUSE = "nvgemm-no-kernel-for-op"


def table_cause(text: str) -> str:
    """The first failure signature of the causes table (in its order) that the text shows."""
    from envcheck.causes import SIGNATURES

    return next(s.id for s in SIGNATURES if s.row.status.is_problem and s.search(text))


def test_a_block_with_biases_attention_and_experts_is_benched_op_by_op(policy, tmp_path):
    """benchmarks/transformer_block.py's block, recorded for real on this machine's CPU (tests/data/model/
    record-block.lines), benched by the real child on the simulated GPU (whose Inductor offers NVGEMM no addmm, as the
    H200's torch 2.15.0), the model's timing child replayed with NVGEMM alone failing on aten.addmm."""
    record = (DATA / "model" / "record-block.lines").read_text()
    timed = time_rows((0.90, 0.95, 0.0), ({"ATEN": 4}, {"ATEN": 2, "NVGEMM": 2}, None), {"NVGEMM": ADDMM_ERROR})
    found, bench = run(policy, tmp_path, record, timed, model=f"{BLOCK}:model", env={"FAKE_AUTOTUNE_TABLES": "1"})
    # what the CPU ran: the projections as addmm with their bias (the 3-D input flattened), the experts' bmm with their
    # batch, SDPA's own fused kernel apart (its math decomposition's two bmm never ran)
    assert [(x.op, x.batch, x.m, x.n, x.k, x.layout, x.bias, x.count, x.label) for x in found.recording.gemms] == [
        ("addmm", 1, 2048, 6144, 2048, LINEAR, (6144,), 1, "attention.qkv"),
        ("addmm", 1, 2048, 2048, 2048, LINEAR, (2048,), 1, "attention.out"),
        ("bmm", 8, 256, 4096, 2048, ROW_MAJOR, (), 1, "experts"),
        ("bmm", 8, 256, 2048, 4096, ROW_MAJOR, (), 1, "experts")]
    assert [(o.op, o.count) for o in found.recording.others] == [("_scaled_dot_product_flash_attention_for_cpu", 1)]
    # each benched as its op, the bias and batch kept, cuBLAS's own call for each
    assert [v.shape.text for v in bench.verdicts] == ["addmm 2048x6144x2048", "addmm 2048x2048x2048",
                                                      "bmm 8x256x4096x2048", "bmm 8x256x2048x4096"]
    assert [v.shape.bias for v in bench.verdicts] == [(6144,), (2048,), (), ()]
    assert [m.kernel for m in bench.measurements if m.backend == "ATEN"] == [
        "cuBLAS (extern_kernels.addmm)", "cuBLAS (extern_kernels.addmm)", "cuBLAS (extern_kernels.bmm)",
        "cuBLAS (extern_kernels.bmm)"]
    alone = [m for m in bench.measurements if m.backend == "NVGEMM"]
    assert [m.status for m in alone] == ["error", "error", "ok", "ok"] and "NoValidChoicesError" in alone[0].reason
    # what Inductor offered NVGEMM, from the child's log: none for addmm, the three choices of bmm's table
    assert [(x.op, o.count, o.text("NVGEMM")) for x, o in found.offered] == [
        ("addmm", 0, "0: NVGEMM has no kernel for this op here"), ("addmm", 0, "0: NVGEMM has no kernel for this op here"),
        ("bmm", 3, "3"), ("bmm", 3, "3")]
    assert found.offered[0][1].cause_id == table_cause(alone[0].reason)
    # the model: NVGEMM alone failed, its cause from the causes table and the op from its target: line
    failed = found.timing.row("NVGEMM")
    assert failed.cause_id == table_cause(ADDMM_ERROR) == NO_KERNEL_CAUSE and failed.failed_on == "aten.addmm.default"
    assert found.verdict.holds is True and found.verdict.served == 2 and found.verdict.gemms == 4
    assert "NVGEMM ran 2 of its 4 GEMMs with ATEN,TRITON,NVGEMM, and it runs 1.06x slower with NVGEMM" in found.verdict.text
    assert found.verdict.text.endswith(f"NVGEMM error: {NO_KERNEL_CAUSE} on aten.addmm")
    text = "\n".join(model_lines(found))
    assert "aten.addmm  2048x6144x2048 + bias [6144]  linear     bfloat16  1      attention.qkv  yes      0: NVGEMM has no kernel for this op here" in text
    assert "aten.bmm    8x256x4096x2048" in text
    assert ("not a GEMM bench times: aten._scaled_dot_product_flash_attention_for_cpu x1 (attention): a fused attention "
            "kernel") in text
    assert "NVGEMM 2 of 4, ATEN 2" in text and f"error: {NO_KERNEL_CAUSE} on aten.addmm (InductorError: " in text
    data = json.loads(json.dumps(found.to_dict()))
    assert data["offered"][0]["offered"] == 0 and data["timing"]["rows"][2]["failed_on"] == "aten.addmm.default"
    assert data["timing"]["rows"][2]["cause"]["id"] == NO_KERNEL_CAUSE
    assert data["recording"]["not_gemms"][0]["why"].startswith("a fused attention kernel")


@pytest.mark.parametrize("capability, statuses", [("9.0", {"ok"}), ("8.9", {"ok"}), ("8.0", {"skipped"})])
def test_fp8_scaled_mm_is_benched_where_the_gpu_has_fp8(policy, tmp_path, capability, statuses):
    """benchmarks/transformer_block.py:tiny_fp8 recorded on the CPU (tests/data/model/record-fp8.lines): its
    _scaled_mm benched as itself on the simulated GPU, whose compute capability FAKE_CAPABILITY sets."""
    record = (DATA / "model" / "record-fp8.lines").read_text()
    found, bench = run(policy, tmp_path, record, gpu=True, model=f"{BLOCK}:tiny_fp8",
                       env={"FAKE_CAPABILITY": capability})
    assert {m.status for m in bench.measurements} == statuses and found.skipped == ()
    assert [m.shape.text for m in bench.measurements][:1] == ["_scaled_mm 32x48x64"]
    if statuses == {"ok"}:
        assert [m.kernel for m in bench.measurements if m.backend == "ATEN"] == ["cuBLAS (extern_kernels._scaled_mm)"]
    else:
        assert bench.measurements[0].reason == ("_scaled_mm needs fp8, which compute capability 8.0 does not have "
                                                "(8.9 or newer)")


def test_without_a_gpu_only_the_recording_runs(policy, tmp_path):
    found, bench = run(policy, tmp_path, (DATA / "model" / "record-decode.lines").read_text(), gpu=False)
    assert bench is None and found.timing is None and len(found.recording.gemms) == 2
    assert not (tmp_path / "cache" / "bench").exists()


def test_a_function_the_child_cannot_use_is_exit_2_naming_the_flag(policy, tmp_path):
    error = {"type": "ModelUnusable", "message": "--model m.py:model: the file defines no 'model' (its functions: x)"}
    line = protocol.MODEL_RECORD + json.dumps({"ok": False, "phase": "load", "error": error}) + "\n"
    with pytest.raises(UsageError, match=r"--model m.py:model: the file defines no 'model' .*\(log: .*model.log\)"):
        run(policy, tmp_path, line)


@pytest.mark.parametrize("text, words", [
    (protocol.MODEL_RECORD + json.dumps({"ok": False, "phase": "record", "error": {
        "type": "ValueError", "message": "my model is broken\nmore"}}) + "\n", "ValueError: my model is broken"),
    ("no result line\n", "no result line (a crash)"),
])
def test_the_users_code_failing_is_a_failed_recording_with_the_log(policy, tmp_path, text, words):
    found, bench = run(policy, tmp_path, text)
    assert not found.recording.ok and found.recording.error.endswith(words) and bench is None
    assert Path(found.recording.log).is_file()
    assert f"recording failed: {found.recording.error}" in "\n".join(model_lines(found))


def test_a_timing_child_that_dies_leaves_the_verdict_unchecked(policy, tmp_path):
    rows = h200_rows(16).splitlines()[0] + "\n"  # one row, then nothing: killed, say
    found, bench = run(policy, tmp_path, (DATA / "model" / "record-decode.lines").read_text(), rows)
    assert found.timing.error.startswith("it ended with exit status 0 and no result line")
    assert found.verdict.holds is None and "ATEN,TRITON,NVGEMM not timed" in found.verdict.text


# --------------------------------------------------------------------------------------------------------------
# The recording child for real: torch 2.13.0's CPU wheel, one real forward on the CPU (the meta device where asked or
# where the CPU cannot hold the model), real modules


@pytest.fixture(scope="module")
def torch_python(tmp_path_factory):
    """A venv with the real torch 2.13.0 (the CPU wheel the machine's package index has) and its dependencies."""
    from wheelfactory import make_venv

    python = make_venv(tmp_path_factory.mktemp("torch-cpu") / "venv")
    done = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q",
                           "--disable-pip-version-check", "torch==2.13.0"], capture_output=True, text=True, timeout=900)
    if done.returncode != 0:
        pytest.skip(f"the package index has no torch 2.13.0 here: {done.stderr.strip()[-300:]}")
    return python


MODELS = textwrap.dedent('''
    import torch, torch.nn as nn, torch.nn.functional as F

    class Block(nn.Module):  # attention's projections with a bias, q @ k.T, a 3-D input
        def __init__(s, d=64, heads=4):
            super().__init__(); s.qkv = nn.Linear(d, 3 * d); s.out = nn.Linear(d, d, bias=False); s.heads = heads
        def forward(s, x):
            b, t, d = x.shape
            q, k, v = s.qkv(x).split(d, dim=-1)
            q, k, v = (y.reshape(b, t, s.heads, d // s.heads).transpose(1, 2).reshape(b * s.heads, t, d // s.heads)
                       for y in (q, k, v))
            att = torch.bmm(q, k.transpose(1, 2)).softmax(-1)
            y = torch.bmm(att, v).reshape(b, s.heads, t, d // s.heads).transpose(1, 2).reshape(b, t, d)
            return s.out(y)

    def block():
        return Block().to(torch.bfloat16), torch.randn(2, 8, 64, dtype=torch.bfloat16)

    def row_major():  # x @ W with W stored [K, N]: B row-major; and x.T @ y: A column-major
        class M(nn.Module):
            def __init__(s):
                super().__init__(); s.w = nn.Parameter(torch.randn(32, 48))
            def forward(s, x):
                return (x @ s.w, x.t() @ x)
        return M(), (torch.randn(16, 32),)

    def keywords():
        return nn.Linear(8, 8), {"input": torch.randn(4, 8)}

    def needs_values():  # .item() has no value on the meta device: the CPU fallback runs it
        class M(nn.Module):
            def __init__(s):
                super().__init__(); s.l = nn.Linear(8, 8)
            def forward(s, x):
                return s.l(x) * float(x.abs().sum().item() > 0)
        return M(), torch.randn(4, 8)

    def too_big():  # 4 TiB of input: no CPU holds it, the meta device does (no memory)
        return nn.Linear(8, 8), torch.empty(2 ** 39, 8)

    def not_a_pair():
        return nn.Linear(8, 8)

    def not_a_module():
        return "model", torch.randn(1)

    def bad_inputs():
        return nn.Linear(8, 8), 3

    def raises():
        raise RuntimeError("the user's own error")
''')


def record(torch_python, tmp_path, function, *, device="cpu", fallback="meta", asked=False, path=None):
    from envcheck.bench.model import record_gemms
    from envcheck.bench.model_result import ModelSpec

    if path is None:
        path = tmp_path / "models.py"
        path.write_text(MODELS, encoding="utf-8")
    return record_gemms(str(torch_python), ModelSpec(str(path), function), tmp_path / "cache", dict(os.environ),
                        device=device, fallback=fallback, asked=asked)


def gemms(recording):
    return [(x.op, x.batch, x.m, x.n, x.k, x.dtype, x.layout, x.count, x.label) for x in recording.gemms]


@pytest.mark.slow
def test_the_llama_mlp_is_recorded_on_the_cpu_as_inductor_sees_it(torch_python, tmp_path):
    from envcheck.bench.model import record_gemms

    found = record_gemms(str(torch_python), parse_model(f"{MLP}:decode"), tmp_path / "cache", dict(os.environ),
                         device="cpu", fallback="meta")
    assert found.ok and found.device == "cpu" and found.tried == () and found.decompositions is None
    # STACK.md section 9: nn.Linear hands Inductor strides [4096, 1], [1, 4096]: the _tnt_ operators
    assert [(x.op, x.m, x.n, x.k, x.a_strides, x.b_strides, x.layout, x.count, x.modules) for x in found.gemms] == [
        ("mm", 16, 14336, 4096, (4096, 1), (1, 4096), LINEAR, 2, ("g", "u")),
        ("mm", 16, 4096, 14336, (14336, 1), (1, 14336), LINEAR, 1, ("d",))]
    assert found.module == {"class": "MLP", "parameters": 3 * 4096 * 14336,
                            "inputs": [{"name": "0", "shape": [16, 4096], "dtype": "bfloat16"}]}
    captured = [json.loads(line[len(protocol.MODEL_RECORD):]) for line in
                (DATA / "model" / "record-decode.lines").read_text().splitlines()]
    assert captured[0]["gemms"] == [x.to_dict() for x in found.gemms]  # the replayed data is what the child says


@pytest.mark.slow
def test_attention_with_bias_and_sdpa_on_the_cpu_lists_no_gemm_of_sdpas_decomposition(torch_python, tmp_path):
    found = record(torch_python, tmp_path, "tiny", path=BLOCK)
    assert found.ok and found.device == "cpu" and found.decompositions is None, found.error
    # SDPA ran its own fused kernel: no bmm of it; the projections are addmm with their bias, the 3-D input (2 x 16
    # tokens) flattened as Inductor sees it; the experts' bmm keep their batch of 4
    assert [(x.op, x.batch, x.m, x.n, x.k, x.dtype, x.out_dtype, x.layout, x.bias, x.label) for x in found.gemms] == [
        ("addmm", 1, 32, 192, 64, "bfloat16", "bfloat16", LINEAR, (192,), "attention.qkv"),
        ("addmm", 1, 32, 64, 64, "bfloat16", "bfloat16", LINEAR, (64,), "attention.out"),
        ("bmm", 4, 8, 96, 64, "bfloat16", "bfloat16", ROW_MAJOR, (), "experts"),
        ("bmm", 4, 8, 64, 96, "bfloat16", "bfloat16", ROW_MAJOR, (), "experts")]
    assert [(o.op, o.count, o.modules) for o in found.others] == [
        ("_scaled_dot_product_flash_attention_for_cpu", 1, ("attention",))]
    shapes, weights, dtype, skipped = bench_inputs(found, "transformer_block.py")
    assert [s.text for s in shapes] == ["addmm 32x192x64", "addmm 32x64x64", "bmm 4x8x96x64", "bmm 4x8x64x96"]
    assert skipped == ()
    text = "\n".join(model_lines(replace_spec(found, "tiny")))
    assert "recorded on the cpu device, one real forward" in text
    assert "aten.addmm  32x192x64 + bias [192]  linear     bfloat16  1      attention.qkv  yes" in text
    assert "not a GEMM bench times: aten._scaled_dot_product_flash_attention_for_cpu x1 (attention)" in text


@pytest.mark.slow
def test_the_meta_device_where_asked_lists_sdpas_decomposition_and_says_so(torch_python, tmp_path):
    found = record(torch_python, tmp_path, "tiny", device="meta", fallback="cpu", asked=True, path=BLOCK)
    assert found.ok and found.device == "meta" and found.asked
    # what the meta device ran instead of SDPA's kernel: its math decomposition, two float32 bmm (issue 30's phantom
    # GEMMs), which the recording says may not run on the device
    assert ("bmm", 8, 16, 16, 16, "float32", 2) in [(x.op, x.batch, x.m, x.n, x.k, x.dtype, x.count) for x in found.gemms]
    assert found.others == ()
    assert found.decompositions.startswith("recorded on the meta device (asked with --record-on meta): where the GPU "
                                           "runs a fused kernel (SDPA's attention, say), the meta device runs its "
                                           "decomposition")
    assert found.decompositions in "\n".join(model_lines(replace_spec(found, "tiny")))


@pytest.mark.slow
def test_fp8_scaled_mm_is_recorded_with_its_output_dtype_and_benched_as_itself(torch_python, tmp_path):
    found = record(torch_python, tmp_path, "tiny_fp8", path=BLOCK)
    assert found.ok and found.device == "cpu", found.error
    assert [(x.op, x.m, x.n, x.k, x.dtype, x.out_dtype, x.layout) for x in found.gemms] == [
        ("_scaled_mm", 32, 48, 64, "float8_e4m3fn", "bfloat16", LINEAR)]
    shapes, weights, dtype, skipped = bench_inputs(found, "transformer_block.py")
    assert dtype == "bfloat16" and [s.text for s in shapes] == ["_scaled_mm 32x48x64"] and skipped == ()


@pytest.mark.slow
def test_bias_3d_inputs_and_hand_written_attention(torch_python, tmp_path):
    found = record(torch_python, tmp_path, "block")
    assert found.ok and found.device == "cpu", found.error
    assert gemms(found) == [
        ("addmm", 1, 16, 192, 64, "bfloat16", LINEAR, 1, "qkv"),  # 2 x 8 tokens flattened, the bias an epilogue
        ("bmm", 8, 8, 8, 16, "bfloat16", LINEAR, 1, "Block"),  # q @ k.T: written by hand, it runs
        ("bmm", 8, 8, 16, 8, "bfloat16", ROW_MAJOR, 1, "Block"),  # att @ v
        ("mm", 1, 16, 64, 64, "bfloat16", LINEAR, 1, "out")]
    shapes, weights, dtype, skipped = bench_inputs(found, "models.py")
    assert [s.text for s in shapes] == ["addmm 16x192x64", "bmm 8x8x8x16", "bmm 8x8x16x8", "16x64x64"]
    assert skipped == ()


@pytest.mark.slow
def test_row_major_b_a_transposed_a_keywords_and_fp32(torch_python, tmp_path):
    found = record(torch_python, tmp_path, "row_major")
    assert gemms(found) == [("mm", 1, 16, 48, 32, "float32", ROW_MAJOR, 1, "M"),
                            ("mm", 1, 32, 32, 16, "float32", None, 1, "M")]
    assert bench_inputs(found, "models.py")[0] == ()  # fp32: nothing bench times
    assert gemms(record(torch_python, tmp_path, "keywords")) == [("addmm", 1, 4, 8, 8, "float32", LINEAR, 1, "Linear")]


@pytest.mark.slow
def test_a_forward_the_meta_device_cannot_run_falls_back_and_says_why(torch_python, tmp_path):
    found = record(torch_python, tmp_path, "needs_values", device="meta", fallback="cpu", asked=True)
    assert found.ok and found.device == "cpu" and found.tried[0][0] == "meta" and not found.asked, found
    assert found.decompositions is None
    assert gemms(found) == [("addmm", 1, 4, 8, 8, "float32", LINEAR, 1, "l")]
    lines = "\n".join(model_lines(replace_spec(found)))
    assert "recorded on the cpu device, one real forward (cpu after: meta: " in lines


@pytest.mark.slow
def test_a_model_the_device_cannot_hold_is_recorded_on_the_meta_device_and_says_what_that_may_list(torch_python, tmp_path):
    found = record(torch_python, tmp_path, "too_big")
    assert found.ok and found.device == "meta" and found.tried[0][0] == "cpu", found
    assert gemms(found) == [("addmm", 1, 2 ** 39, 8, 8, "float32", LINEAR, 1, "Linear")]
    assert found.decompositions.startswith("recorded on the meta device (cpu: RuntimeError: ")
    assert "may be listed here though the GPU never runs them" in found.decompositions


def replace_spec(recording, function="needs_values"):
    from envcheck.bench.model_outcome import ModelBench
    from envcheck.bench.model_result import ModelSpec

    return ModelBench(ModelSpec("models.py", function), recording)


@pytest.mark.slow
@pytest.mark.parametrize("function, words", [
    ("nothere", "the file defines no 'nothere' (its functions: bad_inputs, block, keywords, needs_values, not_a_module, "
                "not_a_pair, raises, row_major, too_big)"),
    ("not_a_pair", "expected it to return (module, example inputs), got a Linear"),
    ("not_a_module", "expected a torch.nn.Module first in what it returns, got a str"),
    ("bad_inputs", "expected its example inputs to be a tensor, a tuple or list of arguments or a dict of keyword "
                   "arguments, got an int"),
])
def test_a_function_that_cannot_be_used_is_a_usage_error(torch_python, tmp_path, function, words):
    with pytest.raises(UsageError) as caught:
        record(torch_python, tmp_path, function)
    assert f"models.py:{function}: {words}" in str(caught.value) and "(log: " in str(caught.value)


@pytest.mark.slow
def test_the_cli_without_a_gpu_shows_the_gemms_and_exits_1(torch_python, tmp_path):
    env = {"ENVCHECK_CACHE_DIR": str(tmp_path / "cache")}
    done = envcheck("bench", "--python", str(torch_python), "--model", f"{MLP}:decode", env=env)
    assert done.returncode == 1 and "no GPU to measure on" in done.stderr, done.stderr
    assert "aten.mm  16x14336x4096  linear  bfloat16  2      g, u     yes" in done.stdout
    data = json.loads(envcheck("bench", "--python", str(torch_python), "--model", f"{MLP}:decode", "--json", env=env).stdout)
    assert data["status"] == "skip" and data["exit_code"] == 1
    assert [x["count"] for x in data["model"]["recording"]["gemms"]] == [2, 1]
    path = tmp_path / "models.py"
    path.write_text(MODELS, encoding="utf-8")
    raised = envcheck("bench", "--python", str(torch_python), "--model", f"{path}:raises", env=env)
    assert raised.returncode == 1 and "RuntimeError: the user's own error" in raised.stderr
    assert "Traceback" not in raised.stderr and "log: " in raised.stdout
    log = raised.stdout.split("log: ")[-1].strip()
    assert "Traceback" in Path(log).read_text() and "the user's own error" in Path(log).read_text()
    missing = envcheck("bench", "--python", str(torch_python), "--model", f"{path}:nothere", env=env)
    assert missing.returncode == 2 and "Traceback" not in missing.stderr and "--model " in missing.stderr
    asked = envcheck("bench", "--python", str(torch_python), "--model", f"{BLOCK}:tiny", "--record-on", "meta", env=env)
    assert asked.returncode == 1 and "recorded on the meta device (asked with --record-on meta)" in asked.stdout
    # the two float32 bmm of SDPA's math decomposition, listed as what the meta device ran, not benched
    assert [line.split()[:6] for line in asked.stdout.splitlines() if line.startswith("aten.bmm    8x16x16x16")] == [
        ["aten.bmm", "8x16x16x16", "row-major", "float32", "2", "attention"]]


@pytest.mark.slow
def test_operands_build_each_layout_and_the_reference_stays_exact(torch_python):
    script = textwrap.dedent(f'''
        import sys; sys.path.insert(0, {str(ROOT)!r})
        import torch
        from envcheck.inside import gemm
        g = torch.Generator().manual_seed(0)
        for layout, strides in (("linear", (1, 64)), ("row-major", (32, 1))):
            a, b = gemm.operands(torch, 16, 32, 64, torch.bfloat16, "cpu", g, layout)
            assert a.stride() == (64, 1) and b.shape == (64, 32) and b.stride() == strides, (layout, b.stride())
            assert gemm.layout_of(a.stride(), b.stride(), 16, 32, 64) == layout
            ref = a.float() @ b.float()
            exact = (a.double() @ b.double()).float()
            assert (ref - exact).abs().max().item() < 1e-5
        print("ok")
    ''')
    done = subprocess.run([str(torch_python), "-c", script], capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "ok", done.stderr


# Each GEMM op as bench's child builds and compiles it (gemm.op_operands, gemm.fresh_op, bench_child.classify): the
# shapes of the model's GEMMs, as the plan gives them
OP_SHAPES = [{"op": "mm", "m": 16, "n": 32, "k": 64, "layout": "linear"},
             {"op": "addmm", "m": 16, "n": 32, "k": 64, "layout": "linear", "bias": [32]},
             {"op": "bmm", "m": 16, "n": 32, "k": 64, "layout": "row-major", "batch": 3},
             {"op": "baddbmm", "m": 16, "n": 32, "k": 64, "layout": "linear", "batch": 3, "bias": [3, 16, 32]},
             {"op": "_scaled_mm", "m": 16, "n": 32, "k": 64, "layout": "linear"}]


@pytest.mark.slow
def test_each_op_is_compiled_through_inductor_as_itself(torch_python):
    """The child's op path on real torch: the operands of each op (its bias, its batch, fp8 with scales), the fp32
    reference, and Inductor (the CPU's, ATEN alone) lowering the function to that very op: extern_kernels.addmm for
    addmm, never an mm and an add; what bench_child.classify and gemm.gemm_calls read of that code."""
    script = textwrap.dedent(f'''
        import sys, json; sys.path.insert(0, {str(ROOT)!r})
        import torch
        from torch._inductor import config
        from torch._inductor.utils import run_and_get_code
        from envcheck.inside import bench_child, gemm
        g = torch.Generator().manual_seed(0)
        found = {{}}
        for shape in json.loads(sys.argv[1]):
            args, ref = gemm.op_operands(torch, shape, torch.bfloat16, "cpu", g)
            fn = gemm.fresh_op(torch, "ATEN-" + shape["op"], shape["op"], torch.bfloat16)
            with config.patch(gemm.inductor_settings("ATEN")):
                out, codes = run_and_get_code(torch.compile(fn, fullgraph=True, dynamic=False), *args)
            code = "\\n".join(codes)
            found[shape["op"]] = dict(
                calls=gemm.gemm_calls(code), choice=bench_child.classify(code, "NVGEMM", shape["op"]),
                ok=gemm.compare(out, ref, ref.abs().max().item(), "bfloat16")[1], out=str(out.dtype),
                dtypes=[str(a.dtype) for a in args], shapes=[list(a.shape) for a in args],
                strides=[list(a.stride()) for a in args], name=fn.__code__.co_name)
        print(json.dumps(found))
    ''')
    done = subprocess.run([str(torch_python), "-c", script, json.dumps(OP_SHAPES)], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert {op: f["choice"] for op, f in found.items()} == {
        op: ["ATEN", f"cuBLAS (extern_kernels.{op})"] for op in ("mm", "addmm", "bmm", "baddbmm", "_scaled_mm")}
    assert all(f["calls"] == {"NVGEMM": 0, "ATEN": 1, "TRITON": 0} and f["ok"] and f["out"] == "torch.bfloat16"
               for f in found.values()), found
    assert found["addmm"]["shapes"] == [[32], [16, 64], [64, 32]] and found["addmm"]["strides"][2] == [1, 64]
    assert found["bmm"]["shapes"] == [[3, 16, 64], [3, 64, 32]] and found["bmm"]["strides"][1] == [2048, 32, 1]
    assert found["baddbmm"]["shapes"] == [[3, 16, 32], [3, 16, 64], [3, 64, 32]]
    assert found["baddbmm"]["strides"][2] == [2048, 1, 64]  # B as nn.Linear stores it, per batch
    assert found["_scaled_mm"]["dtypes"] == ["torch.float8_e4m3fn", "torch.float8_e4m3fn", "torch.float32",
                                            "torch.float32"]
    assert found["_scaled_mm"]["strides"][:2] == [[64, 1], [1, 64]]  # B column-major, as _scaled_mm takes it
    assert found["addmm"]["name"] == "gemm_ATEN_addmm"  # a code object of its own: Dynamo compiles each afresh


def test_a_saved_model_bench_is_read_back_op_by_op(policy, tmp_path):
    from envcheck.bench.results import parse_result
    from envcheck.bench.run import SCHEMA_VERSION

    found, bench = run(policy, tmp_path, (DATA / "model" / "record-block.lines").read_text(), model=f"{BLOCK}:model")
    data = json.loads(json.dumps({"schema_version": SCHEMA_VERSION, "envcheck_version": "0.1.0", "profile": None,
                                  "target": PY, "wall_s": 1.0, "bench": bench.to_dict()}))
    saved = parse_result(data, "block.json").result
    assert [m.shape for m in saved.measurements] == [m.shape for m in bench.measurements]
    assert [v.shape.text for v in saved.verdicts] == ["addmm 2048x6144x2048", "addmm 2048x2048x2048",
                                                      "bmm 8x256x4096x2048", "bmm 8x256x2048x4096"]
    assert data["bench"]["autotune"]["weights"]["counts"] == {
        "addmm 2048x6144x2048 linear bias [6144]": 1.0, "addmm 2048x2048x2048 linear bias [2048]": 1.0,
        "bmm 8x256x4096x2048 row-major": 1.0, "bmm 8x256x2048x4096 row-major": 1.0}
    for key, value, words in (("op", "conv", "shape.op: expected one of mm, addmm, bmm, baddbmm, _scaled_mm"),
                              ("batch", 0, "shape.batch: expected an integer from 1"),
                              ("bias", ["x"], "shape.bias: expected a list of at most 3 dimensions")):
        bad = json.loads(json.dumps(data))
        bad["bench"]["measurements"][0]["shape"][key] = value
        with pytest.raises(UsageError, match=words.replace("(", r"\(")):
            parse_result(bad, "block.json")
    old = json.loads(json.dumps(data))  # a result saved before ops were named: every GEMM an mm
    for m in old["bench"]["measurements"]:
        for key in ("op", "batch", "bias"):
            m["shape"].pop(key)
    assert {m.shape.op for m in parse_result(old, "old.json").result.measurements} == {"mm"}
