"""cutedsl.version and cutedsl.importable: the right nvidia-cutlass-dsl, and `import cutlass` reaching it."""

from __future__ import annotations

import os
from dataclasses import replace
from typing import Optional

from packaging.requirements import InvalidRequirement, Requirement

from ..model import Distribution, Finding, Interpreter, PthImport, Remedy, Status, canonical_name
from ..profile import RECIPE, RUNTIME, Conflict, PackageRule, Policy, on_capabilities, spec_text
from ._common import (Context, basis_text, interpreter_error, pip_install, pip_uninstall, satisfies, shortfall, source_lines,
                      worst)
from .evidence import DSL_BUILD, recorded

__all__ = ["cutedsl_version", "cutedsl_importable", "conflicting", "rule_deviation", "unverified", "requirement_shortfall"]


def cutedsl_version(ctx: Context) -> Finding:
    check, title = "cutedsl.version", "CuTeDSL (nvidia-cutlass-dsl) version"
    error = interpreter_error(ctx, check, title)
    if error:
        return error
    rule = ctx.policy.cutedsl
    wanted = f"{rule.name}{'[' + ','.join(rule.extras) + ']' if rule.extras else ''} {spec_text(rule.specifier)}"
    dist = ctx.interpreter.dist(rule.name)
    install = pip_install(ctx.python, [rule.requirement], requirement_shortfall(ctx, rule, dist.version if dist else None))
    details = source_lines((rule.name, rule.source))
    if dist is None:
        return Finding(check, title, Status.FAIL, "not installed", wanted, rule.why, install, details)
    evidence = recorded(ctx)
    details += (evidence.said,)
    found = f"{rule.name} {dist.version}"
    if satisfies(dist.version, rule.specifier):
        newer = unverified(rule, dist.version)
        details += source_lines((f"{rule.name} verified", rule.verified_source)) if newer else ()
        return Finding(check, title, Status.WARN if newer else Status.PASS, found + newer, wanted, rule.why, None,
                       details, evidence)
    status, said = rule_deviation(ctx, rule, dist.version)
    return Finding(check, title, status, f"{found}: {said}", wanted, rule.why,
                   _case_remedy(ctx, rule, status, install, dist.version), details, evidence)


def unverified(rule: PackageRule, version: str) -> str:
    """What to add to a version the requirement admits but no recorded run had (newer than the rule's `verified`):
    judged by the rule, marked unverified, as a newer torch is. '' where it was verified (or no range is given)."""
    if not rule.verified or satisfies(version, rule.verified):
        return ""
    return (f": within {spec_text(rule.specifier) or 'any version'}, but outside the versions real runs had "
            f"({spec_text(rule.verified)}): judged by this profile, unverified")


def _case_remedy(ctx: Context, rule: PackageRule, status: Status, install: Remedy, version: str) -> Remedy:
    """The install remedy, told for the user's case: necessary where the requirement is runtime, a choice where it
    is only the recipe's (and what works instead)."""
    if rule.basis_on(ctx.capabilities, version) == RUNTIME or (status == Status.FAIL and not ctx.strict):
        return install
    keep = f" Or keep it: {rule.recipe_note}" if rule.recipe_note else ""
    return replace(install, text=f"To match the published recipe: {install.text[0].lower()}{install.text[1:]}{keep}")


def rule_deviation(ctx: Context, rule: PackageRule, version: str) -> tuple[Status, str]:
    """A requirement's installed version outside its specifier: how bad, and which case the user is in."""
    if rule.basis == RUNTIME:
        return Status.FAIL, f"outside {spec_text(rule.specifier)} ({basis_text(RUNTIME, ctx.strict)})"
    if rule.runtime and not satisfies(version, rule.runtime):
        return Status.FAIL, f"outside {spec_text(rule.runtime)}, which is needed everywhere ({basis_text(RUNTIME, ctx.strict)})"
    beside = runtime_floor_broken(ctx, rule, version)
    if beside is not None:
        return Status.FAIL, beside
    shown = ", ".join(f"{c[0]}.{c[1]}" for c in ctx.capabilities)
    there = spec_text(rule.runtime_on_version) if rule.runtime_on_version is not None else ""
    if rule.basis_on(ctx.capabilities, version) == RUNTIME:
        return Status.FAIL, (f"outside {there or spec_text(rule.specifier)}, and on compute capability {shown} "
                             f"({spec_text(rule.runtime_on)}) that is a runtime requirement: the backend breaks without it")
    where = f"on compute capability {shown}" if shown else "with no GPU seen here"
    if rule.runtime_on and there:
        bound = f" on compute capability {spec_text(rule.runtime_on)} it needs {there} (runtime);"
    else:
        bound = f" it is a runtime requirement on compute capability {spec_text(rule.runtime_on)};" if rule.runtime_on else ""
    note = f" {rule.recipe_note}" if rule.recipe_note else ""
    return ctx.deviation(RECIPE), (f"outside the recipe's {spec_text(rule.specifier)} ({basis_text(RECIPE, ctx.strict)});"
                                   f"{bound} {where} it is recipe.{note}")


