"""Why a child run (smoke's, bench's) failed, and what was known before it started: the first known signature
found in what the child left behind (its result line, its log, how it ended), else how it ended. Pure: the tests feed
it real outputs captured on a GPU machine.
"""

from __future__ import annotations

import re
import signal
from typing import Optional

from ..model import Facts, Failure, Remedy, Status
from ..profile import Policy
from .context import Cause, Context, Evidence, OpFailure
from .remedies import below_remedy
from .explanations import (
    SIGNATURES, cpu_torch, cutlass_api_missing, cutlass_missing, explain_match, library_cause_id, torch_missing,
)

__all__ = ["diagnose", "failed_op", "lowering_target", "preflight"]

NO_KERNEL_FOR_OP = "nvgemm-no-kernel-for-op"
_TARGET = re.compile(r"^\s*target: (\S+)", re.M)  # a LoweringException's line (torch/_inductor/exc.py)


def diagnose(evidence: Evidence, ctx: Context) -> Cause:
    """The cause of a failed smoke run: the first signature, in the table's order, found in the error, its
    traceback or the whole log. Specific signatures come first, so a ProxyKind error printed while autotuning wins
    over the NoValidChoicesError it leads to."""
    error = evidence.error
    if evidence.timed_out:
        return _timeout(evidence, ctx)
    if evidence.returncode is not None and evidence.returncode < 0 and evidence.result is None:
        return _killed(-evidence.returncode, evidence, ctx)
    head = f"{error.get('type', '')}: {error.get('message', '')}" if error else ""
    for signature in SIGNATURES:
        if not signature.row.status.is_problem:  # a warning's message (a deprecation) explains no failure
            continue
        for text in (head, error.get("traceback", ""), evidence.log):
            found = signature.search(text or "")
            cause = explain_match(signature, found, text, ctx) if found else None
            if cause is not None:
                return cause
    if evidence.result is None:
        tail = _last_lines(evidence.log, 1)
        return Cause(
            "no-result",
            f"The smoke child exited with status {evidence.returncode} without a result"
            f"{' during ' + evidence.last_phase if evidence.last_phase else ''}"
            f"{': ' + tail if tail else ''}.",
            Remedy(text="Read the log; run the same interpreter by hand to see whether it starts at all."),
            evidence=tail,
        )
    said = head or "the smoke run failed without an error"
    return Cause(
        "unexplained",
        f"The smoke run failed with an error envcheck does not know: {said[:300]}",
        Remedy(text="Read the log; if this is a new failure of the stack, report it with the log attached."),
        evidence=said[:300],
    )


def failed_op(log: str, ctx: Context) -> Optional[OpFailure]:
    """The aten op a compile stopped on for want of any GEMM choice (NoValidChoicesError "No choices exist for
    backend", `target: aten.<op>` under it), and its cause for this target: nvgemm-no-kernel-for-op where NVGEMM has
    no kernel for the op on the profile's stack and the context's GPU, else no-valid-choices. None where the log shows
    no such failure. The table's own row decides, so that explain, smoke and bench say the same."""
    signature = next(s for s in SIGNATURES if s.id == NO_KERNEL_FOR_OP)
    found = signature.search(log)
    if found is None:
        return None
    cause = explain_match(signature, found, log, ctx)
    return OpFailure(found.group(1), cause.id if cause is not None else "no-valid-choices")


def lowering_target(message: str) -> str:
    """The op Inductor was lowering when its compile failed, whatever the failure: the exception's first `target:
    aten.addmm.default` line ("" where the message has none). failed_op says more where the failure is the want of
    any GEMM choice: the op's cause, from the table's row."""
    found = _TARGET.search(message or "")
    return found.group(1) if found else ""


