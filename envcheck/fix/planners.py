"""planners: one per kind of step, in the plan's order, so that the environment stays consistent after every step:

  1. uninstall what must go (stale nvidia-cutlass-dsl-libs-*, a mistaken nvidia-cutlass), before anything is
     installed over it
  2. torch, from its CUDA index, when the torch checks fail
  3. the policy's pins, in one pip transaction, with torch in it (so pip keeps torch's own pins) and a constraints
     file holding every policy pin
  4. recommended packages (and what a warning asks for: a requirement the stack's own packages lack), in a
     transaction of their own that may fail without stopping the plan
  5. the CUTLASS fetch, then the editable install of cutlass_api from it, under the same constraints
  6. the CUDA toolkit in a prefix of its own, only when asked for (--toolkit); otherwise it is offered

Each planner reads the Ground (what the findings ask for, sorted once, and what every pip step shares) and returns
its Part; plan.make_plan only joins them. Pure: nothing here runs or writes anything.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path
from typing import Iterable, Optional, Sequence

from packaging.requirements import Requirement
from packaging.version import InvalidVersion, Version

from .. import shell
from ..gitsafe import git_commands
from ..judge.cutedsl import conflicting
from ..model import Distribution, Facts, Finding, Interpreter, Status, Step, canonical_name
from ..profile import Policy
from .pip import install_argv, merge_requirements, parse_requirement, uninstall_argv
from .steps import PlannedStep, PlanOptions

__all__ = ["TOOLKIT_HOME", "Part", "plan_parts", "torch_range", "never_installed", "constraints_text", "installed_pin",
           "toolkit_env_text"]

# Where the nvidia-cuda-nvcc wheel of CUDA 13 puts the toolkit, relative to the folder pip installs into.
TOOLKIT_HOME = "nvidia/cu13"


def constraints_text(policy: Policy, interpreter: Interpreter, torch_planned: bool) -> str:
    """The policy's pins as a pip constraints file, with torch held where it is (or where the plan puts it)."""
    lines = ["# Written by `envcheck fix`: the profile's pins, so that no pip step can move them."]
    rules = [policy.cutedsl, *policy.packages]
    for rule in rules:
        if str(rule.specifier):
            lines.append(f"{rule.name}{rule.specifier}")
    held = installed_pin(interpreter.dist("torch"))
    if torch_planned:
        lines.append(str(torch_range(policy)))
    elif held is not None:
        lines.append(str(held))
    return "\n".join(lines) + "\n"


def installed_pin(dist: Optional[Distribution]) -> Optional[Requirement]:
    """`name==version` of an installed distribution, its version parsed; None when there is none or its metadata's
    version is not a version. The target's files are untrusted: a folded `Version:` header can hold a line break,
    which a constraints file would read as a line of its own (`--extra-index-url ...`)."""
    if dist is None:
        return None
    try:
        return Requirement(f"{dist.name}=={Version(dist.version)}")
    except InvalidVersion:
        return None


def toolkit_env_text(prefix: str) -> str:
    home = os.path.join(prefix, TOOLKIT_HOME)
    return (
        "# Written by `envcheck fix --toolkit`: source it to use this CUDA toolkit (`. THIS_FILE`).\n"
        f"export CUDA_HOME={shell.word(home)}\n"
        f'export PATH={shell.word(os.path.join(home, "bin"))}:"$PATH"\n'
    )


def _build_isolation(interpreter: Interpreter) -> bool:
    """Build cutlass_api in pip's isolated environment only when the target cannot build it itself.

    Building with the target's own setuptools needs nothing from the network, which matters offline.
    """
    setuptools = interpreter.dist("setuptools")
    try:
        version = Version(setuptools.version) if setuptools else None
    except InvalidVersion:
        version = None
    if version is None or version < Version("64"):
        return True
    return version < Version("70.1") and interpreter.dist("wheel") is None


@dataclass(frozen=True)
class Part:
    """What one planner adds: steps to run, steps offered behind a flag, and reasons nothing may run."""

    steps: tuple[PlannedStep, ...] = ()
    offered: tuple[PlannedStep, ...] = ()
    blocked: tuple[str, ...] = ()


@dataclass(frozen=True)
class Installs:
    """The pip-install requests of the remedies, by the transaction they go into."""

    torch: tuple[Requirement, ...] = ()
    torch_index: str = ""
    torch_reinstall: bool = False
    torch_why: tuple[str, ...] = ()
    pins: tuple[Requirement, ...] = ()  # required: one transaction
    pins_why: tuple[str, ...] = ()
    renew: tuple[Requirement, ...] = ()  # files to put back (--force-reinstall --no-deps, after the pins)
    extra: tuple[Requirement, ...] = ()  # recommended: a transaction that may fail
    extra_why: tuple[str, ...] = ()