def broken_floor(ctx: Context, rule: PackageRule, version: str):
    """The rule's floor that holds beside another installed distribution and that `version` does not meet, with that
    distribution: (beside, other); None where every such floor is met."""
    for beside in rule.runtime_beside:
        other = ctx.interpreter.dist(beside.when.name)
        met = other is not None and satisfies(other.version, beside.when.specifier)
        if met and not satisfies(version, beside.version):
            return beside, other
    return None


def runtime_floor_broken(ctx: Context, rule: PackageRule, version: str) -> Optional[str]:
    """What breaks, where a floor that holds beside another installed distribution is not met; None where none is."""
    broken = broken_floor(ctx, rule, version)
    if broken is None:
        return None
    beside, other = broken
    return (f"beside {other.name} {other.version} ({beside.when.specifier}) it needs "
            f"{spec_text(beside.version)} ({basis_text(RUNTIME, ctx.strict)}): either "
            f"{rule.name}{beside.version}, or the profile's {rule.requirement} with what the profile pins "
            "beside it")


def requirement_shortfall(ctx: Context, rule: PackageRule, version: Optional[str]) -> str:
    """Why a rule's package is in a plan: missing, or too old or too new for the rule's range, or for a floor that
    holds beside another installed distribution (`shortfall`'s words)."""
    broken = broken_floor(ctx, rule, version) if version is not None and satisfies(version, rule.specifier) else None
    if broken is not None:
        beside, other = broken
        return shortfall(rule.name, version, beside.version) + f" beside {other.name} {other.version}"
    return shortfall(rule.name, version, rule.specifier)


def conflicting(policy: Policy, interpreter: Interpreter) -> tuple[tuple[Distribution, Conflict], ...]:
    """Installed distributions the policy forbids, with the rule; a split package the installed DSL needs is not stale.

    A rule applies only to installed versions in its `version`, beside a torch built for a CUDA in its `torch_cuda`,
    and not when its `unless` distribution is installed too."""
    needed = _required_by(interpreter, policy.cutedsl.name)
    torch_cuda = interpreter.torch.cuda if interpreter.torch else None

    def applies(conflict: Conflict, dist: Distribution) -> bool:
        if not conflict.matches(dist.name) or (conflict.is_prefix and dist.name in needed):
            return False
        if conflict.version and not satisfies(dist.version, conflict.version):
            return False
        if conflict.torch_cuda is not None and not satisfies(torch_cuda, conflict.torch_cuda):
            return False
        return not (conflict.unless and interpreter.dist(conflict.unless))

    found = []
    for dist in interpreter.distributions:
        rule = next((c for c in policy.conflicts if applies(c, dist)), None)
        if rule is not None:
            found.append((dist, rule))
    return tuple(found)


def _required_by(interpreter: Interpreter, name: str) -> set[str]:
    """The distributions a distribution names in its requirements (its extras' too: [cu13] names -libs-cu13), followed
    through those installed (the DSL's meta package needs -libs-base, which needs -libs-core from 4.6): none of them
    is a stale split package."""
    needed: set[str] = set()
    todo = [name]
    while todo:
        dist = interpreter.dist(todo.pop())
        for text in dist.requires if dist is not None else ():
            try:
                requirement = Requirement(text)
            except InvalidRequirement:
                continue
            key = canonical_name(requirement.name)
            if key not in needed:
                needed.add(key)
                todo.append(key)
    return needed


def _conflict_remedy(python: str, conflicts, fallback: Optional[Remedy]) -> Remedy:
    """Remove what a rule forbids (a rule with `unless` is met by installing what it names instead), then install
    each rule's `instead`, or else the fallback."""
    removes = tuple(dict.fromkeys(d.name for d, c in conflicts if not c.unless))
    installs = list(dict.fromkeys(c.instead for _, c in conflicts if c.instead))
    then = pip_install(python, installs, "what the conflicting packages stood for") if installs else fallback
    if not removes:
        return then
    return pip_uninstall(python, removes, "conflicts with the profile", then=then)


def _inside(path: str, folder: str) -> bool:
    path, folder = os.path.normpath(path), os.path.normpath(folder)
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _owner(interpreter: Interpreter, origin: str) -> Optional[Distribution]:
    """The distribution whose location holds a module, by the longest matching location (a best guess)."""
    candidates = [d for d in interpreter.distributions if _inside(origin, d.location)]
    return max(candidates, key=lambda d: len(d.location), default=None)


def cutedsl_importable(ctx: Context) -> Finding:
    """The verdict, with every .pth import line of the target in its details: each runs at Python's start and may
    change what `import cutlass` finds, and envcheck's probe read it without running it; the sources of the conflict
    rules that applied, and the recorded runs of this combination with the DSL build it loads."""
    finding = _importable(ctx)
    interpreter = ctx.interpreter
    if interpreter is None:
        return finding
    applied = conflicting(ctx.policy, interpreter)
    details = source_lines(*((c.match, c.source) for _, c in applied))
    evidence = recorded(ctx, DSL_BUILD) if interpreter.dist(ctx.policy.cutedsl.name) else None
    details += (evidence.said,) if evidence else ()
    details += tuple(_unrun(p) for p in interpreter.pth_imports)  # last: the lines as the probe read them
    return replace(finding, details=finding.details + details, evidence=evidence)


