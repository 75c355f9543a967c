"""python.version, torch.version, torch.cuda-build."""

from __future__ import annotations

from typing import Optional

from ..model import Finding, Remedy, Status
from ..profile import driver_text, lower_bound, spec_text, torch_release
from ._common import Context, interpreter_error, pip_install, satisfies, shortfall, source_lines, version_or_none

__all__ = ["python_version", "torch_version", "torch_cuda_build"]


def python_version(ctx: Context) -> Finding:
    """The interpreter against the Python range of the installed torch (torch 2.15.0 needs >= 3.11), or, without
    torch, against the profile's: pip then installs the newest torch of the profile's range that it can take. Without
    torch the finding also says what each stack needs and which one `pip install torch` gives today, and where this
    Python cannot take the chosen profile but another's, its remedy is that stack."""
    title = "Python version"
    error = interpreter_error(ctx, "python.version", title)
    if error:
        return error
    interpreter, policy = ctx.interpreter, ctx.policy
    torch = ctx.torch
    wanted_range, ranges = policy.python_for(torch)
    shown = " and ".join(spec_text(r.version) for r in ranges) if ranges else spec_text(wanted_range)
    wanted = f"Python {shown}" + (f" (beside torch {torch})" if ranges else "")
    why = " ".join([policy.python_why, *(r.why for r in ranges)]).strip()
    details = source_lines(("python", policy.python_source),
                           *((f"torch {spec_text(r.torch)}", r.source) for r in ranges),
                           *(("newest torch", p.torch_newest_source) for p in _stacks(ctx) if torch is None))
    version = interpreter.version_text
    stacks = f"; without torch: {_stacks_said(ctx, version)}" if torch is None and ctx.others else ""
    if satisfies(version, wanted_range):
        found = f"Python {version}"
        if torch is None:
            narrower = [r for r in policy.python_by_torch if not satisfies(version, r.version)]
            found += "".join(f"; torch {spec_text(r.torch)} needs Python {spec_text(r.version)}: on this Python "
                             f"pip installs an older torch of the profile's range ({policy.torch_requirement})"
                             for r in narrower)
        return Finding("python.version", title, Status.PASS, found + stacks, wanted, why, None, details)
    text, commands = new_venv(wanted_range, ctx.facts.pythons)
    text = f"{shortfall('Python', version, wanted_range)}. {text}"
    if ranges and satisfies(version, policy.python):
        text += (f" Or keep Python {version} with a torch of the profile's range ({policy.torch_requirement}) outside "
                 + ", ".join(spec_text(r.torch) for r in ranges) + ".")
    fits = [other for other in ctx.others if torch is None and satisfies(version, other.python)]
    if fits:  # a new user's empty venv: keep it, with the stack that takes this Python
        other = fits[0]
        text = (f"Keep Python {version}: profile {other.id} (torch {spec_text(other.torch)}) takes it; "
                f"`envcheck fix --profile {other.id}` installs that stack here. Or, for profile {policy.id}: {text}")
        commands = (("envcheck", "fix", "--python", ctx.python, "--profile", other.id),) + commands
    return Finding(
        "python.version", title, Status.FAIL,
        f"Python {version} ({interpreter.executable})" + (f": torch {torch} requires Python {shown}" if ranges else "")
        + stacks,
        wanted, why, Remedy(text=text, commands=commands), details,
    )


VENV = "nvgemm-venv"  # the virtual environment the advice makes, in the folder it is run from


def venv_python(wanted, pythons: tuple[tuple[str, str], ...]) -> Optional[tuple[str, str]]:
    """The interpreter to make the new virtual environment from: the newest of those found on this machine
    (Facts.pythons, (path, version)) that the stack takes; None where none does."""
    return next(((path, v) for path, v in pythons if satisfies(v, wanted)), None)


def new_venv(wanted, pythons: tuple[tuple[str, str], ...]) -> tuple[str, tuple[tuple[str, ...], ...]]:
    """The advice for a target whose Python the stack does not take, doctor's and fix's alike: a virtual environment
    from an interpreter on this machine that it takes (venv_python), or, where none was found, from the oldest
    Python it takes, once installed. (text, commands)."""
    then = ("envcheck", "fix", "--python", f"{VENV}/bin/python")
    chosen = venv_python(wanted, pythons)
    if chosen is not None:
        path, found = chosen
        return (f"An interpreter's version cannot be changed in place: Python {found} is on this machine at {path}; "
                f"make a virtual environment from it and point envcheck at it.",
                ((path, "-m", "venv", VENV), then))
    floor = python_floor(wanted)
    return (f"An interpreter's version cannot be changed in place, and envcheck found no Python {spec_text(wanted)} on "
            f"this machine: install Python {floor} or newer (your distribution's python{floor} package, or "
            f"`uv python install {floor}`), make a virtual environment from it and point envcheck at it.",
            ((f"python{floor}", "-m", "venv", VENV), then))


def python_floor(specifier) -> str:
    """The oldest Python a range admits, as MAJOR.MINOR: its largest lower bound (3.12 where it has none)."""
    lowest = lower_bound(specifier)
    return f"{lowest.major}.{lowest.minor}" if lowest.release != (0,) else "3.12"


