"""cutedsl.arch: the compile target the DSL takes from the job's environment (CUTE_DSL_ARCH), judged for every GPU
against the profile's [compile-target]. Where torch compiles NVGEMM in workers that cannot read the GPU, the DSL
falls back to its default target unless the variable names the GPU's own; a value naming another GPU's target, or one
the DSL refuses, breaks every process (the DSL reads it in the parent too).

Also the one remedy that doctor, fix, explain, the Dockerfile and bench's snippet give (target_remedy, and
snippet_lines for Python), and the target of the GPU a child run compiles on (device_target). Pure."""

from __future__ import annotations

from typing import Optional

from ..model import Driver, Facts, Finding, Remedy, Status, capability_text
from ..profile import SOURCES, CompileTarget, Policy, spec_text
from ._common import Context, source_lines, worst
from .evidence import recorded, variable_field

__all__ = ["DSL_ARCH", "cutedsl_arch", "target_remedy", "snippet_lines", "device_target", "device_capability",
           "needed_environment"]

CHECK, TITLE = "cutedsl.arch", "CuTeDSL compile target"
# The DSL's own name for it (nvidia_cutlass_dsl_libs_core-4.8.1 cutlass/base_dsl/env_manager.py:930, prefix CUTE_DSL;
# its message says "Ensure env CUTE_DSL_ARCH matches your GPU architecture"): what explain names where the profile
# that explains a log has no [compile-target] of its own.
DSL_ARCH = "CUTE_DSL_ARCH"


def target_remedy(variable: str, target: str) -> Remedy:
    """Set the variable to the GPU's own target where the job starts: the exact line, and where it goes."""
    setting = f"{variable}={target}"
    return Remedy(
        text=(f"Set {setting} in the environment the job starts with: `export {setting}` in its shell or batch script "
              f"(a Kubernetes `env` entry, a Slurm script), `ENV {setting}` in its Dockerfile. Inductor's compile "
              "workers copy the environment when the process's first torch.compile starts them, so os.environ set in "
              "Python counts only before that."),
        commands=(("export", setting),),
        environment=((variable, target),),
    )


def snippet_lines(variable: str, target: str) -> tuple[str, ...]:
    """The same remedy as Python lines, for a config snippet that runs before the first torch.compile."""
    return (
        f"# {variable} must be in the environment before torch.compile starts Inductor's compile workers (they copy",
        f"# it when they start): best `export {variable}={target}` where the job starts; in Python, before any compile:",
        "import os",
        f"os.environ[\"{variable}\"] = \"{target}\"",
    )


def device_capability(facts: Facts) -> Optional[tuple[int, int]]:
    """The compute capability of the GPU a child run compiles on: CUDA's device 0, the first GPU CUDA_VISIBLE_DEVICES
    names (an index, or a UUID NVML reported), else NVML's first; None where no GPU is seen."""
    driver = facts.driver if isinstance(facts.driver, Driver) else None
    if driver is None or not driver.gpus:
        return None
    first = (facts.cuda_visible_devices or "").split(",")[0].strip()
    named = next((g for g in driver.gpus if (first.isdigit() and g.index == int(first)) or (first and g.uuid == first)),
                 None)
    return (named or driver.gpus[0]).capability


def device_target(facts: Facts, policy: Policy) -> Optional[str]:
    """The own target of the GPU a child run compiles on (device_capability), as the profile names it; None where the
    profile names none for it, or no GPU is seen."""
    capability = device_capability(facts)
    rule = policy.compile_target
    return rule.target_for(capability) if rule is not None and capability is not None else None


def needed_environment(facts: Facts, policy: Policy) -> tuple[tuple[str, str], ...]:
    """What the process on this GPU must set (the remedy's environment) where the profile's verdict for it without the
    variable is not a pass (9.0 with torch >= 2.14); () where it needs nothing, or nothing is known."""
    rule = policy.compile_target
    capability = device_capability(facts)
    row = rule.row(capability) if rule is not None and capability is not None else None
    if row is None or row.status is Status.PASS or not rule.affects(Context(facts, policy).torch):
        return ()
    return target_remedy(rule.variable, row.target).environment


