"""`envcheck bench --model`'s first child: runs the user's model once (usermodel.py) and records every GEMM it runs,
with its shapes, strides, dtype and how often.

Copied into the run directory as model_record.py beside its helpers (envcheck_protocol.py, envcheck_gemm.py,
envcheck_usermodel.py) and run by path in the target interpreter; never imported by envcheck itself except by tests.
Standard library only at module level, Python 3.8 syntax.

    python model_record.py --model FILE.py --function NAME --device cuda [--fallback meta]

One real forward runs on --device (the device the model is timed on: CUDA, or the CPU where there is no GPU) under
torch.no_grad(), in eval mode, inside a TorchDispatchMode that sees each ATen op as it runs below autograd: where
nn.Linear, F.linear and torch.matmul have become aten.mm, aten.addmm (with its bias) and aten.bmm with the strides
Inductor is handed (nn.Linear's weight as W.t(): B strides [1, K]), and where scaled_dot_product_attention has become
the device's own fused kernel, not the two GEMMs of its math decomposition. What is seen but is no GEMM bench times
(attention kernels, convolutions, grouped or integer GEMMs, matrix-vector products) is listed apart ("others"). A
forward the device cannot run (out of memory, an op it lacks) is run again on --fallback (the meta device: shapes and
strides without memory or compute, where fused kernels such as SDPA's may run as their decompositions), and the
result says why. Forward hooks name the innermost module that ran each GEMM.

It speaks envcheck/inside/protocol.py: `envcheck-model: phase NAME +SECONDS` lines on stderr, one
`ENVCHECK-MODEL-RECORD {json}` line on stdout at the end (RESULT_SCHEMA).
"""

from __future__ import annotations

import argparse
import re
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
    "device",  # where the recorded forward ran ("cuda", "cpu"; "meta": see the module's text)
    "tried",  # [{"device", "error"}] of the devices the forward failed on first
    "module",  # {"class", "parameters", "inputs": [{"name", "shape", "dtype"}]}
    "gemms",  # [GEMM_FIELDS...], one per distinct GEMM, in the order first run
    "others",  # [OTHER_FIELDS...]: the ops seen that compute products but are no GEMM_OPS, in the order first run
    "timings",
    "error",
)
GEMM_FIELDS = (
    "op",  # the ATen op: mm, addmm, bmm, baddbmm, _scaled_mm
    "m", "n", "k",  # out[m, n] = a[m, k] @ b[k, n] (per batch for bmm)
    "batch",  # 1 for a 2-D GEMM
    "dtype",  # of a ("bfloat16"; "float8_e4m3fn" for _scaled_mm)
    "out_dtype",  # of the output ("bfloat16")
    "a_strides", "b_strides",  # of the 2-D operands (a batch's for bmm)
    "layout",  # gemm.layout_of: "linear", "row-major", or null (neither: bench does not build it)
    "bias",  # the shape of the input added to the product (addmm's bias: [N] for nn.Linear; baddbmm's), else []
    "count",  # how often one forward runs it
    "modules",  # the qualified names of the modules that ran it, in order (a name once)
)
OTHER_FIELDS = ("op", "count", "modules")
# The ATen ops that are a GEMM: (a's argument index, b's); everything else is left to run
GEMM_OPS = {"mm": (0, 1), "addmm": (1, 2), "bmm": (0, 1), "baddbmm": (1, 2), "_scaled_mm": (0, 1)}
# The other ops that compute products, listed with the reason they are not benched (render/bench_model.py)
OTHERS = re.compile(r"attention|convolution|_mm$|^mv$|^addmv$|^dot$|^vdot$")


def _dims(op, a, b):
    """(batch, m, n, k, a's 2-D strides, b's) of a GEMM op's operands."""
    if op in ("bmm", "baddbmm"):
        return a.shape[0], a.shape[1], b.shape[2], a.shape[2], list(a.stride()[1:]), list(b.stride()[1:])
    return 1, a.shape[0], b.shape[1], a.shape[1], list(a.stride()), list(b.stride())


