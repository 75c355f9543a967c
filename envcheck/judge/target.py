"""cutedsl.arch: the compile target the DSL takes from the job's environment (CUTE_DSL_ARCH), judged for every GPU
against the profile's [compile-target]. Where torch compiles NVGEMM in workers that cannot read the GPU, the DSL
falls back to its default target unless the variable names the GPU's own; a value naming another GPU's target, or one
the DSL refuses, breaks every process (the DSL reads it in the parent too). Whether torch uses the workers is judged
per torch (unset_verdict): a GEMM's NVGEMM choices go there only from a threshold, which the installed torch's source
says (read by the probe as text) or else the profile's row for that torch, and the choices a GEMM gets are the
profile's row's, unless a setting of the job's raises them.

Also the one remedy that doctor, fix, explain, the Dockerfile and bench's snippet give (target_remedy, and
snippet_lines for Python), and the target of the GPU a child run compiles on (device_target). Pure."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Mapping, Optional

from packaging.version import Version

from ..model import Driver, Facts, Finding, Interpreter, Remedy, SourceValue, Status, capability_text
from ..profile import SOURCES, CompileTarget, MoreChoices, Policy, spec_text
from ._common import Context, source_lines, worst
from .evidence import recorded, variable_field

__all__ = ["DSL_ARCH", "Verdict", "cutedsl_arch", "unset_verdict", "threshold_read", "target_remedy", "snippet_lines",
           "device_target", "device_capability", "needed_environment"]

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
    variable is not a pass (9.0 with torch 2.14, or 2.15 with a setting that raises a GEMM's NVGEMM choices to the
    threshold); () where it needs nothing, or nothing is known."""
    rule = policy.compile_target
    capability = device_capability(facts)
    if rule is None or capability is None or rule.row(capability) is None:
        return ()
    torch, _ = Context(facts, policy).torch_judged
    verdict = unset_verdict(rule, capability, torch, threshold_read(facts, rule), dict(facts.environment))
    return () if verdict.status is Status.PASS else target_remedy(rule.variable, verdict.target).environment


@dataclass(frozen=True)
class Verdict:
    """One compute capability's cutedsl.arch: its status, what was found, the basis of a warning, the GPU's own target
    (None where the profile names none) and what more -v says."""

    status: Status
    text: str
    basis: str = ""
    target: Optional[str] = None
    details: tuple[str, ...] = ()


def threshold_read(facts: Facts, rule: CompileTarget) -> Optional[SourceValue]:
    """What the probe read of the threshold in the installed torch's source; None where it was not asked (no torch,
    or the profile names no threshold)."""
    interpreter = facts.interpreter if isinstance(facts.interpreter, Interpreter) else None
    where = rule.threshold_value
    if interpreter is None or interpreter.torch is None or where is None:
        return None
    return interpreter.torch.value_of(*where)


def _setting_text(setting: MoreChoices) -> str:
    """A setting that raises the choices, as the verdict names it: 'VAR=1 (what it does)'."""
    values = " or ".join(setting.values) + (f" or a number above {setting.above}" if setting.above is not None else "")
    return f"{setting.variable}={values} ({setting.text})"


def unset_verdict(rule: CompileTarget, capability: tuple[int, int], torch: Optional[Version],
                  read: Optional[SourceValue], settings: Mapping[str, str]) -> Verdict:
    """The verdict where the variable is not set: what the DSL compiles for in whichever process compiles this GPU's
    NVGEMM choices. The capability's row where torch compiles them in its workers, or nothing says it does not; a
    pass where the torch's choices per GEMM stay below the threshold from which it sends them to the workers (the
    threshold `read` from the installed torch's source, else the profile's for that torch) and no setting of the
    job's (`settings`: the variables gathered) can raise them to it. Pure: doctor, fix, bench's snippet and the
    Dockerfile judge by it."""
    cc, row, variable = capability_text(capability), rule.row(capability), rule.variable
    if row is None:
        return Verdict(Status.SKIP, f"compute capability {cc}: no compile target known (the profile names none for it)")
    if not rule.affects(torch):
        return Verdict(Status.PASS, f"compute capability {cc}: {variable} is not set, and torch {torch} compiles "
                       f"NVGEMM in the process that holds the GPU, for its own target {row.target}", "", row.target)
    rows = Verdict(row.status, f"compute capability {cc}: {variable} is not set: {row.text}", row.basis, row.target)
    by = rule.choices_for(torch)
    if row.status is Status.PASS or torch is None:
        return rows
    known = read is not None and read.value is not None  # the installed torch's own number
    if by is None:
        says = f" (its source says from {read.value}: {read.where})" if known else ""
        return replace(rows, details=(f"no record of how many NVGEMM choices torch {torch} offers per GEMM{says}: "
                                      "judged as if it sent them to its compile workers",))
    threshold = read.value if known else by.threshold
    said = (f"as its {read.where} says" if known else f"{read.why if read is not None else 'its source not read'}: "
            f"the profile's number for torch {spec_text(by.torch)}")
    most = by.most(capability)
    seen = (f"torch {torch} sends a GEMM's NVGEMM choices to its compile workers from {threshold} ({said}); "
            f"{by.text}", *source_lines((f"torch {spec_text(by.torch)}", by.source)))
    if most is None:
        return replace(rows, details=(*seen, f"no record of how many NVGEMM choices torch {torch} offers per GEMM on "
                                             f"compute capability {cc}: judged as if it sent them to its workers"))
    if most >= threshold:
        return replace(rows, details=(f"on compute capability {cc} one GEMM got up to {most} NVGEMM choices", *seen))
    raising = [(m, settings[m.variable]) for m in rule.more_choices
               if m.variable in settings and m.raises(settings[m.variable]) is not False]
    if raising:
        why = "; ".join(f"{m.variable}={value} " + (m.text if m.raises(value) else
                        f"is no value envcheck reads as torch does ({_setting_text(m)})") for m, value in raising)
        return Verdict(row.status, f"compute capability {cc}: {variable} is not set, and a GEMM can reach {threshold} "
                       f"NVGEMM choices, from which torch {torch} compiles them in its compile workers: {why}. There: "
                       f"{row.text}", SOURCES, row.target,
                       (*seen, *source_lines(*((m.variable, m.source) for m, _ in raising))))
    bite = (f"it would take {variable}={row.target} from {threshold} NVGEMM choices for one GEMM, which a setting of "
            "the job's environment can bring (none is set here): " + "; ".join(map(_setting_text, rule.more_choices)))
    return Verdict(Status.PASS, f"compute capability {cc}: {variable} is not set, and torch {torch} compiles NVGEMM in "
                   f"the process that holds the GPU, for its own target {row.target}: one GEMM got at most {most} "
                   f"NVGEMM choices on {cc}, and it sends them to its compile workers only from {threshold} ({said})",
                   "", row.target, (by.text, *seen[1:], bite))


