"""nvgemm.deps and packages.consistency: the backend's companion packages, and the environment as `pip check` sees it."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Optional

from packaging.markers import InvalidMarker, UndefinedEnvironmentName
from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet

from ..profile import RUNTIME, Policy, spec_text
from ..model import Distribution, Finding, Interpreter, Remedy, Status, canonical_name
from ._common import Context, interpreter_error, pip_command, pip_install, satisfies, source_lines, worst
from .cutedsl import requirement_shortfall, rule_deviation, runtime_floor_broken, unverified
from .evidence import recorded

__all__ = ["nvgemm_deps", "packages_consistency", "broken_requirements", "cuda_majors"]


def nvgemm_deps(ctx: Context) -> Finding:
    check, title = "nvgemm.deps", f"{ctx.policy.backend} companion packages"
    error = interpreter_error(ctx, check, title)
    if error:
        return error
    interpreter = ctx.interpreter
    results, missing, whys = [], [], []
    for rule in ctx.policy.packages:
        dist = interpreter.dist(rule.name)
        if dist is None:
            if rule.level == "optional":
                results.append((Status.PASS, f"{rule.name} not installed (optional: nothing on this stack needs it)"))
                continue
            bad = Status.FAIL if rule.level == "required" else Status.WARN
            results.append((bad, f"{rule.name} missing ({rule.level})"))
            missing.append(rule.requirement)
            whys.append(requirement_shortfall(ctx, rule, None))
        elif (rule.specifier and not satisfies(dist.version, rule.specifier)
              or runtime_floor_broken(ctx, rule, dist.version)):
            status, said = rule_deviation(ctx, rule, dist.version)
            results.append((status if rule.level == "required" else Status.WARN, f"{rule.name} {dist.version}: {said}"))
            missing.append(rule.requirement)
            whys.append(requirement_shortfall(ctx, rule, dist.version))
        else:
            newer = unverified(rule, dist.version) if rule.level != "optional" else ""
            results.append((Status.WARN if newer else Status.PASS, f"{rule.name} {dist.version}{newer}"))
    status = worst([s for s, _ in results])
    wanted = ", ".join(f"{r.name}" + (f" {spec_text(r.specifier)}" if r.specifier else "")
                       + ("" if r.level == "required" else f" ({r.level})") for r in ctx.policy.packages)
    found = "; ".join(text for _, text in results)
    remedy = None
    if missing:  # one step per package, each with its own why (fix puts recommended ones in a transaction apart)
        remedy = pip_install(ctx.python, missing, "; ".join(whys))
        remedy = replace(remedy, steps=tuple(replace(remedy.steps[0], args=(requirement,), why=why)
                                             for requirement, why in zip(missing, whys)))
    # the combination of the recorded runs: the packages whose version is runtime somewhere count too
    versioned = tuple(r.name for r in ctx.policy.packages if (r.basis == RUNTIME and r.specifier) or r.runtime_beside)
    evidence = recorded(ctx, *versioned)
    details = source_lines(*((r.name, r.source) for r in ctx.policy.packages),
                           *((f"{r.name} verified", r.verified_source) for r in ctx.policy.packages)) + (evidence.said,)
    return Finding(
        check, title, status, found, wanted,
        " ".join(f"{r.name}: {r.why}" for r in ctx.policy.packages),
        remedy, details, evidence,
    )


def _requirement(text: str) -> Optional[Requirement]:
    try:
        return Requirement(text)
    except InvalidRequirement:
        return None


# `pip check` judges requirements with no extra asked for: one whose marker only holds for an extra
# (`...; extra == "test"`, and-ed with anything) can be passed over unparsed; most lines of a large environment are.
_EXTRA_ONLY = re.compile(r";[^;]*\bextra\s*==")


def _for_an_extra_only(text: str) -> bool:
    return bool(_EXTRA_ONLY.search(text)) and " or " not in text.partition(";")[2]


def broken_requirements(interpreter: Interpreter) -> tuple[tuple[Distribution, Requirement, Optional[Distribution]], ...]:
    """Each (distribution, requirement, what is installed for it) that is unmet, the way `pip check` finds them."""
    environment = dict(interpreter.markers)
    environment["extra"] = ""
    first: dict[str, Distribution] = {}
    for dist in interpreter.distributions:
        first.setdefault(dist.name, dist)
    broken = []
    for dist in first.values():
        for text in dist.requires:
            if _for_an_extra_only(text):
                continue
            requirement = _requirement(text)
            if requirement is None:
                continue
            try:
                if requirement.marker is not None and not requirement.marker.evaluate(environment):
                    continue
            except (InvalidMarker, UndefinedEnvironmentName):
                continue
            installed = first.get(canonical_name(requirement.name))
            if installed is None or not satisfies(installed.version, requirement.specifier):
                broken.append((dist, requirement, installed))
    return tuple(broken)


# CUDA component wheels name their CUDA major with a -cuNN suffix; from CUDA 13 on most have no suffix, and only
# some of those carry the CUDA major as their own version's major (cuda-runtime 13.0.96, cublas 13.1.0.3). Others
# keep library versions of their own (cufft 12.0 and curand 10.4 are CUDA 13 libraries): they tell nothing.
_SUFFIX = re.compile(r"-cu(\d+)$")
_UNSUFFIXED = re.compile(r"^nvidia-(cuda-[a-z0-9]+|cublas|nvjitlink|nvtx)$")


def cuda_majors(interpreter: Interpreter,
                exempt: tuple[tuple[str, SpecifierSet], ...] = ()) -> dict[int, tuple[str, ...]]:
    """CUDA major version -> the nvidia-* component wheels built for it (names starting with an `exempt` prefix, in
    its versions, carry several CUDA flavours and pick one at run time: they are not counted)."""
    majors: dict[int, list[str]] = {}
    for dist in interpreter.distributions:
        if any(dist.name.startswith(prefix) and satisfies(dist.version, versions) for prefix, versions in exempt):
            continue
        suffix = _SUFFIX.search(dist.name)
        if suffix and dist.name.startswith("nvidia-"):
            major = int(suffix[1])
        elif _UNSUFFIXED.match(dist.name) and dist.version.split(".")[0].isdigit():
            major = int(dist.version.split(".")[0])
        else:
            continue
        majors.setdefault(major, []).append(f"{dist.name} {dist.version}")
    return {major: tuple(names) for major, names in sorted(majors.items())}


def _stack_distributions(policy: Policy) -> frozenset[str]:
    """The distributions the profile itself names (the DSL and its CUDA flavours, the kernel library, [[packages]]):
    a requirement one of them lacks is the stack's to install; one torch or another package lacks is theirs."""
    names = [policy.cutedsl.name, *(n for _, flavour in policy.cutedsl.flavours for n in flavour),
             *(r.name for r in policy.packages)]
    if policy.cutlass is not None:
        names.append(policy.cutlass.distribution)
    return frozenset(canonical_name(n) for n in names)


