"""`envcheck bench --model`'s last child: the user's model (usermodel.py) compiled with each set of GEMM backends
and timed per forward, so that the per-shape decision is checked on the model.

Copied into the run directory as model_time.py beside its helpers (envcheck_protocol.py, envcheck_gemm.py,
envcheck_usermodel.py) and run by path in the target interpreter; never imported by envcheck itself except by tests.
Standard library only at module level, Python 3.8 syntax.

    python model_time.py --model FILE.py --function NAME --plan plan.json

plan.json: {"sets": [{"name", "backends"}], "warmup_ms", "rep_ms", "budget_s"}. The method is the one of the H200
reference (../shared/h200/2026-12-01-s4/model.py): the module on CUDA in eval mode under torch.no_grad(), its eager
output the reference; per set, torch._dynamo.reset(), Inductor's max_autotune with max_autotune_gemm_backends set
(no CUDA graphs), torch.compile(module), the first call timed as the compile, then triton.testing.do_bench over
the compiled module (quartiles: the median and its spread), and the max |out - eager|. The first set is timed again
at the end (the repeat: run-to-run drift, in the noise). Inductor's generated code says what computes each GEMM
(gemm.gemm_calls: how many of the compiled model's GEMMs each backend runs per forward).

It speaks envcheck/inside/protocol.py: `envcheck-model: phase NAME +SECONDS` lines on stderr, one
`ENVCHECK-MODEL-ROW {json}` line per set as soon as it is timed (ROW_SCHEMA), one `ENVCHECK-MODEL-RESULT {json}`
line at the end (RESULT_SCHEMA).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import traceback

try:  # imported as envcheck.inside.model_time by envcheck's own process (tests)
    from . import gemm, protocol, usermodel
except ImportError:  # run by path in its run folder, beside the envcheck_*.py copies (envcheck/runner.py)
    import envcheck_gemm as gemm, envcheck_protocol as protocol, envcheck_usermodel as usermodel

RESULT_SCHEMA = ("protocol", "ok", "phase", "versions", "gpu", "eager_ms", "module", "timings", "error")
ROW_SCHEMA = (
    "name",  # the set's name: its backends ("ATEN,TRITON")
    "backends",  # what max_autotune_gemm_backends was set to
    "repeat",  # true: the first set timed again at the end
    "status",  # "ok", "error", "wrong-result", "skipped"
    "reason",
    "error",  # null or {"type", "message"}: the exception whole (its `target: aten.<op>` line: the op it failed on)
    "compile_s",  # the first call of the compiled module: Dynamo, Inductor, autotuning, the kernels' JIT
    "ms",  # {"median", "q25", "q75", "spread"}: do_bench per forward
    "max_error",  # max |out - eager|
    "max_ref",  # max |eager|
    "gemm_calls",  # the GEMMs each backend runs per forward in Inductor's code: {"NVGEMM": 2, "ATEN": 1, "TRITON": 0}
)


def _outputs(torch, value):
    """The tensors of a module's output (a tensor, a tuple or list, a dict, an object with tensors), flattened."""
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, dict):
        return [t for v in value.values() for t in _outputs(torch, v)]
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in _outputs(torch, v)]
    return [t for v in vars(value).values() for t in _outputs(torch, v)] if hasattr(value, "__dict__") else []


def max_error(torch, out, reference):
    """(max |out - reference| over every output tensor, max |reference|)."""
    errors, refs = [0.0], [0.0]
    for mine, theirs in zip(_outputs(torch, out), _outputs(torch, reference)):
        errors.append((mine.float() - theirs.float()).abs().max().item())
        refs.append(theirs.float().abs().max().item())
    return max(errors), max(refs)


def timed(do_bench, call, warmup, rep):
    """do_bench's quartiles of call(): {"median", "q25", "q75", "spread"}."""
    q25, median, q75 = do_bench(call, warmup=warmup, rep=rep, quantiles=[0.25, 0.5, 0.75])
    return {"median": median, "q25": q25, "q75": q75, "spread": (q75 - q25) / median if median else None}


def compile_set(torch, module, args, kwargs, backends):
    """(compiled module, its first output, seconds, Inductor's generated code) under max_autotune on `backends`."""
    from unittest import mock

    from torch._inductor import config as inductor_config
    from torch._inductor.graph import GraphLowering

    codes = []
    torch._dynamo.reset()
    began = time.perf_counter()
    with inductor_config.patch(gemm.inductor_settings(backends, **{"triton.cudagraphs": False})), \
            mock.patch.object(GraphLowering, "save_output_code", codes.append):
        compiled = torch.compile(module)
        out = compiled(*args, **kwargs)
        torch.cuda.synchronize()
    return compiled, out, time.perf_counter() - began, "\n".join(codes)