def _basis_said(ctx: Context, conflict: Conflict) -> str:
    """How a recipe-basis conflict rule stands on the GPUs judged for."""
    if conflict.basis == RUNTIME:
        return ""
    shown = ", ".join(f"{c[0]}.{c[1]}" for c in ctx.capabilities)
    if on_capabilities(conflict.runtime_on, ctx.capabilities):
        return f" On compute capability {shown} it breaks ({basis_text(RUNTIME, ctx.strict)})."
    where = f"on compute capability {shown}" if shown else "with no GPU known"
    return (f" ({basis_text(RECIPE, ctx.strict)}: {where}; it breaks on compute capability "
            f"{spec_text(conflict.runtime_on)})" if conflict.runtime_on else f" ({basis_text(RECIPE, ctx.strict)})")


def _no_flavour(ctx: Context, rule: PackageRule, dsl: Distribution) -> Optional[Finding]:
    """The failure of a DSL installed without any of the CUDA flavours its version needs (only -libs-base and
    -libs-core of DSL >= 4.6): `import cutlass` raises No CTK flavor installed, which torch does not catch."""
    flavours = rule.flavours_for(dsl.version)
    if not flavours or any(ctx.interpreter.dist(name) for name in flavours):
        return None
    major = (ctx.interpreter.torch.cuda or "").split(".")[0] if ctx.interpreter.torch else ""
    extra = next((e for e in rule.extras), "") or (f"cu{major}" if any(n.endswith(f"-cu{major}") for n in flavours)
                                                  else flavours[-1].rsplit("-", 1)[-1])
    requirement = f"{rule.name}[{extra}]=={dsl.version}"
    return Finding(
        "cutedsl.importable", "`import cutlass` reaches CuTeDSL", Status.FAIL,
        f"{rule.name} {dsl.version} is installed without a CUDA flavour (none of {', '.join(flavours)}): "
        f"`import {rule.module}` raises RuntimeError: No CTK flavor installed, and torch does not catch it",
        f"`import {rule.module}` loads {rule.name}'s package, with one of {', '.join(flavours)}",
        "From DSL 4.6 the compiler of each CUDA major ships in its own package (-libs-cu12, -libs-cu13); -libs-base "
        "and -libs-core alone hold none, so the DSL cannot load.",
        pip_install(ctx.python, [requirement], f"the DSL's {extra} flavour, of its own version"),
    )


def _unrun(pth: PthImport) -> str:
    line = pth.line if len(pth.line) <= 240 else f"{pth.line[:240]}..."
    added = f" (read as data: it puts {', '.join(pth.added)} on the path)" if pth.added else ""
    return f"not run by envcheck: {pth.file}: {line}{added}"


def _importable(ctx: Context) -> Finding:
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
    conflict_text = "; ".join(f"{d.name} {d.version} is installed: {c.why}{_basis_said(ctx, c)}" for d, c in conflicts)

    def status_of(conflict: Conflict) -> Status:
        return conflict.status_on(ctx.capabilities, ctx.strict)

    if dsl is None:
        if conflicts:
            return Finding(check, title, worst([status_of(c) for _, c in conflicts]),
                           f"{rule.name} is not installed; {conflict_text}", wanted, why,
                           _conflict_remedy(python, conflicts,
                                            pip_install(python, [rule.requirement], "CuTeDSL is needed")))
        return Finding(check, title, Status.SKIP, f"{rule.name} is not installed (see cutedsl.version)", wanted, why)

    # Where the module must load from: the rule's folders for this version, else the plain layout (<site>/<module>).
    shipped_dirs = [os.path.join(dsl.location, d) for d in rule.dirs_for(dsl.version) or (module_name.split(".")[0],)]
    shipped = " or ".join(shipped_dirs) or dsl.location
    from_dsl = origin is not None and any(_inside(origin, d) for d in shipped_dirs)
    stale = [d for d, c in conflicts if c.is_prefix]
    if conflicts:
        if from_dsl and not stale:
            # `import cutlass` still reaches the DSL (nvidia-cutlass 4.x installs cutlass_cppgen, not `cutlass`):
            # a rule that only forbids a package is a warning here; one that says what to install instead is not.
            status = worst([status_of(c) if c.instead else Status.WARN for _, c in conflicts])
            found = f"`import {module_name}` loads {origin}; but {conflict_text}"
            restore = None
        else:
            status = worst([status_of(c) for _, c in conflicts])
            found = conflict_text + (f"; `import {module_name}` loads {origin}" if origin else f"; `import {module_name}` fails")
            restore = pip_install(python, [rule.requirement], "restore files the conflicting packages overwrote", reinstall=True)
        return Finding(check, title, status, found, wanted, why, _conflict_remedy(python, conflicts, restore))
    if from_dsl:
        missing = _no_flavour(ctx, rule, dsl)
        if missing is not None:
            return missing
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
