"""plan: the findings that failed, turned into an ordered, immutable list of steps, each with its exact commands.

Pure: make_plan reads findings, facts and the policy and returns a Plan; it runs nothing and writes nothing. The
order is fixed so that the environment stays consistent after every step:

  1. uninstall what must go (stale nvidia-cutlass-dsl-libs-*, a mistaken nvidia-cutlass), before anything is
     installed over it
  2. torch, from its CUDA index, when the torch checks fail
  3. the policy's pins, in one pip transaction, with torch in it (so pip keeps torch's own pins) and a constraints
     file holding every policy pin
  4. recommended packages, in a transaction of their own that may fail without stopping the plan
  5. the CUTLASS fetch, then the editable install of cutlass_api from it, under the same constraints
  6. the CUDA toolkit in a prefix of its own, only when asked for (--toolkit); otherwise it is offered

What cannot be done from user space (the driver, an interpreter older than the policy's) becomes an Instruction.
"""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Optional, Sequence

from packaging.requirements import Requirement
from packaging.version import InvalidVersion, Version

from ..model import Facts, Finding, Interpreter, Status, Step, canonical_name
from ..policy import Policy
from . import cutlass as cutlass_fetch
from .pip import PipSources, install_argv, merge_requirements, parse_requirement, redact_argv, uninstall_argv

__all__ = ["PlanOptions", "PlannedStep", "Instruction", "Plan", "make_plan", "constraints_text", "toolkit_env_text"]

SCHEMA_VERSION = 1
# Where the nvidia-cuda-nvcc wheel of CUDA 13 puts the toolkit, relative to the folder pip installs into.
TOOLKIT_HOME = "nvidia/cu13"


@dataclass(frozen=True)
class PlanOptions:
    """Everything the plan needs besides findings, facts and policy; paths are absolute."""

    python: str  # the target interpreter
    state_dir: str  # where the constraints file and logs go (written only when the plan is applied)
    cutlass_dir: str
    cutlass_url: str
    pip: tuple[str, ...] = ()  # how pip is run for it (pip.pip_prefix); default: the target's own pip
    sources: PipSources = PipSources()
    no_deps: bool = False
    toolkit: bool = False  # apply the toolkit step instead of only offering it
    toolkit_prefix: str = ""
    interpreters: tuple[tuple[str, str], ...] = ()  # (path, version) of other interpreters found on this machine

    @property
    def pip_command(self) -> tuple[str, ...]:
        return self.pip or (self.python, "-m", "pip")

    @property
    def constraints_file(self) -> str:
        return os.path.join(self.state_dir, "constraints.txt")


@dataclass(frozen=True)
class PlannedStep:
    """One step: what it does, why, and the exact commands (argv lists, no shell).

    kind is a model.Step kind (pip-uninstall, pip-install, cutlass-fetch, cutlass-install, toolkit-install) or one
    of undo's (checkout-restore, remove-path). writes are files written just before the commands run. params carry
    what an in-process step (the fetch) needs; writes_after are written once the commands succeeded. An optional step may fail without stopping the plan.
    """

    kind: str
    what: str
    why: str
    commands: tuple[tuple[str, ...], ...] = ()
    optional: bool = False
    writes: tuple[tuple[str, str], ...] = ()
    params: tuple[tuple[str, str], ...] = ()
    writes_after: tuple[tuple[str, str], ...] = ()  # files written once the commands succeeded

    def param(self, name: str, default: str = "") -> str:
        return dict(self.params).get(name, default)

    def to_json(self) -> dict:
        return {
            "kind": self.kind,
            "what": self.what,
            "why": self.why,
            "commands": [list(redact_argv(c)) for c in self.commands],
            "command": " ".join(shlex.quote(a) for a in redact_argv(self.commands[0])) if self.commands else "",
            "optional": self.optional,
            "writes": [path for path, _ in self.writes + self.writes_after],
        }


@dataclass(frozen=True)
class Instruction:
    """Something a person must do: envcheck never tries it."""

    check_id: str
    title: str
    text: str
    commands: tuple[tuple[str, ...], ...] = ()

    def to_json(self) -> dict:
        return {"check": self.check_id, "title": self.title, "text": self.text, "commands": [list(c) for c in self.commands]}


