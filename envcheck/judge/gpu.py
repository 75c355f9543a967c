"""gpu.compute-capability: for each GPU judged for (seen here, or given with --gpu-capability), which kernels the
profile's library offers for its compute capability, the caveats of that GPU with the installed torch, and the recorded
runs of the combination."""

from __future__ import annotations

from typing import Optional

from ..model import Failure, Finding, Gpu, Remedy, Status, capability_text
from ..profile import GpuRule, Policy, on_capabilities, spec_text
from ._common import Context, source_lines, worst
from .evidence import recorded

__all__ = ["gpu_capability", "rule_for", "hidden_by_visible_devices"]


def rule_for(policy: Policy, capability: tuple[int, int]) -> tuple[GpuRule, bool]:
    """The policy's rule for a compute capability, and whether it is listed exactly (else: nearest below)."""
    if capability < policy.gpu_below.capability or not policy.gpus:
        return policy.gpu_below, True
    exact = next((r for r in policy.gpus if r.capability == capability), None)
    if exact is not None:
        return exact, True
    below = [r for r in policy.gpus if r.capability < capability]
    return (below[-1] if below else policy.gpu_below), False


def hidden_by_visible_devices(value: Optional[str], count: int) -> bool:
    """Whether CUDA_VISIBLE_DEVICES leaves CUDA none of the `count` GPUs NVML sees (NVML ignores the variable).

    CUDA reads the comma-separated list up to its first invalid entry: an index must be below the GPU count; a
    UUID (GPU-..., MIG-...) is taken as naming a GPU here, since envcheck does not read UUIDs."""
    if value is None or count == 0:
        return False
    first = value.split(",")[0].strip()  # a valid first entry is a visible GPU; an invalid one ends the list at once
    if first.startswith(("GPU-", "MIG-")):
        return False
    return not (first.isdigit() and int(first) < count)


def _judge_gpu(ctx: Context, gpu: Gpu) -> tuple[Status, str, list[str], list[tuple[str, str]]]:
    """One GPU's verdict: its row of the kernel table and the caveats that apply beside the installed torch; the
    text, the ways out, and the sources."""
    policy = ctx.policy
    rule, exact = rule_for(policy, gpu.capability)
    status = rule.status
    cc = gpu.capability_text
    if gpu.given:
        text = f"compute capability {cc} (given with --gpu-capability, not seen here): {rule.kernels}"
    else:
        text = f"GPU {gpu.index}: {gpu.name}, compute capability {cc}: {rule.kernels}"
    if not exact:
        status = worst([status, Status.WARN])
        text += f" (not verified: {cc} is not in the profile's kernel table; judged as {capability_text(rule.capability)})"
    if gpu.mig:
        status = worst([status, Status.WARN])
        text += "; MIG mode is on: kernels run in a slice of the GPU and autotuning timings reflect that slice"
    remedies = [rule.remedy] if rule.remedy and rule.status is not Status.PASS else []
    sources = [(f"compute capability {capability_text(rule.capability)}", rule.source)]
    torch = ctx.torch
    for caveat in policy.caveats:
        if caveat.applies(gpu.capability, torch, ctx.installed_version):
            status = worst([status, caveat.status])
            text += f"; {caveat.text}"
            remedies += [caveat.remedy] if caveat.remedy else []
            sources.append((caveat.name, caveat.source))
    return status, text, remedies, sources


def _unjudged_caveats(ctx: Context) -> tuple[str, ...]:
    """Without torch the caveats of a torch range cannot be judged: named, for the torch fix would install."""
    if ctx.torch is not None:
        return ()
    return tuple(f"with torch {spec_text(c.torch)} on compute capability {spec_text(c.capability)}"
                 + (f" beside {c.when}" if c.when else "") + f": {c.text} (no torch installed to judge it by)"
                 for c in ctx.policy.caveats
                 if any(on_capabilities(c.capability, (cc,)) for cc in ctx.capabilities))


