"""cutedsl.version and cutedsl.importable: the right nvidia-cutlass-dsl, and `import cutlass` reaching it."""

from __future__ import annotations

import os
from typing import Optional

from packaging.requirements import InvalidRequirement, Requirement

from ..model import Distribution, Finding, Interpreter, Remedy, Status
from ..policy import Conflict, Policy, spec_text
from ._common import Context, interpreter_error, pip_install, pip_uninstall, satisfies

__all__ = ["cutedsl_version", "cutedsl_importable", "conflicting"]


def cutedsl_version(ctx: Context) -> Finding:
    check, title = "cutedsl.version", "CuTeDSL (nvidia-cutlass-dsl) version"
    error = interpreter_error(ctx, check, title)
    if error:
        return error
    rule = ctx.policy.cutedsl
    wanted = f"{rule.name} {spec_text(rule.specifier)}"
    dist = ctx.interpreter.dist(rule.name)
    install = pip_install(ctx.python, [rule.requirement], f"{rule.name} {spec_text(rule.specifier)}")
    if dist is None:
        return Finding(check, title, Status.FAIL, "not installed", wanted, rule.why, install)
    found = f"{rule.name} {dist.version}"
    if satisfies(dist.version, rule.specifier):
        return Finding(check, title, Status.PASS, found, wanted, rule.why)
    return Finding(check, title, Status.FAIL, found, wanted, rule.why, install)


def conflicting(policy: Policy, interpreter: Interpreter) -> tuple[tuple[Distribution, Conflict], ...]:
    """Installed distributions the policy forbids, with the rule; a split package the installed DSL needs is not stale."""
    dsl = interpreter.dist(policy.cutedsl.name)
    needed = set()
    if dsl is not None:
        for text in dsl.requires:
            try:
                needed.add(Requirement(text).name.lower().replace("_", "-"))
            except InvalidRequirement:
                continue
    found = []
    for dist in interpreter.distributions:
        for conflict in policy.conflicts:
            if conflict.matches(dist.name) and not (conflict.is_prefix and dist.name in needed):
                found.append((dist, conflict))
                break
    return tuple(found)


def _inside(path: str, folder: str) -> bool:
    path, folder = os.path.normpath(path), os.path.normpath(folder)
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _owner(interpreter: Interpreter, origin: str) -> Optional[Distribution]:
    """The distribution whose location holds a module, by the longest matching location (a best guess)."""
    candidates = [d for d in interpreter.distributions if _inside(origin, d.location)]
    return max(candidates, key=lambda d: len(d.location), default=None)


def cutedsl_importable(ctx: Context) -> Finding:
    check, title = "cutedsl.importable", "`import cutlass` reaches CuTeDSL"
    error = interpreter_error(ctx, check, title)
    if error:
        return error
    policy, interpreter, python = ctx.policy, ctx.interpreter, ctx.python
    rule = policy.cutedsl
    module_name = policy.cutedsl_module
    wanted = f"`import {module_name}` loads {rule.name}'s package"
    why = (
        f"Inductor decides the backend is available with find_spec('{module_name}'); a shadowing package or an "
        f"unread .pth file makes it fail or load the wrong code."
    )
    dsl = interpreter.dist(rule.name)
    module = interpreter.module(module_name)
    origin = module.origin if module else None
    conflicts = conflicting(policy, interpreter)
    conflict_names = tuple(dict.fromkeys(d.name for d, _ in conflicts))
    conflict_text = "; ".join(f"{d.name} {d.version} is installed: {c.why}" for d, c in conflicts)
    install = pip_install(python, [rule.requirement], "CuTeDSL is needed")

    if dsl is None:
        if conflicts:
            return Finding(check, title, Status.FAIL, f"{rule.name} is not installed; {conflict_text}", wanted, why,
                           pip_uninstall(python, conflict_names, "the wrong package", then=install))
        return Finding(check, title, Status.SKIP, f"{rule.name} is not installed (see cutedsl.version)", wanted, why)

    shipped = os.path.join(dsl.location, "nvidia_cutlass_dsl", "python_packages")
    from_dsl = origin is not None and _inside(origin, shipped)
    stale = [d for d, c in conflicts if c.is_prefix]
    if conflicts and from_dsl and not stale:
        # e.g. nvidia-cutlass 4.x beside the DSL: it installs cutlass_cppgen, not `cutlass`, so nothing is shadowed
        return Finding(check, title, Status.WARN, f"`import {module_name}` loads {origin}; but {conflict_text}", wanted, why,
                       pip_uninstall(python, conflict_names, "not needed beside CuTeDSL"))
    if conflicts:
        found = conflict_text + (f"; `import {module_name}` loads {origin}" if origin else f"; `import {module_name}` fails")
        reinstall = pip_install(python, [rule.requirement], "restore files the conflicting packages overwrote", reinstall=True)
        return Finding(check, title, Status.FAIL, found, wanted, why, pip_uninstall(python, conflict_names, "conflicts with CuTeDSL", then=reinstall))
    if from_dsl:
        return Finding(check, title, Status.PASS, f"`import {module_name}` loads {origin}", wanted, why)
    if origin is None:
        if os.path.realpath(dsl.location) not in {os.path.realpath(s) for s in interpreter.site_dirs}:
            return Finding(
                check, title, Status.FAIL,
                f"{rule.name} {dsl.version} is installed in {dsl.location}, which is not a site directory, so Python "
                f"never reads its nvidia_cutlass_dsl.pth and `import {module_name}` fails (a `pip install --target` "
                f"directory on PYTHONPATH?)",
                wanted, why,
                Remedy(
                    f"Install {rule.name} into the interpreter itself (without --target) and drop {dsl.location} from "
                    f"PYTHONPATH; or add {shipped} to PYTHONPATH as the .pth file would.",
                    commands=(("env", "-u", "PYTHONPATH", python, "-m", "pip", "install", rule.requirement),),
                ),
            )
        return Finding(
            check, title, Status.FAIL,
            f"{rule.name} {dsl.version} is installed in {dsl.location} but `import {module_name}` finds nothing"
            + (f" ({module.error})" if module and module.error else ""),
            wanted, why, pip_install(python, [rule.requirement], "a broken install", reinstall=True),
        )
    owner = _owner(interpreter, origin)
    owner_text = f" (it belongs to {owner.name} {owner.version})" if owner and owner.name != rule.name else ""
    return Finding(
        check, title, Status.FAIL,
        f"`import {module_name}` loads {origin}{owner_text}, not {rule.name}'s package in {shipped}",
        wanted, why,
        Remedy(f"Remove whatever provides {origin} from the path (PYTHONPATH, a stray directory or package)"),
    )
