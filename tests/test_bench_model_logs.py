"""How many NVGEMM choices Inductor offered for each of a model's GEMMs, read from real H200 logs (issue 30 item 2):
torch 2.15.0's `AUTOTUNE bmm(...)` table with its three NVGEMM choices and its NoValidChoicesError for addmm
(tests/data/h200-s5/d3-ops.log), and torch 2.14.1's bench child log of a model's four mm shapes with candidates lost
(tests/data/h200-s4/mlp-bench-child.log.gz). The parent (bench's and the model's) runs as on the GPU; the children
replay what the H200 printed."""

from __future__ import annotations

import gzip
import json
import os
import sys
from pathlib import Path

import pytest

import factsbuilder as fb
from envcheck.bench import run_bench
from envcheck.bench.model import parse_model, run_model_bench
from envcheck.bench.model_result import nvgemm_offered
from envcheck.bench.result import BenchOptions
from envcheck.bench.shapes import parse_shapes
from envcheck.causes import SIGNATURES
from envcheck.causes.candidates import read_log_candidates
from envcheck.inside import protocol
from envcheck.profile import load_builtin

DATA = Path(__file__).parent / "data"
S5 = DATA / "h200-s5"
H200 = fb.facts(interpreter=fb.stack(), driver=fb.driver("580.159.04", "13.0", [fb.gpu((9, 0), "NVIDIA H200")]))
D3 = (S5 / "d3-ops.log").read_text(encoding="utf-8")
# The cause the causes table gives the first line of a compile NVGEMM had no choice for (what a bench row keeps: no
# `target:` line). explain's row `nvgemm-no-kernel-for-op` (issue 30) matches the whole message, with its target line:
# the model's rows (tests/test_bench_model.py) get that one after the merge; this line keeps this id.
NO_KERNEL_CAUSE = "no-valid-choices"


@pytest.fixture(scope="module")
def operators():
    return load_builtin("torch-2.14-operators")


def table_cause(text: str) -> str:
    """The first failure signature of the causes table, in its order, that the text shows."""
    return next(s.id for s in SIGNATURES if s.row.status.is_problem and s.search(text))


def failure(op: str) -> str:
    """The H200's own line for an op NVGEMM alone could not compile (ops.py prints `OPS <case>: <error>`)."""
    return next(line.split(": ", 1)[1] for line in D3.splitlines() if line.startswith(f"OPS {op}: "))


def test_the_h200_offered_nvgemm_three_bmm_choices_and_no_addmm_one():
    [bmm] = read_log_candidates(D3)  # the one autotuning table of the log: addmm and the 3-D linear had no choice
    assert (bmm.op, bmm.sizes, bmm.offered, bmm.left, bmm.failed, bmm.listed) == (
        "bmm", "8x256x1024, 8x1024x2048", 3, 3, 0, True)
    for op in ("addmm", "linear3d"):  # a Linear with bias, 2-D and 3-D: NoValidChoicesError
        said = failure(op)
        assert said.startswith("InductorError: LoweringException: NoValidChoicesError: No choices to select.")
        assert table_cause(said) == NO_KERNEL_CAUSE
    assert failure("mm").startswith("ok") and failure("bmm").startswith("ok")


def test_a_model_benches_mm_shapes_whose_choices_the_h200_log_counts(operators, tmp_path):
    """Per shape of the model's MLP, what Inductor offered NVGEMM in the real bench child log: the candidates of its
    tables and those its precompile workers lost."""
    from test_bench_candidates import replayed

    text = gzip.open(DATA / "h200-s4" / "mlp-bench-child.log.gz", "rt", encoding="utf-8").read()
    shapes = parse_shapes("16x14336x4096,16x4096x14336,2048x14336x4096,2048x4096x14336")
    result = run_bench(sys.executable, H200, operators, BenchOptions(shapes=shapes, budget_s=400),
                       cache_dir=tmp_path / "cache", child=replayed(tmp_path, text))
    alone = {m.shape: m for m in result.measurements if m.backend == "NVGEMM"}
    offered = [nvgemm_offered(v, alone.get(v.shape), "NVGEMM") for v in result.verdicts]
    assert [o.text("NVGEMM") for o in offered] == ["at least 6, 3 failed to compile", "at least 7, 3 failed to compile",
                                                   "at least 10, 4 failed to compile", "at least 10, 4 failed to compile"]


# --------------------------------------------------------------------------------------------------------------
# The whole model run, its bench child replaying the H200's own lines for a bmm and an addmm


def _row(shape: dict, backend: str, backends: str, ms=None, reason=None, repeat=False, kernel=None) -> dict:
    ok = ms is not None
    return {"shape": shape, "backend": backend, "backends": backends, "repeat": repeat,
            "status": "ok" if ok else "error", "reason": reason, "choice": backend if ok and backend != "mix" else None,
            "kernel": kernel, "compile_s": 5.3, "cache": {},
            "kernel_ms": {"median": ms, "q25": ms * 0.995, "q75": ms * 1.005, "spread": 0.01, "mode": "back-to-back"}
            if ok else None, "call_ms": ms * 1.2 if ok else None, "call_spread": 0.01 if ok else None,
            "host_ms": 0.01 if ok else None, "max_error": 0.0 if ok else None}