def gpu_capability(ctx: Context) -> Finding:
    check, title = "gpu.compute-capability", "GPU compute capability"
    policy = ctx.policy
    listed = ", ".join(capability_text(r.capability) for r in policy.gpus if r.status == Status.PASS)
    wanted = f"compute capability >= {capability_text(policy.gpu_below.capability)}" + (
        f" (full kernel set on {listed})" if listed else ""
    )
    why = policy.gpu_why or f"The kernel library offers {policy.backend} kernels by compute capability; Inductor itself does not check it."
    given = any(g.given for g in ctx.facts.gpus)
    if not given:
        early = _no_gpu(ctx, check, title, wanted, why)
        if early is not None:
            return early
    gpus = ctx.gpus
    judged = [_judge_gpu(ctx, gpu) for gpu in gpus]
    status = worst([s for s, _, _, _ in judged])
    details = tuple(text for _, text, _, _ in judged) if len(judged) > 1 else ()
    if len({g.capability for g in gpus}) > 1:
        status = worst([status, Status.WARN])
        details += ("GPUs of different compute capabilities: Inductor builds for device 0's unless torch._inductor.config.cuda.arch says otherwise.",)
    seen = ctx.driver.gpus if given and ctx.driver is not None else ()
    if seen:
        details += ("judged for the GPU given, not the one seen here (--gpu-capability wins): "
                    + ", ".join(f"GPU {g.index}: {g.name}, compute capability {g.capability_text}" for g in seen),)
    details += _unjudged_caveats(ctx)
    details += source_lines(*dict.fromkeys(source for _, _, _, sources in judged for source in sources))
    evidence = recorded(ctx)
    details += (evidence.said,)
    remedy: Optional[Remedy] = None
    if status is not Status.PASS:
        ways = list(dict.fromkeys(way for _, _, ways, _ in judged for way in ways))
        if ways:
            remedy = Remedy(" ".join(ways))
        elif status.is_problem:
            remedy = Remedy(f"Use a GPU of compute capability {capability_text(policy.gpu_below.capability)} or newer.")
    found = "; ".join(text for _, text, _, _ in judged)
    return Finding(check, title, status, found, wanted, why, remedy, details, evidence)


def _no_gpu(ctx: Context, check: str, title: str, wanted: str, why: str) -> Optional[Finding]:
    """The finding when no GPU is given and none can be judged here (--no-gpu, no driver, none visible)."""
    if ctx.no_gpu:
        return Finding(check, title, Status.SKIP,
                       "not checked (--no-gpu; --gpu-capability X.Y judges for a GPU that is not here)", wanted, why)
    driver = ctx.facts.driver
    if isinstance(driver, Failure):
        return Finding(check, title, Status.FAIL, f"no GPU visible: {driver.message}", wanted, why,
                       Remedy("Run on a machine with an NVIDIA GPU and driver (or pass --no-gpu on a build machine, "
                              "with --gpu-capability X.Y for the GPU it builds for)."))
    if not driver.gpus:
        return Finding(check, title, Status.FAIL, f"the driver ({driver.version}) sees no GPU", wanted, why,
                       Remedy("Check that the GPU is visible here (CUDA_VISIBLE_DEVICES, container --gpus, MIG instances)."))
    if hidden_by_visible_devices(ctx.facts.cuda_visible_devices, len(driver.gpus)):
        return Finding(check, title, Status.FAIL,
                       f"CUDA_VISIBLE_DEVICES={ctx.facts.cuda_visible_devices!r} hides every GPU the driver sees "
                       f"({len(driver.gpus)}: {', '.join(g.name for g in driver.gpus)}): CUDA, torch and the backend will find none",
                       wanted, why,
                       Remedy("Unset CUDA_VISIBLE_DEVICES, or set it to the indices or UUIDs of the GPUs to use (0, 1, ...).",
                              commands=(("env", "-u", "CUDA_VISIBLE_DEVICES", "envcheck", "doctor", "--python", ctx.python),)))
    return None