@dataclass(frozen=True)
class Plan:
    target: str
    steps: tuple[PlannedStep, ...] = ()
    manual: tuple[Instruction, ...] = ()
    offered: tuple[PlannedStep, ...] = ()  # steps the user may ask for (the toolkit)
    blocked: tuple[str, ...] = ()  # why nothing will run; the steps are shown for information only
    failing: tuple[str, ...] = field(default=(), compare=False)  # ids of the findings that failed

    @property
    def runnable(self) -> bool:
        return bool(self.steps) and not self.blocked

    def to_json(self) -> dict:
        return {
            "schema_version": SCHEMA_VERSION,
            "target": self.target,
            "blocked": list(self.blocked),
            "steps": [s.to_json() for s in self.steps],
            "offered": [s.to_json() for s in self.offered],
            "manual": [m.to_json() for m in self.manual],
            "failing": list(self.failing),
        }


# --------------------------------------------------------------------------------------------------------------


def _remedy_steps(findings: Iterable[Finding]) -> list[tuple[Finding, Step]]:
    return [(f, s) for f in findings if f.remedy is not None for s in f.remedy.steps]


def constraints_text(policy: Policy, interpreter: Interpreter, torch_planned: bool) -> str:
    """The policy's pins as a pip constraints file, with torch held where it is (or where the plan puts it)."""
    lines = ["# Written by `envcheck fix`: the policy's pins, so that no pip step can move them."]
    rules = [policy.cutedsl, *policy.packages]
    for rule in rules:
        if str(rule.specifier):
            lines.append(f"{rule.name}{rule.specifier}")
    torch = interpreter.dist("torch")
    if torch_planned:
        lines.append(f"torch{policy.torch_requirement.specifier}")
    elif torch is not None:
        lines.append(f"torch=={torch.version}")
    return "\n".join(lines) + "\n"