@dataclass(frozen=True)
class Ground:
    """Everything the planners share, derived once from the findings, the facts, the policy and the options."""

    policy: Policy
    options: PlanOptions
    facts: Facts
    interpreter: Interpreter
    required: tuple[tuple[Finding, Step], ...]  # remedy steps of the failing findings
    optional: tuple[tuple[Finding, Step], ...]  # remedy steps of the warnings
    installs: Installs

    @property
    def wanted(self) -> tuple[tuple[Finding, Step], ...]:
        return self.required + self.optional

    def why(self, kind: str, default: str) -> str:
        return next((s.why for _, s in self.wanted if s.kind == kind and s.why), default)

    @cached_property
    def torch_hold(self) -> tuple[Requirement, ...]:
        """torch rides along in every transaction, so pip resolves its pins too and cannot replace it."""
        held = installed_pin(self.interpreter.dist("torch"))
        if self.installs.torch:
            return (torch_range(self.policy),)
        if held is not None and not self.options.no_deps:
            return (held,)
        return ()

    @cached_property
    def constraints(self) -> tuple[tuple[str, str], ...]:
        text = constraints_text(self.policy, self.interpreter, bool(self.installs.torch))
        return ((self.options.constraints_file, text),)


def torch_range(policy: Policy) -> Requirement:
    """The torch fix may install: the profile's requirement, never outside the torch versions the profile covers."""
    specifier = policy.torch_requirement.specifier & policy.torch
    return Requirement(f"torch{specifier}")


def never_installed(policy: Policy, name: str) -> bool:
    """A package the profile never installs, though a remedy may ask for it: one it conflicts with at every version.

    A conflict with a version range (a stale DSL) names a package the profile installs at another version."""
    return any(c.matches(name) and not c.version for c in policy.conflicts)


def _sort_installs(
    wanted: Sequence[tuple[Finding, Step]], required: Sequence[tuple[Finding, Step]], policy: Policy,
    interpreter: Interpreter, locked: Sequence[str] = (),
) -> Installs:
    torch: list[Requirement] = []
    torch_index, torch_reinstall, torch_why = "", False, []
    pins, pins_why, extra, extra_why, renew = [], [], [], [], []
    recommended = {rule.name for rule in policy.packages if rule.level != "required"}
    for finding, step in wanted:
        if step.kind != "pip-install":
            continue
        is_required = (finding, step) in required
        for text in step.args:
            requirement = parse_requirement(text, f"the remedy of {finding.id}")
            key = canonical_name(requirement.name)
            if never_installed(policy, key):
                continue  # asked for by what the plan replaces (a newer DSL's split libs)
            if key == "torch":
                torch.append(requirement)
                torch_index = torch_index or step.index_url
                torch_reinstall = torch_reinstall or step.reinstall
                torch_why.append(step.why or finding.title)
            elif is_required and key not in recommended:
                pins.append(requirement)
                pins_why.append(step.why or finding.title)
                if step.reinstall:
                    renew.append(requirement)
            else:
                extra.append(requirement)
                extra_why.append(step.why or finding.title)
    for text in locked:  # a bundle's locked stack: every package at its locked version
        requirement = parse_requirement(text, "the bundle's lock")
        have = interpreter.dist(requirement.name)
        if have is None or not requirement.specifier.contains(have.version, prereleases=True):
            pins.append(requirement)
            pins_why.append("the bundle's locked version")
    required_names = {canonical_name(r.name) for r in pins}
    extra = [r for r in extra if canonical_name(r.name) not in required_names]
    if locked:  # from a bundle, a recommended package it does not carry cannot be had: not planned
        carried = {canonical_name(parse_requirement(text, "the bundle's lock").name) for text in locked}
        extra = [r for r in extra if canonical_name(r.name) in carried]
    if torch:
        torch.append(torch_range(policy))  # whatever a remedy asked, never a torch outside the profile's range
    return Installs(tuple(torch), torch_index, torch_reinstall, tuple(torch_why), tuple(pins), tuple(pins_why),
                    tuple(renew), tuple(extra), tuple(extra_why))