def _per_gpu(rule: CompileTarget, capability: tuple[int, int], value: Optional[str], affected: bool,
             torch: str) -> tuple[Status, str, str, Optional[str]]:
    """One compute capability's verdict: (status, text, basis of a warning, the GPU's own target or None)."""
    cc = capability_text(capability)
    row = rule.row(capability)
    if row is None:
        return Status.SKIP, f"compute capability {cc}: no compile target known (the profile names none for it)", "", None
    if value is None and not affected:
        return Status.PASS, (f"compute capability {cc}: {rule.variable} is not set, and torch {torch} compiles NVGEMM "
                             f"in the process that holds the GPU, for its own target {row.target}"), "", row.target
    if value is None:
        return row.status, f"compute capability {cc}: {rule.variable} is not set: {row.text}", row.basis, row.target
    if value == row.target:
        return Status.PASS, f"compute capability {cc}: {rule.variable}={value}, this GPU's own target", "", row.target
    named = rule.capability_of(value)
    if named == capability:
        return Status.WARN, (f"compute capability {cc}: {rule.variable}={value} is this GPU's, but not the target the "
                             f"DSL detects for it ({row.target}): every operator built for {row.target} is refused in "
                             "every process"), SOURCES, row.target
    return Status.FAIL, (f"compute capability {cc}: {rule.variable}={value} is the target of compute capability "
                         f"{capability_text(named)}, not this GPU's ({row.target}): every process compiles NVGEMM for it, "
                         "the one that holds the GPU too, so this GPU's operators are refused or built as code it "
                         "cannot run"), "", row.target


def cutedsl_arch(ctx: Context) -> Finding:
    rule = ctx.policy.compile_target
    if rule is None:
        return Finding(CHECK, TITLE, Status.SKIP, "not judged by this profile (it has no [compile-target]: its torch "
                       "compiles NVGEMM in the process that holds the GPU)")
    value = ctx.facts.variable(rule.variable)
    said = f"{rule.variable}={value}" if value is not None else f"{rule.variable} not set"
    wanted = f"{rule.variable} = the GPU's own target, in the environment the job starts with"
    where = (f"read from the environment envcheck runs in, the job's ({said}); Inductor's compile workers start with a "
             "copy of it")
    if value is not None and rule.capability_of(value) is None:
        accepted = ", ".join(name for name, _ in rule.accepts)
        targets = [t for t in (rule.target_for(cc) for cc in ctx.capabilities) if t]
        remedy = (target_remedy(rule.variable, targets[0]) if len(set(targets)) == 1
                  else Remedy(f"Unset {rule.variable}, or set it to a target the DSL takes ({accepted}).",
                              commands=(("unset", rule.variable),)))
        return Finding(CHECK, TITLE, Status.FAIL,
                       f"{rule.variable}={value!r} is no target the DSL takes: every NVGEMM compile fails", wanted,
                       rule.why, remedy, (where, f"the DSL takes: {accepted}", *source_lines(("compile target", rule.source))))
    capabilities = ctx.capabilities
    if not capabilities:
        why_not = "--no-gpu" if ctx.no_gpu else "no GPU seen"
        return Finding(CHECK, TITLE, Status.SKIP, f"{said}; not judged for a GPU ({why_not}; --gpu-capability X.Y "
                       "judges for one)", wanted, rule.why, details=(where,))
    torch = ctx.torch
    torch_text = str(torch) if torch is not None else "(none installed: judged for the profile's)"
    judged = [_per_gpu(rule, cc, value, rule.affects(torch), torch_text) for cc in capabilities]
    status = worst([s for s, _, _, _ in judged])
    targets = {t for _, _, _, t in judged if t}
    details = [where]
    if len(capabilities) > 1:
        details.append(f"GPUs of {len(capabilities)} compute capabilities: {rule.variable} is one value per process; "
                       "set it for each job to the target of the GPU it uses (CUDA_VISIBLE_DEVICES)")
        if value in targets and status is Status.FAIL:  # right for one of them: a process on the others breaks
            status = Status.WARN
    if torch is None:
        details.append(f"no torch installed: judged for the torch this profile installs ({spec_text(rule.torch)} "
                       "compiles in workers that cannot read the GPU)")
    if any(g.given for g in ctx.gpus):
        details.append("judged for the GPU given (--gpu-capability): the variable must be set where the job runs "
                       "(the image's ENV)")
    details += source_lines(("compile target", rule.source), *((f"compute capability {capability_text(cc)}", rule.row(cc).source)
                                                     for cc in capabilities if rule.row(cc) is not None))
    evidence = recorded(ctx, variable_field(rule.variable))
    details.append(evidence.said)
    remedy = None
    if status not in (Status.PASS, Status.SKIP):
        own = {cc: t for cc, (_, _, _, t) in zip(capabilities, judged) if t}
        remedy = target_remedy(rule.variable, next(iter(own.values()))) if len(set(own.values())) == 1 else Remedy(
            f"Set {rule.variable} for each job to the target of the GPU it uses: "
            + ", ".join(f"{capability_text(cc)}: {t}" for cc, t in own.items()) + ".")
    basis = next((b for s, _, b, _ in judged if s is Status.WARN and b), "") if status is Status.WARN else ""
    found = "; ".join(text for _, text, _, _ in judged)
    return Finding(CHECK, TITLE, status, found, wanted, rule.why, remedy, tuple(details), evidence, basis)