def _timeout(evidence: Evidence, ctx: Context) -> Cause:
    phase = evidence.last_phase or "start-up"
    hint = {
        "import-torch": "importing torch hung (a network file system, or a broken CUDA library)",
        "cuda": "starting CUDA hung (the driver, or a GPU in a bad state)",
        "compile": "the compile did not finish (a cold compile takes 25-35 s on an H200, a warm one 2-3 s)",
    }.get(phase, f"it was in phase {phase}")
    return Cause(
        "timeout",
        f"The smoke run did not finish within {evidence.timeout_s:g} s: {hint}. Its process group was killed.",
        Remedy(
            text="Run again with a longer --timeout; if it hangs again, read the log to see where.",
            commands=(("envcheck", "smoke", "--python", ctx.python, "--timeout", str(int(max(evidence.timeout_s, 60) * 2))),),
        ),
        evidence=f"last phase: {phase}",
    )


def _killed(number: int, evidence: Evidence, ctx: Context) -> Cause:
    try:
        name = signal.Signals(number).name
    except ValueError:
        name = f"signal {number}"
    where = f" during {evidence.last_phase}" if evidence.last_phase else ""
    if number == signal.SIGKILL:
        why = "killed from outside: the kernel's out-of-memory killer, or a job limit"
    elif number in (signal.SIGSEGV, signal.SIGBUS, signal.SIGILL, signal.SIGABRT):
        why = "a crash in native code (the CUDA driver, the DSL's compiler, or a mismatched extension module)"
    else:
        why = "stopped by a signal"
    return Cause(
        "killed-by-signal",
        f"The smoke child died from {name}{where}: {why}.",
        Remedy(
            text="Read the log's last lines; run again with --fresh in case a cache is corrupt, and check that "
            "torch, nvidia-cutlass-dsl and cutlass_api are the versions the profile names (`envcheck doctor`).",
            commands=(("envcheck", "smoke", "--python", ctx.python, "--fresh"),),
        ),
        evidence=_last_lines(evidence.log, 1),
    )


def _last_lines(text: str, count: int) -> str:
    lines = [line for line in (text or "").strip().splitlines() if line.strip()]
    return " | ".join(lines[-count:])[:300]


def preflight(facts: Facts, policy: Policy, ctx: Context) -> Optional[Cause]:
    """A cause known from the facts alone: a skip (no GPU) or a failure no compile could fix. None: go ahead."""
    driver = facts.driver
    if isinstance(driver, Failure):
        return Cause("no-gpu", f"No GPU to run on: {driver.message}.", status=Status.SKIP)
    if not driver.gpus:
        return Cause("no-gpu", "No GPU to run on: the NVIDIA driver reports no devices.", status=Status.SKIP)
    interpreter = facts.interpreter
    if isinstance(interpreter, Failure):
        return Cause(
            "interpreter",
            f"The target interpreter could not be examined: {interpreter.message}.",
            Remedy(text="Pass a working interpreter with --python PATH."),
        )
    if interpreter.torch is None:
        said, remedy = torch_missing("torch", ctx)
        return Cause("torch-missing", said, remedy)
    if interpreter.torch.cuda is None:
        said, remedy = cpu_torch(ctx)
        return Cause("torch-cpu-build", said, remedy, evidence=f"torch {interpreter.torch.version}, cuda = None")
    if ctx.capability is not None and ctx.capability < policy.gpu_below.capability:
        floor = policy.gpu_below.capability
        return Cause(
            "gpu-unsupported",
            f"{ctx.gpu} is below compute capability {floor[0]}.{floor[1]}: {policy.gpu_below.kernels}.",
            below_remedy(ctx),
        )
    if not ctx.cutlass_found:
        said, remedy = cutlass_missing(policy.cutedsl_module, ctx)
        return Cause("cutlass-not-importable", said, remedy, evidence=f"find_spec({policy.cutedsl_module!r}) is None")
    if not ctx.cutlass_api_found:
        said, remedy = cutlass_api_missing(ctx.library, ctx)
        return Cause(library_cause_id(ctx.library), said, remedy, evidence=f"find_spec({ctx.library!r}) is None")
    return None