def _removals(g: Ground) -> Part:
    """1. uninstall what must go, only what is there, before anything is installed over it. What the profile
    removes only with consent (a conflict with `consent = true`) is offered until the user agrees (--remove NAME)."""
    interpreter, policy = g.interpreter, g.policy
    whys: dict[str, str] = {}
    for finding, step in g.wanted:
        if step.kind != "pip-uninstall":
            continue
        for name in step.args:
            key = canonical_name(name)
            if interpreter.installed(key):
                whys.setdefault(key, step.why or finding.title)
    # Installing the policy's CuTeDSL turns every conflicting distribution still there into a stale one (the
    # split nvidia-cutlass-dsl-libs-* packages of another DSL): what conflicts once the installed DSL is gone goes
    # first, before the DSL is installed.
    if any(canonical_name(r.name) == policy.cutedsl.name for r in g.installs.pins):
        without_dsl = replace(interpreter, distributions=tuple(
            d for d in interpreter.distributions if d.name != policy.cutedsl.name))
        for dist, rule in conflicting(policy, interpreter) + conflicting(policy, without_dsl):
            if not rule.unless:  # a rule with `unless` is met by installing what it names (the judge's remedy does)
                whys.setdefault(dist.name, rule.why)
    consent = {name for name in whys if any(c.consent and c.matches(name) for c in policy.conflicts)}
    agreed = {canonical_name(n) for n in g.options.remove}
    now = [name for name in whys if name not in consent or name in agreed]
    asked = [name for name in whys if name in consent and name not in agreed]

    def step(names: list[str], what: str, offer: str = "") -> PlannedStep:
        return PlannedStep("pip-uninstall", what, "; ".join(dict.fromkeys(whys[n] for n in names)),
                           (uninstall_argv(g.options.pip_command, names, g.options.sources),), offer=offer)

    steps = (step(now, f"uninstall {', '.join(now)}"),) if now else ()
    offered = tuple(step([n], f"uninstall {n}", offer=f"--remove {n}") for n in asked)
    return Part(steps, offered)


def _pip_step(g: Ground, requirements: Sequence[Requirement], whys: Iterable[str], tail: str = "", *,
              verb: str = "install", hold: bool = False, optional: bool = False,
              writes: tuple[tuple[str, str], ...] = (), **install_keywords) -> Part:
    """One pip-install step of the merged requirements, `<verb> <requirements><tail>`; none asked: no step.

    hold: torch rides along in the transaction (Ground.torch_hold). install_keywords go to install_argv."""
    if not requirements:
        return Part()
    merged = merge_requirements(requirements)
    argv = install_argv(g.options.pip_command, (*merged, *g.torch_hold) if hold else merged, sources=g.options.sources,
                        **install_keywords)
    return Part((PlannedStep("pip-install", f"{verb} {', '.join(map(str, merged))}{tail}",
                             "; ".join(dict.fromkeys(whys)), (argv,), optional=optional, writes=writes),))


def _torch(g: Ground) -> Part:
    """2. torch, from its CUDA index, when the torch checks fail: inside the profile's range."""
    installs, index = g.installs, g.installs.torch_index
    return _pip_step(g, installs.torch, installs.torch_why,
                     f" from {index}" if index and not g.options.sources.given else "",
                     step_index_url=index, reinstall=installs.torch_reinstall, no_deps=g.options.no_deps)


def _pins(g: Ground) -> Part:
    """3. the policy's required pins in one pip transaction, with torch in it and every pin as a constraint."""
    return _pip_step(g, g.installs.pins, g.installs.pins_why,
                     " in one transaction" + (", holding torch where it is" if g.torch_hold else ""), hold=True,
                     writes=g.constraints, constraints=g.options.constraints_file, no_deps=g.options.no_deps)


def _renew(g: Ground) -> Part:
    """3b. files of a pinned package that another distribution overwrote or removed, put back."""
    return _pip_step(g, g.installs.renew, ("files of the package were overwritten or removed by another distribution",),
                     " over what other packages left in its place", verb="reinstall", writes=g.constraints,
                     constraints=g.options.constraints_file, reinstall=True, no_deps=True)


def _recommended(g: Ground) -> Part:
    """4. recommended packages, in a transaction of their own that may fail without stopping the plan; called
    recommended only where each is a package the profile recommends (a warning's other requirements are what they
    are, each step's why says which)."""
    recommended = {rule.name for rule in g.policy.packages if rule.level == "recommended"}
    called = "recommended: " if {canonical_name(r.name) for r in g.installs.extra} <= recommended else ""
    return _pip_step(g, g.installs.extra, g.installs.extra_why,
                     f" ({called}a failure here does not stop the plan)", hold=True, optional=True,
                     writes=g.constraints, constraints=g.options.constraints_file, no_deps=g.options.no_deps)


