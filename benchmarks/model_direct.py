"""A `--model` file compiled per backend set and timed directly, beside what `envcheck bench --model --json` said of it
(issue 30: the model verdict must agree with the model compiled per set and timed directly, and say how many of its
GEMMs NVGEMM ran). The method is the H200 reference's (../shared/h200/2026-12-01-s4/model.py): the module on CUDA in
eval mode under torch.no_grad(), Inductor's max_autotune with max_autotune_gemm_backends set (no CUDA graphs),
torch.compile, the first call timed as the compile, then triton.testing.do_bench(warmup=50, rep=300); the GEMMs of
the generated code counted by the names Inductor gives the calls (nv_universal_gemm_*.run, triton_tem_*.run,
extern_kernels.<op>), a count of its own, not envcheck's.

    python benchmarks/model_direct.py FILE.py[:FUNCTION] [--json ENVCHECK.json] [--sets ATEN,TRITON ...]

Run it with the interpreter envcheck benched (torch with CUDA). With --json (the output of `envcheck bench --model
FILE.py[:FUNCTION] --json`), each set's figures stand beside envcheck's. Prints one line per set.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import re
import sys
import time

SETS = ("ATEN,TRITON", "ATEN,TRITON,NVGEMM", "NVGEMM")
_CALLS = (("NVGEMM", r"^\s+nv_universal_gemm\w*\.run\("), ("TRITON", r"^\s+triton_tem_\w*\.run\("),
          ("ATEN", r"^\s+(?:buf\d+ = )?extern_kernels\.(?:mm|addmm|bmm|baddbmm|_scaled_mm)\("))


def load(spec: str):
    path, _, function = spec.partition(":")
    module_spec = importlib.util.spec_from_file_location("model_direct_user", path)
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    return getattr(module, function or "model")


def calls(code: str) -> dict:
    return {name: len(re.findall(pattern, code, re.M)) for name, pattern in _CALLS}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model")
    parser.add_argument("--json", default=None, help="envcheck bench --model --json output, to print beside")
    parser.add_argument("--sets", nargs="*", default=list(SETS))
    args = parser.parse_args()

    import torch
    import torch._inductor.config as inductor_config
    from torch._inductor.utils import run_and_get_code
    from triton.testing import do_bench

    theirs = {}
    if args.json:
        with open(args.json, encoding="utf-8") as handle:
            timing = (json.load(handle).get("model") or {}).get("timing") or {}
        theirs = {row["name"]: row for row in timing.get("rows") or []}
    with torch.device("cuda"):
        module, inputs = load(args.model)()
    module = module.cuda().eval()
    inputs = inputs if isinstance(inputs, (tuple, list)) else (inputs,)
    inputs = tuple(x.cuda() if isinstance(x, torch.Tensor) else x for x in inputs)
    print(f"{'set':20} {'direct ms':>10} {'envcheck ms':>12}  {'direct GEMMs':32} {'envcheck GEMMs':32} status")
    with torch.no_grad():
        for backends in args.sets:
            torch._dynamo.reset()
            inductor_config.max_autotune = True
            inductor_config.max_autotune_gemm_backends = backends
            inductor_config.triton.cudagraphs = False
            began = time.perf_counter()
            try:
                compiled = torch.compile(module)
                _, codes = run_and_get_code(compiled, *inputs)
                compile_s = time.perf_counter() - began
                ms = do_bench(lambda: compiled(*inputs), warmup=50, rep=300)
                found, status = calls("\n".join(codes)), f"ok, compile {compile_s:.1f} s"
            except Exception as exc:  # noqa: BLE001 - a set that fails is a line of the table
                ms, found, status = None, {}, f"{type(exc).__name__}: {str(exc).splitlines()[0][:120]}"
            other = theirs.get(backends) or {}
            mine = ", ".join(f"{k} {v}" for k, v in found.items())
            said = ", ".join(f"{k} {v}" for k, v in sorted((other.get("gemm_calls") or {}).items()))
            direct = "" if ms is None else f"{ms:.4f}"
            envcheck = f"{other['ms']:.4f}" if other.get("ms") else ""
            print(f"{backends:20} {direct:>10} {envcheck:>12}  {mine:32} {said:32} {status}"
                  + (f" | envcheck: {other.get('status')}" if other else ""), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