def _stacks(ctx: Context) -> list:
    """The chosen profile and the others, oldest torch first."""
    return sorted((ctx.policy, *ctx.others), key=lambda p: lower_bound(p.torch))


def _stacks_said(ctx: Context, version: str) -> str:
    """What each stack needs of Python, and which one a plain `pip install torch` gives on this Python today."""
    parts = []
    for profile in _stacks(ctx):
        narrower = "".join(f", with torch {spec_text(r.torch)} {spec_text(r.version)}" for r in profile.python_by_torch)
        parts.append(f"profile {profile.id} (torch {spec_text(profile.torch)}) needs Python "
                     f"{spec_text(profile.python)}{narrower}")
    said = "; ".join(parts)
    newest = next((p for p in reversed(_stacks(ctx)) if p.torch_newest is not None), None)
    if newest is not None:
        needs, _ = newest.python_for(newest.torch_newest)
        if satisfies(version, needs):
            said += (f". `pip install torch` gives torch {newest.torch_newest} today, which profile {newest.id} "
                     "judges")
        else:
            said += (f". `pip install torch` gives torch {newest.torch_newest} today where Python is "
                     f"{spec_text(needs)}; on Python {version} an older one")
    return said


def _torch_remedy(ctx: Context, why: str, reinstall: bool) -> Remedy:
    requirement = str(ctx.policy.torch_requirement)
    return pip_install(ctx.python, [requirement], why, index_url=ctx.policy.torch_index_url, reinstall=reinstall)


def torch_version(ctx: Context) -> Finding:
    title = "PyTorch version"
    error = interpreter_error(ctx, "torch.version", title)
    if error:
        return error
    interpreter, policy = ctx.interpreter, ctx.policy
    wanted = f"torch {spec_text(policy.torch)}"
    version = interpreter.torch_version
    if version is None:
        module = interpreter.module("torch")
        found = "not installed" if not (module and module.origin) else f"a torch module at {module.origin} without version.py or metadata"
        return Finding("torch.version", title, Status.FAIL, found, wanted, policy.torch_why,
                       _torch_remedy(ctx, shortfall("torch", None, policy.torch), False))
    release = torch_release(version)
    if release is not None and policy.torch.contains(release):
        if policy.torch_verified.contains(release):
            return Finding("torch.version", title, Status.PASS, f"torch {version}", wanted, policy.torch_why)
        return Finding(
            "torch.version", title, Status.WARN,
            f"torch {version}: in the profile's range, but newer than the versions it was verified with "
            f"({spec_text(policy.torch_verified)}): judged by this profile, unverified",
            wanted, policy.torch_why,
        )
    older = _below(release, policy)
    why = f"torch {version} predates the {policy.backend} backend this profile checks" if older else (
        f"torch {version} is outside this profile's range ({spec_text(policy.torch)})")
    return Finding(
        "torch.version", title, Status.FAIL, f"torch {version}: {why}", wanted, policy.torch_why,
        _torch_remedy(ctx, shortfall("torch", version, policy.torch), True),
    )


def _below(release, policy) -> bool:
    """A torch older than the profile's range (not newer than it)."""
    if release is None:
        return False
    return any(s.operator in (">=", ">", "==", "~=") and not s.contains(release) for s in policy.torch)


def torch_cuda_build(ctx: Context) -> Finding:
    title = "PyTorch CUDA build"
    check = "torch.cuda-build"
    error = interpreter_error(ctx, check, title)
    if error:
        return error
    policy = ctx.policy
    build = ctx.interpreter.torch
    wanted = f"a CUDA {spec_text(policy.torch_cuda)} build of torch"
    why = "Inductor compiles the CuteDSL kernels for CUDA devices only; a CPU build never offers the backend."
    if build is None:
        return Finding(check, title, Status.SKIP, "no torch to inspect (see torch.version)", wanted, why)
    if build.cuda is None:
        return Finding(
            check, title, Status.FAIL, f"torch {build.version} is a CPU-only build", wanted, why,
            _torch_remedy(ctx, "replace the CPU-only build with a CUDA 13 build", True),
        )
    found = f"torch {build.version} built for CUDA {build.cuda}"
    if not satisfies(build.cuda, policy.torch_cuda):
        return Finding(
            check, title, Status.FAIL, found, wanted, why,
            _torch_remedy(ctx, f"torch is built for CUDA {build.cuda}", True),
        )
    driver = ctx.driver
    torch_cuda = version_or_none(build.cuda)
    driver_cuda = version_or_none(driver.cuda) if driver else None
    if driver_cuda is not None and torch_cuda is not None and torch_cuda.major > driver_cuda.major:
        return Finding(
            check, title, Status.FAIL,
            f"{found}, but the driver supports CUDA {driver.cuda} at most",
            f"{wanted}, no newer than the driver's CUDA major",
            "A CUDA runtime of a newer major version than the driver cannot start (cudaErrorInsufficientDriver).",
            Remedy(f"Upgrade the NVIDIA driver to {driver_text(policy.driver_floor)} or newer (see cuda.driver)."),
        )
    suffix = f"; the driver supports CUDA {driver.cuda}" if driver else ""
    return Finding(check, title, Status.PASS, found + suffix, wanted, why)
