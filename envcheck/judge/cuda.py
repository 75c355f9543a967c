"""cuda.driver and cuda.toolkit: the driver's highest CUDA against the policy's, and the nvcc a build would use."""

from __future__ import annotations

from ..model import Failure, Finding, Remedy, Status, Step
from ..profile import RECIPE, driver_floor_for, driver_text, spec_text
from ._common import Context, basis_text, fix_command, satisfies, shortfall, version_or_none

__all__ = ["cuda_driver", "cuda_toolkit", "driver_remedy", "is_consumer_gpu"]

DRIVER_LINK = "https://docs.nvidia.com/cuda/cuda-toolkit-release-notes/"

# Forward compatibility (cuda-compat) is supported on datacenter GPUs only; consumer GPUs fail with error 804.
_CONSUMER_MARKS = ("GeForce", "TITAN", "RTX")


def is_consumer_gpu(name: str) -> bool:
    return any(mark.lower() in name.lower() for mark in _CONSUMER_MARKS) and "RTX PRO" not in name.upper()


def cuda_driver(ctx: Context) -> Finding:
    check, title = "cuda.driver", "NVIDIA driver"
    policy = ctx.policy
    floor = driver_text(policy.driver_floor)
    wanted = f"driver >= {floor} (supports CUDA {policy.driver_cuda})"
    why = (
        f"The recipe's CUDA {policy.driver_cuda} needs a driver that supports it: the minimum Linux driver for CUDA "
        f"{policy.driver_cuda} is {floor}. nvidia-smi's 'CUDA Version' is this ceiling, not an installed toolkit."
    )
    if ctx.no_gpu:
        return Finding(check, title, Status.SKIP, "not checked (--no-gpu)", wanted, why)
    driver = ctx.facts.driver
    if isinstance(driver, Failure):
        return Finding(check, title, Status.FAIL, driver.message, wanted, why, driver_remedy(policy, missing=True))
    found = f"driver {driver.version}, supports CUDA up to {driver.cuda}"
    supported = version_or_none(driver.cuda)
    if supported is not None and supported >= policy.driver_cuda:
        return Finding(check, title, Status.PASS, found, wanted, why)
    status = Status.FAIL
    if policy.cuda_basis == RECIPE and supported is not None and supported.major >= policy.driver_cuda.major:
        # The CUDA version is the recipe's; what runs is torch's own CUDA runtime, of the same major
        # (minor-version compatibility; torch.cuda-build checks torch's CUDA against this driver).
        status = ctx.deviation(RECIPE)
        found += f": below the recipe's CUDA {policy.driver_cuda} but the same major ({basis_text(RECIPE, ctx.strict)})"
    details = []
    own = driver_floor_for(policy.driver_floors, supported) if supported else None
    if supported is not None and own is not None:
        details.append(f"CUDA {driver.cuda} itself needs driver >= {driver_text(own)}; torch's own CUDA runtime may still run here.")
    remedy = driver_remedy(policy, tuple(g.name for g in driver.gpus))
    return Finding(check, title, status, found, wanted, why, remedy, tuple(details))


def driver_remedy(policy, gpu_names: tuple[str, ...] = (), *, missing: bool = False, lead: str = "") -> Remedy:
    """What to do about a driver below the policy's CUDA: the one text doctor, fix and smoke print.

    gpu_names: the GPUs it is for (forward compatibility is offered on datacenter GPUs only); missing: no driver
    at all; lead: a sentence of the caller's before it (what was seen)."""
    floor = driver_text(policy.driver_floor)
    if missing:
        text = (f"Install an NVIDIA driver {floor} or newer (CUDA {policy.driver_cuda}) on a machine with an NVIDIA "
                "GPU (or pass --no-gpu on a build machine).")
    else:
        text = (f"Upgrade the host's NVIDIA driver to {floor} or newer (CUDA {policy.driver_cuda}): it needs root and "
                "usually a reboot, and cannot be done from a virtual environment, so envcheck never tries it.")
    commands: tuple[tuple[str, ...], ...] = ()
    if policy.forward_compat and not missing:
        if gpu_names and not any(is_consumer_gpu(name) for name in gpu_names):
            text += (
                f" In a container on these datacenter GPUs, CUDA forward compatibility can stand in: install "
                f"{policy.forward_compat} and put /usr/local/cuda/compat first on LD_LIBRARY_PATH."
            )
            commands = (("apt-get", "install", "-y", policy.forward_compat),)
        else:
            text += f" Forward compatibility ({policy.forward_compat}) works on datacenter GPUs only (error 804 elsewhere)."
    return Remedy(f"{lead} {text}" if lead else text, commands, link=DRIVER_LINK)


def cuda_toolkit(ctx: Context) -> Finding:
    check, title = "cuda.toolkit", "CUDA toolkit (nvcc)"
    policy = ctx.policy
    wanted = f"nvcc {spec_text(policy.toolkit)}"
    why = policy.cuda_why
    toolkit = ctx.facts.toolkit
    miss_status = ctx.deviation(policy.cuda_basis) if policy.toolkit_level == "required" else Status.WARN
    if isinstance(toolkit, Failure):
        return Finding(check, title, Status.ERROR, toolkit.message, wanted, why)
    details = tuple(
        f"{n.path} ({n.source}): " + (f"nvcc {n.version}" if n.version else n.error or "unusable") for n in toolkit.candidates
    )
    fitting = next((n for n in toolkit.candidates if satisfies(n.version, policy.toolkit)), None)
    chosen = toolkit.chosen
    if chosen is not None and fitting is chosen:
        return Finding(check, title, Status.PASS, f"nvcc {chosen.version} at {chosen.path} ({chosen.source})", wanted, why, None, details)
    found = f"nvcc {chosen.version} at {chosen.path} ({chosen.source})" if chosen else "no nvcc found (CUDA_HOME, PATH, /usr/local/cuda, the nvidia-cuda-nvcc wheel)"
    if policy.cuda_basis == RECIPE:
        found += f" ({basis_text(RECIPE, ctx.strict)})"
    if fitting is not None:
        home = fitting.path.rsplit("/bin/nvcc", 1)[0]
        remedy = Remedy(
            f"nvcc {fitting.version} is already here at {fitting.path}: make it the one in use (export CUDA_HOME={home} "
            f"and put {home}/bin first on PATH).",
        )
    else:
        remedy = Remedy(
            f"Install the CUDA {spec_text(policy.toolkit)} toolkit in a prefix of its own (never into torch's environment: "
            f"torch pins its own cuda-toolkit) and source the environment file `envcheck fix` writes; or install it "
            f"system-wide from NVIDIA's packages.",
            commands=(fix_command(ctx.python),),
            steps=(Step("toolkit-install", (str(policy.toolkit_requirement),),
                        shortfall("nvcc", chosen.version if chosen else None, policy.toolkit)),),
        )
    return Finding(check, title, miss_status, found, wanted, why, remedy, details)
