"""python.version, torch.version, torch.cuda-build."""

from __future__ import annotations

from typing import Optional

from ..model import Finding, Remedy, Status
from ..profile import driver_text, lower_bound, spec_text, torch_release
from ._common import Context, interpreter_error, pip_install, satisfies, shortfall, source_lines, version_or_none

__all__ = ["python_version", "torch_version", "torch_cuda_build"]


def python_version(ctx: Context) -> Finding:
    """The interpreter against the Python range of the installed torch (torch 2.15.0 needs >= 3.11), or, without
    torch, against the profile's: pip then installs the newest torch of the profile's range that it can take (the
    profile was chosen for that torch: profile.select). One remedy, for the profile judged: a virtual environment
    from a Python it takes (new_venv)."""
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
                           *((("newest torch", policy.torch_newest_source),) if torch is None else ()))
    version = interpreter.version_text
    if satisfies(version, wanted_range):
        found = f"Python {version}"
        if torch is None:
            narrower = [r for r in policy.python_by_torch if not satisfies(version, r.version)]
            found += "".join(f"; torch {spec_text(r.torch)} needs Python {spec_text(r.version)}: on this Python "
                             f"pip installs an older torch of the profile's range ({policy.torch_requirement})"
                             for r in narrower)
        return Finding("python.version", title, Status.PASS, found, wanted, why, None, details)
    text, commands = new_venv(wanted_range, ctx.facts.pythons, policy.python_suggested)
    text = f"{shortfall('Python', version, wanted_range)}. {text}"
    if ranges and satisfies(version, policy.python):
        text += (f" Or keep Python {version} with a torch of the profile's range ({policy.torch_requirement}) outside "
                 + ", ".join(spec_text(r.torch) for r in ranges) + ".")
    return Finding(
        "python.version", title, Status.FAIL,
        f"Python {version} ({interpreter.executable})" + (f": torch {torch} requires Python {shown}" if ranges else ""),
        wanted, why, Remedy(text=text, commands=commands), details,
    )


VENV = "nvgemm-venv"  # the virtual environment the advice makes, in the folder it is run from


def venv_python(wanted, pythons: tuple[tuple[str, str], ...], suggested: str = "") -> Optional[tuple[str, str]]:
    """The interpreter to make the new virtual environment from, among those found on this machine (Facts.pythons,
    (path, version), newest first) that the stack takes: one of the profile's suggested Python (MAJOR.MINOR, the
    Python its recorded runs had), else the newest; None where none is taken."""
    taken = [(path, v) for path, v in pythons if satisfies(v, wanted)]
    return next((found for found in taken if _minor(found[1]) == suggested), taken[0] if taken else None)


def _minor(version: str) -> str:
    return ".".join(version.split(".")[:2])


def new_venv(wanted, pythons: tuple[tuple[str, str], ...], suggested: str = "") -> tuple[str, tuple[tuple[str, ...], ...]]:
    """The advice for a target whose Python the stack does not take, doctor's and fix's alike: a virtual environment
    from an interpreter on this machine that it takes (venv_python), or, where none was found, from the profile's
    suggested Python (or else the oldest it takes), once installed. (text, commands)."""
    then = ("envcheck", "fix", "--python", f"{VENV}/bin/python")
    chosen = venv_python(wanted, pythons, suggested)
    if chosen is not None:
        path, found = chosen
        return (f"An interpreter's version cannot be changed in place: Python {found} is on this machine at {path}; "
                f"make a virtual environment from it and point envcheck at it.",
                ((path, "-m", "venv", VENV), then))
    takes_suggested = bool(suggested) and satisfies(f"{suggested}.0", wanted)
    floor = suggested if takes_suggested else python_floor(wanted)
    return (f"An interpreter's version cannot be changed in place, and envcheck found no Python {spec_text(wanted)} on "
            f"this machine: install Python {floor}{'' if takes_suggested else ' or newer'} (your distribution's "
            f"python{floor} package, or "
            f"`uv python install {floor}`), make a virtual environment from it and point envcheck at it.",
            ((f"python{floor}", "-m", "venv", VENV), then))


def python_floor(specifier) -> str:
    """The oldest Python a range admits, as MAJOR.MINOR: its largest lower bound (3.12 where it has none)."""
    lowest = lower_bound(specifier)
    return f"{lowest.major}.{lowest.minor}" if lowest.release != (0,) else "3.12"


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