def toolkit_env_text(prefix: str) -> str:
    home = os.path.join(prefix, TOOLKIT_HOME)
    return (
        "# Written by `envcheck fix --toolkit`: source it to use this CUDA toolkit (`. THIS_FILE`).\n"
        f"export CUDA_HOME={shlex.quote(home)}\n"
        f'export PATH={shlex.quote(os.path.join(home, "bin"))}:"$PATH"\n'
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


def _python_instruction(finding: Finding, policy: Policy, options: PlanOptions) -> Instruction:
    good = [(path, v) for path, v in options.interpreters if _version_ok(v, policy)]
    venv = os.path.join(os.path.expanduser("~"), ".venvs", "nvgemm")
    new_python = os.path.join(venv, "bin", "python")
    if good:
        path, version = good[0]
        text = (
            f"This interpreter cannot run cutlass_api (it needs Python {policy.python}); envcheck does not replace an "
            f"interpreter. Python {version} is on this machine at {path}: make a virtual environment from it, put "
            f"torch in it, and point envcheck at it."
        )
        commands = (
            (path, "-m", "venv", venv),
            (new_python, "-m", "pip", "install", str(policy.torch_requirement), "--index-url", policy.torch_index_url)
            if policy.torch_index_url
            else (new_python, "-m", "pip", "install", str(policy.torch_requirement)),
            ("envcheck", "fix", "--python", new_python),
        )
    else:
        text = (
            f"This interpreter cannot run cutlass_api (it needs Python {policy.python}) and envcheck found no such "
            "interpreter on this machine. Install one (your distribution's python3.12 package, or "
            "`uv python install 3.12`), make a virtual environment from it, then run envcheck fix with it."
        )
        commands = (("python3.12", "-m", "venv", venv), ("envcheck", "fix", "--python", new_python))
    return Instruction(finding.id, finding.title, text, commands)


def _version_ok(text: str, policy: Policy) -> bool:
    try:
        return policy.python.contains(Version(text), prereleases=True)
    except InvalidVersion:
        return False


def _manual(finding: Finding, policy: Policy, options: PlanOptions) -> Instruction:
    if finding.id == "python.version":
        return _python_instruction(finding, policy, options)
    remedy = finding.remedy
    text = remedy.text if remedy is not None else f"{finding.found}" + (f" (wanted: {finding.wanted})" if finding.wanted else "")
    return Instruction(finding.id, finding.title, text, remedy.commands if remedy is not None else ())


def make_plan(findings: Sequence[Finding], facts: Facts, policy: Policy, options: PlanOptions) -> Plan:
    failing = [f for f in findings if f.status.is_problem]
    warned = [f for f in findings if f.status is Status.WARN]
    failing_ids = tuple(f.id for f in failing)
    python = options.python
    pip = options.pip_command
    interpreter = facts.interpreter if isinstance(facts.interpreter, Interpreter) else None

    manual = tuple(_manual(f, policy, options) for f in failing if f.remedy is None or not f.remedy.steps)
    blocked: list[str] = []
    if interpreter is None:
        blocked.append(f"the target interpreter could not be read: {getattr(facts.interpreter, 'message', 'unknown')}")
        return Plan(python, (), manual, (), tuple(blocked), failing_ids)
    if "python.version" in failing_ids:
        blocked.append(f"{interpreter.executable} is Python {interpreter.version_text}; the stack needs {policy.python}")

    required = _remedy_steps(failing)
    optional = [(f, s) for f, s in _remedy_steps(warned)]
    steps: list[PlannedStep] = []
    offered: list[PlannedStep] = []

    # 1. uninstall what must go, only what is there
    names: list[str] = []
    whys: list[str] = []
    for finding, step in required + optional:
        if step.kind != "pip-uninstall":
            continue
        for name in step.args:
            key = canonical_name(name)
            if interpreter.installed(key) and key not in names:
                names.append(key)
                whys.append(step.why or finding.title)
    # Installing the policy's CuTeDSL turns every conflicting distribution still there into a stale one (the
    # split nvidia-cutlass-dsl-libs-* packages of a newer DSL): they go first, before the DSL is installed.
    installs_dsl = any(
        step.kind == "pip-install" and any(_name(a) == policy.cutedsl.name for a in step.args)
        for _, step in required
    )
    if installs_dsl:
        for dist in interpreter.distributions:
            if any(c.matches(dist.name) for c in policy.conflicts) and dist.name not in names:
                names.append(dist.name)
                whys.append(next(c.why for c in policy.conflicts if c.matches(dist.name)))
    if names:
        steps.append(PlannedStep(
            "pip-uninstall",
            f"uninstall {', '.join(names)}",
            "; ".join(dict.fromkeys(whys)),
            (uninstall_argv(pip, names, options.sources),),
        ))

    # 2..4. pip installs: torch apart, then the required pins, then the recommended ones
    torch_reqs: list[Requirement] = []
    torch_index, torch_reinstall, torch_why = "", False, []
    pins: list[Requirement] = []
    pins_why: list[str] = []
    extra: list[Requirement] = []
    extra_why: list[str] = []
    renew: list[Requirement] = []  # installed files to put back (--force-reinstall --no-deps, after the pins)
    recommended = {rule.name for rule in policy.packages if rule.level != "required"}
    for group, is_required in ((required, True), (optional, False)):
        for finding, step in group:
            if step.kind != "pip-install":
                continue
            for text in step.args:
                requirement = parse_requirement(text, f"the remedy of {finding.id}")
                key = canonical_name(requirement.name)
                if any(c.matches(key) for c in policy.conflicts):
                    continue  # asked for by what the plan replaces (a newer DSL's split libs): never installed
                if key == "torch":
                    torch_reqs.append(requirement)
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
    required_names = {canonical_name(r.name) for r in pins}
    extra = [r for r in extra if canonical_name(r.name) not in required_names]
    torch_planned = bool(torch_reqs)
    constraints = options.constraints_file
    constraints_write = ((constraints, constraints_text(policy, interpreter, torch_planned)),)
    installed_torch = interpreter.dist("torch")
    # torch rides along in every transaction, so pip resolves its pins too and cannot replace it
    if torch_planned:
        torch_hold = [Requirement(f"torch{policy.torch_requirement.specifier}")]
    elif installed_torch is not None and not options.no_deps:
        torch_hold = [Requirement(f"torch=={installed_torch.version}")]
    else:
        torch_hold = []

    if torch_planned:
        merged = merge_requirements(torch_reqs)
        steps.append(PlannedStep(
            "pip-install",
            f"install {', '.join(map(str, merged))}" + (f" from {torch_index}" if torch_index and not options.sources.given else ""),
            "; ".join(dict.fromkeys(torch_why)),
            (install_argv(pip, merged, sources=options.sources, step_index_url=torch_index,
                          reinstall=torch_reinstall, no_deps=options.no_deps),),
        ))
    if pins:
        merged = merge_requirements(pins)
        steps.append(PlannedStep(
            "pip-install",
            f"install {', '.join(map(str, merged))} in one transaction"
            + (", holding torch where it is" if torch_hold else ""),
            "; ".join(dict.fromkeys(pins_why)),
            (install_argv(pip, (*merged, *torch_hold), sources=options.sources, constraints=constraints,
                          no_deps=options.no_deps),),
            writes=constraints_write,
        ))
    if renew:
        merged = merge_requirements(renew)
        steps.append(PlannedStep(
            "pip-install",
            f"reinstall {', '.join(map(str, merged))} over what other packages left in its place",
            "files of the package were overwritten or removed by another distribution",
            (install_argv(pip, merged, sources=options.sources, constraints=constraints, reinstall=True, no_deps=True),),
            writes=constraints_write,
        ))
    if extra:
        merged = merge_requirements(extra)
        steps.append(PlannedStep(
            "pip-install",
            f"install {', '.join(map(str, merged))} (recommended: a failure here does not stop the plan)",
            "; ".join(dict.fromkeys(extra_why)),
            (install_argv(pip, (*merged, *torch_hold), sources=options.sources, constraints=constraints,
                          no_deps=options.no_deps),),
            optional=True,
            writes=constraints_write,
        ))

    # 5. CUTLASS
    kinds = {step.kind for _, step in required + optional}
    source = policy.cutlass
    checkout = facts.checkout
    if "cutlass-fetch" in kinds:
        dirty = getattr(checkout, "dirty_files", ()) if _same_path(getattr(checkout, "path", None), options.cutlass_dir) else ()
        if dirty and getattr(checkout, "commit", None) != source.commit:
            blocked.append(
                f"the CUTLASS checkout {options.cutlass_dir} has changes that are not committed "
                f"({', '.join(dirty[:3])}{'...' if len(dirty) > 3 else ''}); envcheck does not touch a dirty checkout. "
                "Commit or stash them, or choose another folder with --cutlass-dir, then run `envcheck fix` again."
            )
        steps.append(PlannedStep(
            "cutlass-fetch",
            f"fetch CUTLASS {source.branch} at {source.commit[:12]} (shallow, blob-filtered, sparse to {source.subdir}) "
            f"into {options.cutlass_dir}",
            next((s.why for _, s in required + optional if s.kind == "cutlass-fetch" and s.why), source.why),
            cutlass_fetch.git_commands(options.cutlass_dir, options.cutlass_url, source.branch, source.commit, source.subdir),
            params=(("dest", options.cutlass_dir), ("url", options.cutlass_url), ("branch", source.branch),
                    ("commit", source.commit), ("subdir", source.subdir)),
        ))
    if "cutlass-install" in kinds:
        package = os.path.join(options.cutlass_dir, source.subdir)
        target = f"{package}[{','.join(source.extras)}]" if source.extras else package
        steps.append(PlannedStep(
            "cutlass-install",
            f"install {source.distribution} editable from {package}",
            next((s.why for _, s in required + optional if s.kind == "cutlass-install" and s.why), source.why),
            (install_argv(pip, tuple(torch_hold), sources=options.sources, constraints=constraints, editable=target,
                          no_deps=options.no_deps, build_isolation=_build_isolation(interpreter)),),
            writes=constraints_write,
        ))

    # 6. the toolkit, in a prefix of its own
    toolkit_steps = [(f, s) for f, s in required + optional if s.kind == "toolkit-install"]
    if toolkit_steps and options.toolkit_prefix:
        finding, step = toolkit_steps[0]
        requirement = parse_requirement(step.args[0] if step.args else str(policy.toolkit_requirement),
                                        f"the remedy of {finding.id}")
        env_file = os.path.join(options.toolkit_prefix, "env.sh")
        planned = PlannedStep(
            "toolkit-install",
            f"install {requirement} into {options.toolkit_prefix} (outside torch's environment) and write {env_file}",
            step.why or finding.title,
            (install_argv(pip, (requirement,), sources=options.sources, target=options.toolkit_prefix, upgrade=True),),
            writes_after=((env_file, toolkit_env_text(options.toolkit_prefix)),),
            params=(("prefix", options.toolkit_prefix), ("env_file", env_file)),
        )
        (steps if options.toolkit else offered).append(planned)
    return Plan(python, tuple(steps), manual, tuple(offered), tuple(blocked), failing_ids)


def _name(requirement: str) -> str:
    try:
        return canonical_name(Requirement(requirement).name)
    except Exception:  # noqa: BLE001 - parse_requirement reports it properly later
        return ""


def _same_path(a: Optional[str], b: str) -> bool:
    if not a:
        return False
    return Path(a).expanduser().absolute() == Path(b).expanduser().absolute()