def bench_log(shapes: list[dict]) -> str:
    """A bench child's log of the model's two GEMMs: each row's compile marked, then its rows. The bmm's mix compile
    shows the H200's own autotuning table (d3-ops.log), its NVGEMM row the kernel that table picked; the addmm's
    NVGEMM compile fails with the H200's own NoValidChoicesError. The times are made up (they are not read here)."""
    names = [("ATEN", "ATEN"), ("mix", "ATEN,TRITON,NVGEMM"), ("TRITON", "TRITON"), ("NVGEMM", "NVGEMM")]
    table = D3[D3.index("AUTOTUNE bmm("):D3.index("OPS bmm:")]
    nvgemm = table.split("nv_universal_gemm_1 0.0218 ms 100.0% nv_universal_gemm ")[1].splitlines()[0]
    lines = ["envcheck-bench: phase import-torch +0.000"]
    for shape in shapes:
        addmm = shape["op"] == "addmm"
        for name, backends in names:
            if name == "mix" and not addmm:
                lines += table.splitlines()
            lines.append(protocol.BENCH_COMPILED + json.dumps({"shape": shape, "backend": name}))
        rows = [_row(shape, "ATEN", "ATEN", 0.0240, kernel=f"cuBLAS (extern_kernels.{shape['op']})"),
                _row(shape, "mix", names[1][1], 0.0230 if addmm else 0.0218),
                _row(shape, "TRITON", "TRITON", 0.0230, kernel="triton_tem_fused_0"),
                _row(shape, "NVGEMM", "NVGEMM", reason=failure("addmm")) if addmm else
                _row(shape, "NVGEMM", "NVGEMM", 0.0218, kernel=nvgemm),
                _row(shape, "ATEN", "ATEN", 0.0241, repeat=True)]
        lines += [protocol.BENCH_ROW + json.dumps(r) for r in rows]
    result = {"protocol": 1, "ok": True, "phase": "done", "gpu": {"name": "NVIDIA H200", "capability": [9, 0]},
              "versions": {"torch": "2.15.0+cu132"}, "method": "replayed", "error": None}
    return "\n".join(lines + [protocol.BENCH_RESULT + json.dumps(result)]) + "\n"


def child(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / f"{name}.py"
    path.write_text(f"import sys\nsys.stdout.write({text!r})\nsys.stdout.flush()\n", encoding="utf-8")
    return path


def test_the_model_says_what_the_h200_offered_nvgemm_for_each_of_its_gemms(operators, tmp_path):
    # d3-ops.log's two GEMMs, as a model runs them: F.linear with its bias (256 tokens, 1024 -> 2048) and a bmm of 8
    gemms = [dict(op="addmm", m=256, n=2048, k=1024, batch=1, dtype="bfloat16", out_dtype="bfloat16",
                  a_strides=[1024, 1], b_strides=[1, 1024], layout="linear", bias=[2048], count=1, modules=["proj"]),
             dict(op="bmm", m=256, n=2048, k=1024, batch=8, dtype="bfloat16", out_dtype="bfloat16",
                  a_strides=[1024, 1], b_strides=[2048, 1], layout="row-major", bias=[], count=1, modules=["experts"])]
    record = protocol.MODEL_RECORD + json.dumps({"protocol": 1, "ok": True, "phase": "done", "device": "cuda",
                                                 "tried": [], "module": {}, "gemms": gemms, "others": []}) + "\n"
    plan_shapes = [{"m": 256, "n": 2048, "k": 1024, "label": "proj", "layout": "linear", "op": "addmm", "batch": 1,
                    "bias": [2048]},
                   {"m": 256, "n": 2048, "k": 1024, "label": "experts", "layout": "row-major", "op": "bmm",
                    "batch": 8, "bias": []}]
    children = {"record": child(tmp_path, "record", record), "bench": child(tmp_path, "bench", bench_log(plan_shapes)),
                "time": child(tmp_path, "time", "")}
    found, bench = run_model_bench(sys.executable, H200, operators, parse_model(str(DATA.parent.parent / "benchmarks" /
                                                                                     "transformer_block.py")),
                                   BenchOptions(shapes=(), budget_s=60), gpu=True, cache_dir=tmp_path / "cache",
                                   env=dict(os.environ), children=children)
    plan = json.loads(next((tmp_path / "cache" / "bench").glob("*/plan.json")).read_text())
    assert plan["shapes"] == plan_shapes  # each GEMM planned as its op, with its bias and batch
    assert [(g.op, o.count, o.text("NVGEMM")) for g, o in found.offered] == [
        ("addmm", 0, "0: NVGEMM has no kernel for this op here"), ("bmm", 3, "3")]
    assert found.offered[0][1].cause_id == table_cause(failure("addmm")) == NO_KERNEL_CAUSE
    [candidates] = next(v for v in bench.verdicts if v.shape.op == "bmm").candidates
    assert (candidates.op, candidates.sizes, candidates.left) == ("bmm", "8x256x1024, 8x1024x2048", 3)