def measure(torch, ctx, entry, repeat=False):
    """One row: the set compiled (or its compiled module again, for the repeat), checked against eager, timed."""
    row = dict.fromkeys(ROW_SCHEMA)
    row.update(name=entry["name"], backends=entry["backends"], repeat=repeat, status="error")
    args, kwargs = ctx["args"], ctx["kwargs"]
    try:
        with torch.no_grad():
            if repeat:
                compiled = ctx["compiled"][entry["name"]]
            else:
                compiled, out, seconds, code = compile_set(torch, ctx["module"], args, kwargs, entry["backends"])
                row.update(compile_s=round(seconds, 3), gemm_calls=gemm.gemm_calls(code))
                row["max_error"], row["max_ref"] = max_error(torch, out, ctx["reference"])
                if not gemm.within_tolerance(row["max_error"], row["max_ref"], ctx["dtype"]):
                    row["status"], row["reason"] = "wrong-result", "max |out - eager| = %.4g (max |eager| %.4g)" % (
                        row["max_error"], row["max_ref"])
                    return row
            row["ms"] = timed(ctx["do_bench"], lambda: compiled(*args, **kwargs), ctx["warmup"], ctx["rep"])
        ctx["compiled"][entry["name"]] = compiled
        row["status"] = "ok"
    except Exception as exc:  # noqa: BLE001 - one set failing is that row's result, the others go on
        row["reason"] = "%s: %s" % (type(exc).__name__, (str(exc).splitlines() or [""])[0][:500])
        row["error"] = {"type": type(exc).__module__ + "." + type(exc).__qualname__, "message": str(exc)[:4000]}
        sys.stderr.write(traceback.format_exc())
    return row


def main(argv=None):
    parser = argparse.ArgumentParser(description="envcheck bench --model: the model compiled per backend set, timed.")
    parser.add_argument("--model", required=True)
    parser.add_argument("--function", default=usermodel.DEFAULT_FUNCTION)
    parser.add_argument("--plan", required=True)
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    run = protocol.Recorder(RESULT_SCHEMA, protocol.MODEL_PHASE, versions={})
    where = "%s %s:%s" % (usermodel.FLAG, args.model, args.function)

    def body():
        with open(args.plan, encoding="utf-8") as handle:
            plan = json.load(handle)
        result = run.result
        run.phase("import-torch")
        import torch
        from triton.testing import do_bench

        result["versions"] = gemm.versions(torch)
        run.phase("cuda")
        gemm.require_cuda(torch)
        props = torch.cuda.get_device_properties(0)
        result["gpu"] = {"name": props.name, "capability": [props.major, props.minor]}
        run.phase("load")
        function = usermodel.load(args.model, args.function)
        run.phase("build")
        module, inputs, kwargs = usermodel.build(torch, function, "cuda", where)
        result["module"] = {"class": type(module).__name__, "inputs": usermodel.describe_inputs(torch, inputs, kwargs)}
        run.phase("eager")
        with torch.no_grad():
            reference = module(*inputs, **kwargs)
            torch.cuda.synchronize()
            warmup, rep = float(plan.get("warmup_ms", 50)), float(plan.get("rep_ms", 300))
            result["eager_ms"] = timed(do_bench, lambda: module(*inputs, **kwargs), warmup, rep)
        outputs = _outputs(torch, reference)
        dtype = str(outputs[0].dtype).replace("torch.", "") if outputs else "bfloat16"
        ctx = {"module": module, "args": inputs, "kwargs": kwargs, "reference": reference, "do_bench": do_bench,
               "warmup": warmup, "rep": rep, "compiled": {},
               "dtype": dtype if dtype in gemm.TOLERANCES else "bfloat16"}
        budget, sets = float(plan.get("budget_s", 600)), list(plan["sets"])
        for index, entry in enumerate(sets + sets[:1]):
            repeat = index == len(sets)
            if repeat and entry["name"] not in ctx["compiled"]:
                break
            run.phase("%s %s" % ("repeat" if repeat else "set %d/%d" % (index + 1, len(sets)), entry["name"]))
            if run.elapsed() >= budget:
                row = dict.fromkeys(ROW_SCHEMA)
                row.update(name=entry["name"], backends=entry["backends"], repeat=repeat, status="skipped",
                           reason="the time budget (%g s) ran out" % budget)
            else:
                row = measure(torch, ctx, entry, repeat)
            run.emit(protocol.MODEL_ROW, row)
            sys.stderr.write("envcheck-model: row %s%s %s %s\n" % (
                entry["name"], " (repeat)" if repeat else "", row["status"],
                "%.4f ms" % row["ms"]["median"] if row.get("ms") else row.get("reason") or ""))
        result["ok"] = True
        run.phase("done")

    protocol.run_guarded(body, run)
    run.emit(protocol.MODEL_RESULT, run.result)
    return 0 if run.result["ok"] else 1


if __name__ == "__main__":
    protocol.exit_now(main())
