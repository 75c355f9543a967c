"""Gather and judge one environment into a Report: what doctor, fix, smoke, bench, explain and bundle share.

Gathering runs once for every candidate profile (the probe locates all their modules); the profile that covers the
torch found is chosen, then the judges run under it. Nothing here renders or decides an exit code.
"""

from __future__ import annotations

import os
from dataclasses import replace
from typing import TYPE_CHECKING, Callable, Mapping, Optional, Sequence

from .gather.target import resolve_python

if TYPE_CHECKING:
    from .gather import Gatherers, Sources
    from .model import Facts, Finding, ProfileChoice, Report, Run
    from .profile import Candidates, Policy

__all__ = ["diagnose", "diagnose_selected", "gather_selected", "run_facts", "with_pythons"]


def diagnose(
    python: Optional[str], cutlass_dir: Optional[str], policy: Policy, *, no_gpu: bool = False,
    gatherers: Optional[Gatherers] = None, strict: bool = False, choice: Optional[ProfileChoice] = None,
    gpu_capabilities: tuple[tuple[int, int], ...] = (),
) -> Report:
    """Gather and judge under one given policy: the Report for a target interpreter (fix and smoke reuse this).

    `gatherers`, if given, may already be running (envcheck.gather.started); `gpu_capabilities` (--gpu-capability):
    GPUs to judge for as if present."""
    from .profile import Candidates

    candidates = Candidates((policy,), choice.reason if choice else "given to this command")
    return diagnose_selected(python, cutlass_dir, candidates, no_gpu=no_gpu, gatherers=gatherers, strict=strict,
                             gpu_capabilities=gpu_capabilities)[1]


def diagnose_selected(
    python: Optional[str], cutlass_dir: Optional[str], candidates: Candidates, *, no_gpu: bool = False,
    gatherers: Optional[Gatherers] = None, strict: bool = False, gpu_capabilities: tuple[tuple[int, int], ...] = (),
    runs: tuple[Run, ...] = (),
) -> tuple[Policy, Report]:
    """Gather once, pick the profile among `candidates` that covers the torch found, and judge by it (`runs`: recorded
    runs the user contributed, beside the profile's own evidence)."""
    from .judge import judge
    from .model import Report

    policy, choice, facts = gather_selected(python, cutlass_dir, candidates, gatherers=gatherers,
                                            gpu_capabilities=gpu_capabilities)
    target = getattr(facts.interpreter, "executable", resolve_python(python))
    def judged(facts: Facts):
        return judge(facts, policy, no_gpu=no_gpu, strict=strict, runs=runs)

    facts, findings = with_pythons(facts, judged(facts), judged, (gatherers or _gatherers()).pythons)
    return policy, Report(profile=choice, target=target, findings=findings, facts=facts)


def with_pythons(facts: Facts, findings: Sequence[Finding], judged: Callable[[Facts], Sequence[Finding]],
                 find: Callable[[Mapping[str, str]], tuple], env: Optional[Mapping[str, str]] = None):
    """(facts, findings) as they are, or, where the target's Python is too old for the stack (python.version fails),
    with the other interpreters on this machine found and judged again, so that the advice names one of them: the
    same one in doctor's remedy and in fix's plan. `find`: (env) -> ((path, version), ...)."""
    if facts.pythons or not any(f.id == "python.version" and f.status.is_problem for f in findings):
        return facts, tuple(findings)
    facts = replace(facts, pythons=tuple(find(os.environ if env is None else env)))
    return facts, tuple(judged(facts)) if facts.pythons else tuple(findings)


def _gatherers() -> Gatherers:
    from .gather import Gatherers

    return Gatherers()


def gather_selected(
    python: Optional[str], cutlass_dir: Optional[str], candidates: Candidates, *, gatherers: Optional[Gatherers] = None,
    env: Optional[Mapping[str, str]] = None, collect: Optional[Callable[[Sources], Facts]] = None,
    gpu_capabilities: tuple[tuple[int, int], ...] = (),
) -> tuple[Policy, ProfileChoice, Facts]:
    """The facts of a target, and the profile among `candidates` that covers its torch, or without torch the one of
    what `pip install torch` gives on its Python (fix and smoke use this too).

    The probe locates every candidate's modules; the checkout is read for the first candidate that has one and
    dropped when the chosen profile needs none. `gpu_capabilities`: GPUs given (--gpu-capability), facts of their
    own."""
    from .gather import Gatherers, Sources, gather

    with_checkout = next((p for p in candidates.policies if p.cutlass is not None), candidates.policies[0])
    sources = replace(Sources.for_policy(resolve_python(python), with_checkout, cutlass_dir, env),
                      modules=candidates.probe_modules, variables=candidates.variables,
                      torch_values=candidates.torch_values,
                      gpu_capabilities=tuple(gpu_capabilities))
    facts = collect(sources) if collect is not None else gather(sources, gatherers or Gatherers())
    policy, choice = candidates.select(_torch_version(facts), python=_python_version(facts))
    if policy.cutlass is None:
        facts = replace(facts, checkout=None)
    return policy, choice, facts


def run_facts(python: str, candidates: Candidates) -> tuple[Policy, ProfileChoice, Facts]:
    """What a run in the target needs (smoke, bench): the interpreter and the GPUs, and the profile among
    `candidates` that covers its torch. nvcc and the CUTLASS checkout are doctor's business: not gathered."""
    from .gather import Gatherers
    from .model import Toolkit

    return gather_selected(python, None, candidates,
                           gatherers=Gatherers(toolkit=lambda env, interpreter: Toolkit(), checkout=lambda *args: None))


def _python_version(facts: Facts) -> Optional[str]:
    """The target's Python (X.Y.Z), which decides the torch `pip install torch` gives it; None where unread."""
    from .model import Interpreter

    interpreter = facts.interpreter
    return interpreter.version_text if isinstance(interpreter, Interpreter) else None


def _torch_version(facts: Facts) -> Optional[str]:
    """The installed torch's version (Interpreter.torch_version); None without torch or a readable interpreter."""
    from .model import Interpreter

    interpreter = facts.interpreter
    return interpreter.torch_version if isinstance(interpreter, Interpreter) else None