def _per_gpu(rule: CompileTarget, capability: tuple[int, int], value: Optional[str], torch: Optional[Version],
             read: Optional[SourceValue], settings: Mapping[str, str]) -> Verdict:
    """One compute capability's verdict for the variable's value (None: not set)."""
    cc = capability_text(capability)
    row = rule.row(capability)
    if row is None or value is None:
        return unset_verdict(rule, capability, torch, read, settings)
    if value == row.target:
        return Verdict(Status.PASS, f"compute capability {cc}: {rule.variable}={value}, this GPU's own target", "",
                       row.target)
    named = rule.capability_of(value)
    if named == capability:
        return Verdict(Status.WARN, (f"compute capability {cc}: {rule.variable}={value} is this GPU's, but not the "
                                     f"target the DSL detects for it ({row.target}): every operator built for "
                                     f"{row.target} is refused in every process"), SOURCES, row.target)
    return Verdict(Status.FAIL, (f"compute capability {cc}: {rule.variable}={value} is the target of compute "
                                 f"capability {capability_text(named)}, not this GPU's ({row.target}): every process "
                                 "compiles NVGEMM for it, the one that holds the GPU too, so this GPU's operators are "
                                 "refused or built as code it cannot run"), "", row.target)


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
    torch, how = ctx.torch_judged
    read = threshold_read(ctx.facts, rule)
    settings = dict(ctx.facts.environment)
    judged = [_per_gpu(rule, cc, value, torch, read, settings) for cc in capabilities]
    status = worst([v.status for v in judged])
    targets = {v.target for v in judged if v.target}
    details = [where, *dict.fromkeys(d for v in judged for d in v.details)]
    if len(capabilities) > 1:
        details.append(f"GPUs of {len(capabilities)} compute capabilities: {rule.variable} is one value per process; "
                       "set it for each job to the target of the GPU it uses (CUDA_VISIBLE_DEVICES)")
        if value in targets and status is Status.FAIL:  # right for one of them: a process on the others breaks
            status = Status.WARN
    if how == "pip":
        details.append(f"no torch installed: judged for torch {torch}, what `pip install torch` gives on this Python")
    elif torch is None:
        details.append(f"no torch installed: judged for the torch this profile installs ({spec_text(rule.torch)} "
                       "compiles in workers that cannot read the GPU)")
    if any(g.given for g in ctx.gpus):
        details.append("judged for the GPU given (--gpu-capability): the variable must be set where the job runs "
                       "(the image's ENV)")
    details += source_lines(("compile target", rule.source), *((f"compute capability {capability_text(cc)}", rule.row(cc).source)
                                                     for cc in capabilities if rule.row(cc) is not None))
    # the runs of this combination: the variable, and each setting that raises a GEMM's choices, as here
    evidence = recorded(ctx, variable_field(rule.variable), *(variable_field(m.variable) for m in rule.more_choices))
    details.append(evidence.said)
    remedy = None
    if status not in (Status.PASS, Status.SKIP):
        own = {cc: v.target for cc, v in zip(capabilities, judged) if v.target}
        remedy = target_remedy(rule.variable, next(iter(own.values()))) if len(set(own.values())) == 1 else Remedy(
            f"Set {rule.variable} for each job to the target of the GPU it uses: "
            + ", ".join(f"{capability_text(cc)}: {t}" for cc, t in own.items()) + ".")
    basis = next((v.basis for v in judged if v.status is Status.WARN and v.basis), "") if status is Status.WARN else ""
    found = "; ".join(v.text for v in judged)
    return Finding(CHECK, TITLE, status, found, wanted, rule.why, remedy, tuple(details), evidence, basis)