def _unmarked(requirement: Requirement) -> str:
    """The requirement as a command line names it: its marker held here (that is why it is lacking), so left out."""
    return f"{requirement.name}{'[' + ','.join(sorted(requirement.extras)) + ']' if requirement.extras else ''}{requirement.specifier}"


def _theirs(python: str, lacking: dict[str, list[str]], backend: str) -> Remedy:
    """What to do where torch (or another package the profile does not name) lacks its own requirements: install
    them with pip, or reinstall it with its dependencies; `envcheck fix` installs only the stack's packages."""
    who = " and ".join(lacking)
    requirements = list(dict.fromkeys(r for needed in lacking.values() for r in needed))
    return Remedy(
        text=f"{who} lack{'s' if len(lacking) == 1 else ''} requirements of {'its' if len(lacking) == 1 else 'their'} "
             f"own (not the {backend} stack's, so `envcheck fix` leaves them to you): install them, or reinstall "
             f"{'it' if len(lacking) == 1 else 'them'} with pip, which brings them.",
        commands=(pip_command(python, "install", *requirements),),
    )


def packages_consistency(ctx: Context) -> Finding:
    check, title = "packages.consistency", "Installed packages agree"
    error = interpreter_error(ctx, check, title)
    if error:
        return error
    interpreter, policy, python = ctx.interpreter, ctx.policy, ctx.python
    wanted = "every requirement met (as `pip check` sees it), one CUDA major among the nvidia-* wheels"
    why = "A broken requirement or two CUDA majors side by side load mismatched libraries at run time."
    problems: list[tuple[Status, str]] = []
    installs: list[tuple[str, str]] = []  # (requirement, why) the stack's own packages lack

    majors = cuda_majors(interpreter, policy.mixed_cuda_exempt)
    if len(majors) > 1:
        listing = "; ".join(f"CUDA {m}: {', '.join(names)}" for m, names in majors.items())
        problems.append((Status.FAIL, f"nvidia-* wheels of {len(majors)} CUDA majors side by side ({listing})"))

    stand_ins = {s.missing: s for s in policy.stand_ins}
    own = _stack_distributions(policy)
    theirs: dict[str, list[str]] = {}  # what other distributions (torch) lack: theirs to install, not the plan's
    for dist, requirement, installed in broken_requirements(interpreter):
        name = canonical_name(requirement.name)
        if installed is None:
            stand_in = stand_ins.get(name)
            text = f"{dist.name} {dist.version} requires {requirement}, which is not installed"
            if stand_in and interpreter.dist(stand_in.present):
                # Never offer the missing one: installing it (the cuda-python meta package) would move what
                # stands in for it (cuda-bindings, pinned by cuda-core and torch).
                present = interpreter.dist(stand_in.present)
                text += f"; {present.name} {present.version} is, and that is enough to run ({stand_in.why}): nothing to install"
            elif dist.name in own:
                installs.append((str(requirement), text))
            else:
                theirs.setdefault(f"{dist.name} {dist.version}", []).append(_unmarked(requirement))
            problems.append((Status.WARN, text))
        else:
            problems.append((Status.WARN, f"{dist.name} {dist.version} requires {requirement}, but {installed.version} is installed"))

    duplicates = sorted({d.name for d in interpreter.distributions if len(interpreter.installed(d.name)) > 1})
    for name in duplicates:
        copies = interpreter.installed(name)
        problems.append((Status.WARN, f"{name} is installed {len(copies)} times: " + ", ".join(f"{c.version} in {c.location}" for c in copies) + f" (Python uses {copies[0].location})"))

    if not problems:
        return Finding(check, title, Status.PASS, f"{len({d.name for d in interpreter.distributions})} distributions, no broken requirements", wanted, why)
    status = worst([s for s, _ in problems])
    remedy: Optional[Remedy] = None
    if installs:  # the stack's own packages lack a requirement: fix installs it
        remedy = pip_install(python, [r for r, _ in installs], "; ".join(why for _, why in installs))
    elif theirs:
        remedy = _theirs(python, theirs, policy.backend)
    elif len(majors) > 1:
        remedy = Remedy("Keep one CUDA major: uninstall the nvidia-*-cu12 wheels, or build a fresh virtual environment.",
                        commands=(pip_command(python, "check"),))
    return Finding(check, title, status, "; ".join(text for _, text in problems), wanted, why, remedy,
                   tuple(text for _, text in problems))
