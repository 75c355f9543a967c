"""gpu.compute-capability: for each GPU, which kernels the profile's library offers for its compute capability."""

from __future__ import annotations

from typing import Optional

from ..model import Failure, Finding, Gpu, Remedy, Status
from ..profile import GpuRule, Policy
from ._common import Context, worst

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


def _judge_gpu(policy: Policy, gpu: Gpu) -> tuple[Status, str]:
    rule, exact = rule_for(policy, gpu.capability)
    status = rule.status
    text = f"GPU {gpu.index}: {gpu.name}, compute capability {gpu.capability_text}: {rule.kernels}"
    if not exact:
        status = worst([status, Status.WARN])
        text += f" (not verified: {gpu.capability_text} is not in the policy; judged as {rule.capability[0]}.{rule.capability[1]})"
    if gpu.mig:
        status = worst([status, Status.WARN])
        text += "; MIG mode is on: kernels run in a slice of the GPU and autotuning timings reflect that slice"
    return status, text


def gpu_capability(ctx: Context) -> Finding:
    check, title = "gpu.compute-capability", "GPU compute capability"
    policy = ctx.policy
    listed = ", ".join(f"{r.capability[0]}.{r.capability[1]}" for r in policy.gpus if r.status == Status.PASS)
    wanted = f"compute capability >= {policy.gpu_below.capability[0]}.{policy.gpu_below.capability[1]}" + (
        f" (full kernel set on {listed})" if listed else ""
    )
    why = policy.gpu_why or f"The kernel library offers {policy.backend} kernels by compute capability; Inductor itself does not check it."
    if ctx.no_gpu:
        return Finding(check, title, Status.SKIP, "not checked (--no-gpu)", wanted, why)
    driver = ctx.facts.driver
    if isinstance(driver, Failure):
        return Finding(check, title, Status.FAIL, f"no GPU visible: {driver.message}", wanted, why,
                       Remedy("Run on a machine with an NVIDIA GPU and driver (or pass --no-gpu on a build machine)."))
    if not driver.gpus:
        return Finding(check, title, Status.FAIL, f"the driver ({driver.version}) sees no GPU", wanted, why,
                       Remedy("Check that the GPU is visible here (CUDA_VISIBLE_DEVICES, container --gpus, MIG instances)."))
    hidden = hidden_by_visible_devices(ctx.facts.cuda_visible_devices, len(driver.gpus))
    if hidden:
        return Finding(check, title, Status.FAIL,
                       f"CUDA_VISIBLE_DEVICES={ctx.facts.cuda_visible_devices!r} hides every GPU the driver sees "
                       f"({len(driver.gpus)}: {', '.join(g.name for g in driver.gpus)}): CUDA, torch and the backend will find none",
                       wanted, why,
                       Remedy("Unset CUDA_VISIBLE_DEVICES, or set it to the indices or UUIDs of the GPUs to use (0, 1, ...).",
                              commands=(("env", "-u", "CUDA_VISIBLE_DEVICES", "envcheck", "doctor", "--python", ctx.python),)))
    judged = [_judge_gpu(policy, gpu) for gpu in driver.gpus]
    status = worst([s for s, _ in judged])
    capabilities = {g.capability for g in driver.gpus}
    details = tuple(text for _, text in judged)
    if len(capabilities) > 1:
        status = worst([status, Status.WARN])
        details += ("GPUs of different compute capabilities: Inductor builds for device 0's unless torch._inductor.config.cuda.arch says otherwise.",)
    found = "; ".join(text for _, text in judged)
    remedy: Optional[Remedy] = None
    if status.is_problem:
        remedy = Remedy(f"Use a GPU of compute capability {policy.gpu_below.capability[0]}.{policy.gpu_below.capability[1]} or newer.")
    return Finding(check, title, status, found, wanted, why, remedy, details if len(judged) > 1 else ())
