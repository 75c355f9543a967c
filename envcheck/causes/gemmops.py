"""The GEMM ops NVGEMM has no kernel for: the explanation of nvgemm-no-kernel-for-op (signatures.toml), from the
profile's [[gemm-ops]] table (which aten ops Inductor's lowerings offer NVGEMM choices for on its stack, and on which
GPUs). explanations.py adds it to its table. Pure."""

from __future__ import annotations

from typing import Optional

from ..model import Remedy
from ..profile import spec_text
from .context import Context

__all__ = ["GEMM_OP_EXPLANATIONS", "backends_remedy", "no_kernel_for_op"]

# What a user wrote that lowers to the op, for the ops a model has most often.
WRITTEN_AS = {
    "addmm": "an nn.Linear or F.linear with a bias lowers to, a 3-D input too",
    "baddbmm": "torch.baddbmm is, a batched matmul added to an input",
    "mm": "a matmul or an nn.Linear without a bias lowers to",
    "bmm": "a batched matmul lowers to",
}


def backends_remedy(ctx: Context, op: str) -> Remedy:
    """Keep the other GEMM backends beside NVGEMM, so that Inductor compiles an op NVGEMM has no kernel for with them."""
    backends = f"ATEN,TRITON,{ctx.policy.backend}"
    variable = "TORCHINDUCTOR_MAX_AUTOTUNE_GEMM_BACKENDS"
    return Remedy(
        text=(f"Keep ATEN (and TRITON) in max_autotune_gemm_backends beside {ctx.policy.backend}: {variable}={backends}, "
              f"or torch._inductor.config.max_autotune_gemm_backends = \"{backends}\" before torch.compile. Inductor "
              f"then compiles {op} with cuBLAS or Triton and keeps {ctx.policy.backend} for the GEMMs it has kernels "
              "for. Nothing needs reinstalling."),
        commands=(("export", f"{variable}={backends}"),),
        environment=((variable, backends),),
    )


def no_kernel_for_op(said: str, ctx: Context) -> Optional[tuple[str, Optional[Remedy]]]:
    """`said` is the aten op the LoweringException names (`addmm`). None where the profile says NVGEMM serves it on
    this GPU (or says nothing of ops): then the generic no-valid-choices explains the log."""
    policy = ctx.policy
    if not policy.gemm_ops:
        return None
    row = policy.gemm_op(said)
    if row is not None and row.capability is None:
        return None
    cc = ctx.capability
    if row is not None and cc is not None and row.capability.contains(f"{cc[0]}.{cc[1]}"):
        return None
    stack = f"profile {policy.id}, torch {spec_text(policy.torch)}"
    stops = (f"With {policy.backend} the only GEMM backend, Inductor then has no choice at all for it and "
             "torch.compile stops (NoValidChoicesError)")
    if row is None:
        said_where = (f"NVGEMM has no kernel for aten.{said} on this stack ({stack}): Inductor's lowering of {said} "
                      f"offers ATen and Triton choices only. {stops}.")
    else:
        gpu = f"on this GPU ({cc[0]}.{cc[1]})" if cc is not None else "on another GPU (an H100 or H200 is 9.0)"
        said_where = (f"NVGEMM has kernels for aten.{said} on this stack ({stack}) only on compute capability "
                      f"{spec_text(row.capability)}{': ' + row.why if row.why else ''}. {stops} {gpu}"
                      f"{'' if cc is not None else '; on a GPU of that capability, an earlier error names the candidate that failed'}.")
    written = f" aten.{said} is what {WRITTEN_AS[said]}." if said in WRITTEN_AS else ""
    everywhere = ", ".join(r.op for r in policy.gemm_ops if r.capability is None)
    return (
        f"{said_where}{written} {policy.backend} serves {everywhere or 'no op'} on every GPU here. Nothing is missing "
        "or broken in the install.",
        backends_remedy(ctx, said),
    )


GEMM_OP_EXPLANATIONS = {"nvgemm-no-kernel-for-op": no_kernel_for_op}