def _dtype(tensor):
    return str(tensor.dtype).replace("torch.", "")


def recorder(torch, found, others, where):
    """A TorchDispatchMode that adds each GEMM it sees to `found` ({key: entry}, insertion-ordered) and each other op
    that computes products (OTHERS) to `others` ({op: entry}); `where` is the stack of module names the forward hooks
    keep."""
    from torch.utils._python_dispatch import TorchDispatchMode

    def seen(entry):
        entry["count"] += 1
        name = where[-1] if where else ""
        if name not in entry["modules"]:
            entry["modules"].append(name)

    class GemmRecorder(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            op = func.overloadpacket.__name__
            out = func(*args, **(kwargs or {}))
            if op in GEMM_OPS and len(args) > max(GEMM_OPS[op]):
                first, second = GEMM_OPS[op]
                a, b = args[first], args[second]
                batch, m, n, k, a_strides, b_strides = _dims(op, a, b)
                bias = list(args[0].shape) if op in ("addmm", "baddbmm") else []
                layout = gemm.layout_of(a_strides, b_strides, m, n, k)
                key = (op, batch, m, n, k, _dtype(a), _dtype(out), tuple(a_strides), tuple(b_strides), tuple(bias))
                seen(found.setdefault(key, dict(zip(GEMM_FIELDS, (
                    op, m, n, k, batch, _dtype(a), _dtype(out), a_strides, b_strides, layout, bias, 0, [])))))
            elif OTHERS.search(op):
                seen(others.setdefault(op, dict(zip(OTHER_FIELDS, (op, 0, [])))))
            return out

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
    """([GEMM entries], [other entries]) of one forward of module(*args, **kwargs) under torch.no_grad()."""
    found, others, where = {}, {}, []
    handles = _hooks(module, where)
    try:
        with torch.no_grad(), recorder(torch, found, others, where):
            module(*args, **kwargs)
    finally:
        for handle in handles:
            handle.remove()
    return list(found.values()), list(others.values())


def main(argv=None):
    parser = argparse.ArgumentParser(description="envcheck bench --model: record the GEMMs a model runs.")
    parser.add_argument("--model", required=True)
    parser.add_argument("--function", default=usermodel.DEFAULT_FUNCTION)
    parser.add_argument("--device", required=True, help="the device the model runs on: cuda, cpu (or meta)")
    parser.add_argument("--fallback", default=None, help="the device to run on where the first one cannot")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    run = protocol.Recorder(RESULT_SCHEMA, protocol.MODEL_PHASE, versions={}, tried=[], gemms=[], others=[])
    where = "%s %s:%s" % (usermodel.FLAG, args.model, args.function)

    def body():
        result = run.result
        run.phase("import-torch")
        import torch

        result["versions"] = gemm.versions(torch)
        run.phase("load")
        function = usermodel.load(args.model, args.function)
        for device in [d for d in (args.device, args.fallback) if d]:
            try:
                run.phase("build")
                module, inputs, kwargs = usermodel.build(torch, function, device, where)
                result["module"] = {"class": type(module).__name__,
                                    "parameters": sum(p.numel() for p in module.parameters()),
                                    "inputs": usermodel.describe_inputs(torch, inputs, kwargs)}
                run.phase("record")
                result["gemms"], result["others"] = record(torch, module, inputs, kwargs)
            except protocol.ModelUnusable:
                raise  # the function cannot be used on any device
            except Exception as exc:  # noqa: BLE001 - this device cannot run it (its memory, an op): the next may
                result["tried"].append({"device": device, "error": "%s: %s" % (type(exc).__name__, str(exc)[:500])})
                if device == args.fallback or not args.fallback:
                    raise
                module = inputs = kwargs = None  # the device's memory back before the next one
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