def _cutlass_fetch(g: Ground) -> Part:
    """5. the CUTLASS fetch (shallow, blob-filtered, sparse), never into a dirty checkout."""
    if g.policy.cutlass is None or not any(s.kind == "cutlass-fetch" for _, s in g.wanted):
        return Part()
    source, options, checkout = g.policy.cutlass, g.options, g.facts.checkout
    blocked = ()
    dirty = getattr(checkout, "dirty_files", ()) if _same_path(getattr(checkout, "path", None), options.cutlass_dir) else ()
    if dirty and getattr(checkout, "commit", None) != source.commit:
        blocked = (
            f"the CUTLASS checkout {options.cutlass_dir} has changes that are not committed "
            f"({', '.join(dirty[:3])}{'...' if len(dirty) > 3 else ''}); envcheck does not touch a dirty checkout. "
            "Commit or stash them, or choose another folder with --cutlass-dir, then run `envcheck fix` again.",
        )
    step = PlannedStep(
        "cutlass-fetch",
        f"fetch CUTLASS {source.branch} at {source.commit[:12]} (shallow, blob-filtered, sparse to {source.subdir}) "
        f"into {options.cutlass_dir}",
        g.why("cutlass-fetch", source.why),
        git_commands(options.cutlass_dir, options.cutlass_url, source.branch, source.commit, source.subdir),
        params=(("dest", options.cutlass_dir), ("url", options.cutlass_url), ("branch", source.branch),
                ("commit", source.commit), ("subdir", source.subdir)),
    )
    return Part((step,), blocked=blocked)


def _cutlass_install(g: Ground) -> Part:
    """5b. the editable install of the package from the checkout, under the same constraints."""
    if g.policy.cutlass is None or not any(s.kind == "cutlass-install" for _, s in g.wanted):
        return Part()
    source, options = g.policy.cutlass, g.options
    package = os.path.join(options.cutlass_dir, source.subdir)
    target = f"{package}[{','.join(source.extras)}]" if source.extras else package
    return Part((PlannedStep(
        "cutlass-install",
        f"install {source.distribution} editable from {package}",
        g.why("cutlass-install", source.why),
        (install_argv(options.pip_command, g.torch_hold, sources=options.sources, constraints=options.constraints_file,
                      editable=target, no_deps=options.no_deps, build_isolation=_build_isolation(g.interpreter)),),
        writes=g.constraints, params=(("checkout", options.cutlass_dir),),
    ),))


def _toolkit(g: Ground) -> Part:
    """6. the CUDA toolkit in a prefix of its own: applied with --toolkit, otherwise offered."""
    options = g.options
    wanted = [(f, s) for f, s in g.wanted if s.kind == "toolkit-install"]
    if not wanted or not options.toolkit_prefix:
        return Part()
    finding, step = wanted[0]
    requirement = parse_requirement(step.args[0] if step.args else str(g.policy.toolkit_requirement),
                                    f"the remedy of {finding.id}")
    env_file = os.path.join(options.toolkit_prefix, "env.sh")
    planned = PlannedStep(
        "toolkit-install",
        f"install {requirement} into {options.toolkit_prefix} (outside torch's environment) and write {env_file}",
        step.why or finding.title,
        (install_argv(options.pip_command, (requirement,), sources=options.sources, target=options.toolkit_prefix,
                      upgrade=True),),
        writes_after=((env_file, toolkit_env_text(options.toolkit_prefix)),),
        params=(("prefix", options.toolkit_prefix), ("env_file", env_file)),
        offer="--toolkit",
    )
    return Part((planned,)) if options.toolkit else Part(offered=(planned,))


PLANNERS = (_removals, _torch, _pins, _renew, _recommended, _cutlass_fetch, _cutlass_install, _toolkit)


def plan_parts(findings: Sequence[Finding], facts: Facts, interpreter: Interpreter, policy: Policy,
               options: PlanOptions) -> tuple[Part, ...]:
    """Every planner's Part, in the plan's order: for the remedy steps of the failing findings (required) and of the
    warnings (optional)."""
    required = _remedy_steps(f for f in findings if f.status.is_problem)
    optional = _remedy_steps(f for f in findings if f.status is Status.WARN)
    ground = Ground(policy, options, facts, interpreter, required, optional,
                    _sort_installs(required + optional, required, policy, interpreter, options.locked))
    return tuple(planner(ground) for planner in PLANNERS)


def _remedy_steps(findings: Iterable[Finding]) -> tuple[tuple[Finding, Step], ...]:
    return tuple((f, s) for f in findings if f.remedy is not None for s in f.remedy.steps)


def _same_path(a: Optional[str], b: str) -> bool:
    if not a:
        return False
    return Path(a).expanduser().absolute() == Path(b).expanduser().absolute()
