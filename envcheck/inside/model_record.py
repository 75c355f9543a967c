"""`envcheck bench --model`'s first child: runs the user's model once (usermodel.py) and records every GEMM it runs,
with its shapes, strides, dtype and how often.

Copied into the run directory as model_record.py beside its helpers (envcheck_protocol.py, envcheck_gemm.py,
envcheck_usermodel.py) and run by path in the target interpreter; never imported by envcheck itself except by tests.
Standard library only at module level, Python 3.8 syntax.

    python model_record.py --model FILE.py --function NAME [--device meta] [--fallback cpu]

The model runs on the meta device (shapes and strides without memory or compute) under torch.no_grad(), in eval
mode, inside a TorchDispatchMode that sees each ATen op as it runs below autograd: where nn.Linear, F.linear and
torch.matmul have become aten.mm, aten.addmm and aten.bmm with the strides Inductor is handed (nn.Linear's weight as
W.t(): B strides [1, K]). A model whose forward the meta device cannot run (an op without a meta kernel, a .item())
is run again on --fallback, and the result says why. Forward hooks name the innermost module that ran each GEMM.

It speaks envcheck/inside/protocol.py: `envcheck-model: phase NAME +SECONDS` lines on stderr, one
`ENVCHECK-MODEL-RECORD {json}` line on stdout at the end (RESULT_SCHEMA).
"""

from __future__ import annotations

import argparse
import sys

try:  # imported as envcheck.inside.model_record by envcheck's own process (tests)
    from . import gemm, protocol, usermodel
except ImportError:  # run by path in its run folder, beside the envcheck_*.py copies (envcheck/runner.py)
    import envcheck_gemm as gemm, envcheck_protocol as protocol, envcheck_usermodel as usermodel

RESULT_SCHEMA = (
    "protocol",
    "ok",  # bool: the model ran once and its GEMMs are recorded
    "phase",  # import-torch, load, build, record, done
    "versions",
    "device",  # where the recorded run ran ("meta", or the fallback)
    "tried",  # [{"device", "error"}] of the devices the forward failed on first
    "module",  # {"class", "parameters", "inputs": [{"name", "shape", "dtype"}]}
    "gemms",  # [GEMM_FIELDS...], one per distinct GEMM, in the order first run
    "timings",
    "error",
)
GEMM_FIELDS = (
    "op",  # the ATen op: mm, addmm, bmm, baddbmm, _scaled_mm
    "m", "n", "k",  # out[m, n] = a[m, k] @ b[k, n] (per batch for bmm)
    "batch",  # 1 for a 2-D GEMM
    "dtype",  # of a ("bfloat16")
    "a_strides", "b_strides",  # of the 2-D operands (a batch's for bmm)
    "layout",  # gemm.layout_of: "linear", "row-major", or null (neither: bench does not build it)
    "count",  # how often one forward runs it
    "modules",  # the qualified names of the modules that ran it, in order (a name once)
)
# The ATen ops that are a GEMM: (a's argument index, b's); everything else is left to run
GEMM_OPS = {"mm": (0, 1), "addmm": (1, 2), "bmm": (0, 1), "baddbmm": (1, 2), "_scaled_mm": (0, 1)}


def _dims(op, a, b):
    """(batch, m, n, k, a's 2-D strides, b's) of a GEMM op's operands."""
    if op in ("bmm", "baddbmm"):
        return a.shape[0], a.shape[1], b.shape[2], a.shape[2], list(a.stride()[1:]), list(b.stride()[1:])
    return 1, a.shape[0], b.shape[1], a.shape[1], list(a.stride()), list(b.stride())


def recorder(torch, found, where):
    """A TorchDispatchMode that adds each GEMM it sees to `found` ({key: entry}, insertion-ordered); `where` is the
    stack of module names the forward hooks keep."""
    from torch.utils._python_dispatch import TorchDispatchMode

    class GemmRecorder(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            op = func.overloadpacket.__name__
            if op in GEMM_OPS and len(args) > max(GEMM_OPS[op]):
                first, second = GEMM_OPS[op]
                a, b = args[first], args[second]
                batch, m, n, k, a_strides, b_strides = _dims(op, a, b)
                dtype = str(a.dtype).replace("torch.", "")
                layout = gemm.layout_of(a_strides, b_strides, m, n, k)
                key = (op, batch, m, n, k, dtype, tuple(a_strides), tuple(b_strides))
                entry = found.setdefault(key, dict(zip(GEMM_FIELDS, (
                    op, m, n, k, batch, dtype, a_strides, b_strides, layout, 0, []))))
                entry["count"] += 1
                name = where[-1] if where else ""
                if name not in entry["modules"]:
                    entry["modules"].append(name)
            return func(*args, **(kwargs or {}))

    return GemmRecorder()


def _hooks(module, where):
    """Forward pre- and post-hooks on every submodule that keep `where` the stack of qualified names running."""
    handles = []
    for name, sub in module.named_modules():
        label = name or type(module).__name__

        def enter(_module, _inputs, label=label):
            where.append(label)

        def leave(_module, _inputs, _output):
            where.pop()

        handles.append(sub.register_forward_pre_hook(enter))
        handles.append(sub.register_forward_hook(leave))
    return handles


def record(torch, module, args, kwargs):
    """[GEMM entries] of one forward of module(*args, **kwargs) under torch.no_grad()."""
    found, where = {}, []
    handles = _hooks(module, where)
    try:
        with torch.no_grad(), recorder(torch, found, where):
            module(*args, **kwargs)
    finally:
        for handle in handles:
            handle.remove()
    return list(found.values())


def main(argv=None):
    parser = argparse.ArgumentParser(description="envcheck bench --model: record the GEMMs a model runs.")
    parser.add_argument("--model", required=True)
    parser.add_argument("--function", default=usermodel.DEFAULT_FUNCTION)
    parser.add_argument("--device", default="meta")
    parser.add_argument("--fallback", default=None, help="the device to run on where the first one cannot")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    run = protocol.Recorder(RESULT_SCHEMA, protocol.MODEL_PHASE, versions={}, tried=[], gemms=[])
    where = "%s %s:%s" % (usermodel.FLAG, args.model, args.function)

    def body():
        result = run.result
        run.phase("import-torch")
        import torch

        result["versions"] = gemm.versions(torch)
        run.phase("load")
        function = usermodel.load(args.model, args.function)
        for device in [d for d in (args.device, args.fallback) if d]:
            run.phase("build")
            module, inputs, kwargs = usermodel.build(torch, function, device, where)
            result["module"] = {"class": type(module).__name__,
                                "parameters": sum(p.numel() for p in module.parameters()),
                                "inputs": usermodel.describe_inputs(torch, inputs, kwargs)}
            run.phase("record")
            try:
                result["gemms"] = record(torch, module, inputs, kwargs)
            except Exception as exc:  # noqa: BLE001 - this device cannot run it: the next may
                result["tried"].append({"device": device, "error": "%s: %s" % (type(exc).__name__, str(exc)[:500])})
                if device == args.fallback or not args.fallback:
                    raise
                continue
            result["device"] = device
            break
        result["ok"] = True
        run.phase("done")

    protocol.run_guarded(body, run)
    run.emit(protocol.MODEL_RECORD, run.result)
    return 0 if run.result["ok"] else 1


if __name__ == "__main__":
    protocol.exit_now(main())
