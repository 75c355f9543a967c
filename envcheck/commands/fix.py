"""`envcheck fix`: gather, judge, plan, show the plan, and apply it only when asked; `--undo` gives the environment back.

run_fix is the one function the CLI calls; it returns the exit code. Everything it touches from outside (the process
runner, the gatherer, the judge, the confirmation prompt, the output streams) can be passed in.
"""

from __future__ import annotations

import datetime
import os
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Mapping, Optional, Sequence, TextIO

from .. import shell
from ..cutlass_fetch import read_state
from ..errors import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, UsageError
from ..fix import snapshot as snapshots
from ..fix import statelock
from ..fix.apply import Console, Outcome, Runner, apply, run_command
from ..fix.host import externally_managed, pip_for
from ..fix.pip import PipSources, checked_name, sources_from_flags
from ..fix.pipconfig import ConfigFile, config_files, pip_setup, read_secrets
from ..fix.plan import cutlass_folder, make_plan
from ..fix.preflight import preflight
from ..fix.steps import Plan, PlanOptions
from ..fix.undo import undo_plan
from ..gather.pythons import find_pythons
from ..gather.target import require_interpreter, resolve_python
from ..gitsafe import checked_url
from ..jsonanswer import answer
from ..model import Facts, Finding, Interpreter, ProfileChoice
from ..paths import cache_dir, folder_origin, new_file, usable_folder
from ..profile import Candidates, Policy
from ..redact import RedactedStream, Redactor, has_credentials, redact_url, url_secrets
from ..render.fix import render_origins, render_outcome, render_pip, render_plan, set_by, value_origins
from ..render.text import profile_json, profile_line
from ..words import write_wrapped

__all__ = ["FixOptions", "Io", "run_fix"]

SCHEMA_VERSION = 1  # of fix --json's object


@dataclass(frozen=True)
class FixOptions:
    python: Optional[str] = None
    profile: Optional[str] = None  # --profile ID|FILE; None: the one covering the installed torch (profile.choose)
    cutlass_dir: Optional[str] = None
    cutlass_url: Optional[str] = None
    find_links: tuple[str, ...] = ()
    index_url: Optional[str] = None
    no_index: bool = False
    dry_run: bool = False
    yes: bool = False
    as_json: bool = False
    undo: bool = False
    no_deps: bool = False
    toolkit: bool = False
    toolkit_prefix: Optional[str] = None
    no_gpu: bool = False
    gpu_capabilities: tuple[tuple[int, int], ...] = ()  # --gpu-capability: plan for these GPUs, as if present
    break_system_packages: bool = False
    remove: tuple[str, ...] = ()  # consent to remove these distributions where the profile asks for it
    bundle: Optional[str] = None  # a bundle folder, FILE.tar or its parts: packages and CUTLASS, with no network
    lock_timeout: Optional[float] = None  # seconds to wait for another fix or undo of the target (None: 600)


@dataclass
class Io:
    """The outside world of one run, replaceable in tests."""

    out: TextIO = field(default_factory=lambda: sys.stdout)
    err: TextIO = field(default_factory=lambda: sys.stderr)
    env: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    runner: Runner = run_command
    confirm: Optional[Callable[[str], bool]] = None  # None: ask on the terminal when there is one
    gather: Optional[Callable[..., Facts]] = None  # (Sources) -> Facts; None: gather for real
    judge: Optional[Callable[..., tuple[Finding, ...]]] = None


def _gather(io: Io, python: str, cutlass_dir: Optional[str], candidates: Candidates,
            gpus: tuple[tuple[int, int], ...] = ()) -> tuple[Policy, ProfileChoice, Facts]:
    """The target's facts (with the GPUs given by --gpu-capability) and the profile that covers its torch (or the one
    the user named)."""
    from ..diagnose import gather_selected

    return gather_selected(python, cutlass_dir, candidates, env=io.env, collect=io.gather, gpu_capabilities=gpus)


def _judge(io: Io, facts: Facts, policy, no_gpu: bool) -> tuple[Finding, ...]:
    """The findings as doctor makes them."""
    if io.judge is not None:
        return io.judge(facts, policy, no_gpu=no_gpu)
    from ..judge import judge

    return judge(facts, policy, no_gpu=no_gpu)


# --------------------------------------------------------------------------------------------------------------
# Running


def _confirm(io: Io, question: str) -> bool:
    if io.confirm is not None:
        return io.confirm(question)
    if not sys.stdin or not sys.stdin.isatty():
        return False
    io.err.write(f"{question} [y/N] ")
    io.err.flush()
    return sys.stdin.readline().strip().lower() in ("y", "yes")


def _agreed(io: Io, options: FixOptions, question: str) -> bool:
    """Whether to go on and change the target: --yes, or the question answered yes; otherwise it says so."""
    if options.yes or _confirm(io, question):
        return True
    io.err.write("Nothing was changed (run with --yes to apply without asking).\n")
    return False


def _open_log(state: Path, verb: str, what: str, redact: Optional[Redactor] = None) -> tuple[TextIO, Path]:
    """A new log in the state folder: its owner's only, secrets masked (pip's and git's output name index URLs)."""
    folder = usable_folder(state / "logs", what, create=True, root=state)
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    path = folder / f"{verb}-{stamp}-{os.getpid()}.log"
    return RedactedStream(new_file(path, f"{what}: the log"), redact), path


def _no_credentials(url: str, flag_value: Optional[str]) -> str:
    """The CUTLASS URL, refused when it carries a secret: git would keep it in the checkout's .git/config."""
    if has_credentials(url):
        where = "--cutlass-url" if flag_value else "the profile's cutlass.url"
        raise UsageError(
            f"{where} {Redactor(paths=False)(redact_url(url))!r}: carries credentials (user info or a query), which git would "
            "keep in the checkout's configuration and its output would show; fetch over ssh:// with your key, or "
            "from a local mirror (--cutlass-url DIR)"
        )
    return url


def _consent(io: Io, options: FixOptions, plan: Plan) -> tuple[str, ...]:
    """Removals the profile makes only with consent, agreed at the terminal (never with --yes, --json or --dry-run:
    there the flag --remove NAME is the consent)."""
    if options.yes or options.as_json or options.dry_run or (io.confirm is None and not (sys.stdin and sys.stdin.isatty())):
        return ()
    agreed = []
    for step in plan.offered:
        if step.kind == "pip-uninstall" and step.offer.startswith("--remove "):
            name = step.offer.split(" ", 1)[1]
            if _confirm(io, f"Also {step.what}? ({step.why})"):
                agreed.append(name)
    return tuple(agreed)


def _masking(io: Io, pip_files: Sequence[ConfigFile]) -> Io:
    """io whose streams, and the log opened from them, also mask the secret parts of the URLs that the pip
    configuration files pip reads set: pip prints an index's path and query apart from the URL (url_secrets)."""
    secrets = read_secrets(pip_files)
    if not secrets:
        return io
    redact = Redactor(paths=False, also=(*io.err.redact.secrets, *secrets))
    return replace(io, out=RedactedStream(io.out, redact), err=RedactedStream(io.err, redact))


def run_fix(options: FixOptions, io: Optional[Io] = None) -> int:
    io = io or Io()
    from ..profile import candidates

    python = resolve_python(options.python)
    named = candidates(options.profile)
    # pip's output, git's and fix's own carry index URLs, and a child may print a URL's parts apart from it (pip an
    # index's path with its query): whatever reaches the user or the log is masked, those parts too.
    urls = [u for p in named.policies for u in (p.torch_index_url, p.cutlass.url if p.cutlass else "")]
    redact = Redactor(paths=False, also=url_secrets(options.index_url, options.cutlass_url, *urls))
    io = replace(io, out=RedactedStream(io.out, redact), err=RedactedStream(io.err, redact))
    sources = sources_from_flags(options.find_links, options.index_url, options.no_index)
    flag_url = (checked_url(_no_credentials(options.cutlass_url, options.cutlass_url), "--cutlass-url")
                if options.cutlass_url is not None else None)
    for name in options.remove:
        checked_name(name, "--remove")
    if options.bundle is not None and (options.undo or options.find_links or options.index_url or options.no_index
                                       or options.cutlass_url):
        raise UsageError("--bundle brings its own packages and CUTLASS: it takes no --undo, --find-links, "
                         "--index-url, --no-index or --cutlass-url")
    if options.undo and (options.toolkit or options.no_deps):
        raise UsageError("--undo cannot be combined with --toolkit or --no-deps")
    if options.cutlass_dir is not None and (not options.cutlass_dir or options.cutlass_dir.startswith("-")):
        raise UsageError(f"--cutlass-dir {options.cutlass_dir!r}: expected a folder")

    gathered = _gather(io, python, options.cutlass_dir, named, options.gpu_capabilities)
    interpreter = require_interpreter(python, gathered[2].interpreter)
    state_what = " ".join(filter(None, (folder_origin(io.env, "ENVCHECK_STATE_DIR"), "(envcheck fix's state folder)")))
    changing = not options.dry_run and (options.undo or options.yes or (not options.as_json and _can_ask(io)))
    # A run that may change things needs its state folder before the first change: checked (made) here.
    state = usable_folder(snapshots.state_dir(interpreter.prefix, io.env), state_what, create=changing,
                          root=snapshots.state_root(io.env))
    if not changing:  # a dry run waits for nobody and writes nothing; it says when what it shows is changing
        holder = statelock.running(state)
        if holder is not None:
            io.err.write(f"Note: {holder} is changing {interpreter.executable} now: what follows is the environment "
                         "as it is at this moment.\n")
        return _proceed(options, io, python, gathered, state, state_what, sources, flag_url, held=False)
    with statelock.hold(state, "undo" if options.undo else "fix", target=interpreter.executable,
                        timeout=statelock.DEFAULT_TIMEOUT if options.lock_timeout is None else options.lock_timeout,
                        say=lambda line: io.err.write(line + "\n")):
        # The environment as it is now that no other run changes it: one may have finished while this one waited.
        gathered = _gather(io, python, options.cutlass_dir, named, options.gpu_capabilities)
        return _proceed(options, io, python, gathered, state, state_what, sources, flag_url, held=True)


def _can_ask(io: Io) -> bool:
    return io.confirm is not None or bool(sys.stdin and sys.stdin.isatty())


def _proceed(options: FixOptions, io: Io, python: str, gathered: tuple[Policy, ProfileChoice, Facts],
             state: Path, state_what: str, sources: PipSources, flag_url: Optional[str], *, held: bool) -> int:
    """Plan and apply (or undo), with the target's lock held when `held` (a dry run holds none)."""
    policy, choice, facts = gathered
    interpreter = require_interpreter(python, facts.interpreter)
    offline = None
    if options.bundle is not None:  # opened for the profile chosen: its lock must be that profile's
        from ..bundle.offline import open_for_fix

        offline = open_for_fix(Path(options.bundle), policy, cache_dir(io.env))
        io.err.write(offline.summary + "\n")
        sources = PipSources(find_links=(str(offline.wheels),), no_index=True)
        options = replace(options, no_deps=True)  # the lock is the whole closure: install exactly it
        offline.check_target(interpreter)
    # pip refuses to change an interpreter its distribution manages (PEP 668) unless told; the flag is the consent,
    # passed to pip only where it matters.
    sources = replace(sources, break_system_packages=options.break_system_packages and externally_managed(interpreter))
    if options.undo:
        return _undo(options, io, policy, interpreter, state, sources, state_what)

    source = policy.cutlass  # None: the profile needs no CUTLASS checkout
    # The flag's URL was checked above, the policy's when it was read; fix also refuses credentials in the latter.
    cutlass_url = (flag_url or _no_credentials(source.url, None)) if source is not None else ""
    if offline is not None and offline.cutlass_url:
        cutlass_url = offline.cutlass_url
    cutlass_dir = cutlass_folder(options.cutlass_dir, facts, io.env)
    toolkit_prefix = options.toolkit_prefix or str(cache_dir(io.env) / f"cuda-{policy.driver_cuda}")
    from ..diagnose import with_pythons

    # a Python too old for the stack: the interpreter to use instead, found as doctor finds it
    facts, findings = with_pythons(facts, _judge(io, facts, policy, options.no_gpu),
                                   lambda again: _judge(io, again, policy, options.no_gpu), find_pythons, io.env)
    plan_options = PlanOptions(
        python=python,
        pip=pip_for(interpreter),
        state_dir=str(state),
        cutlass_dir=cutlass_dir,
        cutlass_url=cutlass_url,
        sources=sources,
        no_deps=options.no_deps,
        toolkit=options.toolkit,
        toolkit_prefix=str(Path(toolkit_prefix).expanduser().absolute()),
        remove=options.remove,
        locked=offline.locked if offline is not None else (),
    )
    plan = make_plan(findings, facts, policy, plan_options)
    agreed = _consent(io, options, plan)
    if agreed:
        plan = make_plan(findings, facts, policy, replace(plan_options, remove=plan_options.remove + agreed))
    refused = preflight(plan) if plan.runnable else ()
    if refused:
        raise UsageError(f"the plan cannot run, so nothing was changed: {'; '.join(refused)}")
    # Which file (and key) or flag set the profile and each URL: shown with every plan, before any change.
    origins = value_origins(policy, sources, cutlass_url, flag_url is not None, offline is not None)
    files = set_by(policy)
    # Which pip configuration files pip reads (the machine-wide ones) and where each pip step takes packages from.
    pip_files = config_files(interpreter.prefix, io.env)
    io = _masking(io, pip_files)
    console = Console(io.err, quiet=False)
    pip = pip_setup([(n, argv) for n, step in enumerate(plan.steps, 1) for argv in step.commands], pip_files)
    if options.as_json:
        document: dict = {
            "schema_version": SCHEMA_VERSION, "profile": profile_json(choice),
            "policy": {"id": policy.id, "source": policy.source, "reason": choice.reason, "verified": choice.verified,
                       "values": [o.to_json() for o in origins], "set_by": files},
            "pip": pip.to_json(), "plan": plan.to_json(), "dry_run": options.dry_run or not options.yes, "outcome": None,
        }
    else:
        write_wrapped(io.out, io.env, profile_line(choice, capital=True) + "\n" + render_origins(origins, files) + "\n"
                      + (render_pip(pip) + "\n" if plan.steps else "") + render_plan(plan, "envcheck fix"))
    problem = EXIT_FAILED if plan.failing else EXIT_OK

    if options.dry_run or not plan.runnable or (options.as_json and not options.yes):
        if options.as_json:
            io.out.write(answer(document, problem))
        elif options.dry_run and plan.runnable:
            io.out.write("--dry-run: nothing was changed.\n")
        if not plan.steps and not plan.blocked and held:
            snapshots.mark(state, "done")  # a run killed after its last step: nothing was left to do
        return problem
    if not _agreed(io, options, f"Apply these {len(plan.steps)} steps to {python}?"):
        return EXIT_FAILED

    if options.as_json:  # the document comes at the end: what the plan goes by is on stderr before the first change
        io.err.write(render_origins(origins, files) + "\n")
    log, log_path = _open_log(state, "fix", state_what, io.err.redact)  # run_fix's, with the URLs' secrets
    with log:
        console.say(f"The full pip and git output goes to {log_path}")
        console.say(snapshots.before_changes(
            state, interpreter, plan, read_state(cutlass_dir, source.branch) if source is not None else None,
            source.branch if source is not None else "", source.commit if source is not None else "", sources, log,
        ))
        outcome = apply(plan, log, runner=io.runner, console=console, pip_files=pip_files)
        if outcome.interrupted is not None:
            return _interrupted(options, io, document if options.as_json else None, outcome, log_path, python)
        if outcome.ok:
            snapshots.mark(state, "done")
        _, _, again = _gather(io, python, cutlass_dir if options.cutlass_dir else None,
                              Candidates((policy,), choice.reason), options.gpu_capabilities)
        after = _judge(io, again, policy, options.no_gpu)
    remaining = [f for f in after if f.status.is_problem]
    code = EXIT_OK if outcome.ok and not remaining else EXIT_FAILED
    if options.as_json:
        document["outcome"] = outcome.to_json()
        document["log"] = str(log_path)
        document["remaining"] = [{"check": f.id, "status": f.status.value, "found": f.found} for f in remaining]
        io.out.write(answer(document, code))
    else:
        write_wrapped(io.out, io.env, "\n".join(render_outcome(outcome)))
        if remaining:
            write_wrapped(io.out, io.env, "Still failing: " + ", ".join(f"{f.id} ({f.found})" for f in remaining))
        io.out.write(f"Log: {log_path}\nUndo with: {shell.line(('envcheck', 'fix', '--undo', '--python', python))}\n")
    return code


def _interrupted(options: FixOptions, io: Io, document: Optional[dict], outcome: Outcome, log_path: Path,
                 python: str) -> int:
    """Ctrl-C stopped the plan: say what was done, what was not, and how to finish or undo it. Exit 130."""
    undo = shell.line(("envcheck", "fix", "--undo", "--python", python))
    again = undo if options.undo else shell.line(("envcheck", "fix", "--python", python))
    if document is not None:
        document.update(outcome=outcome.to_json(), log=str(log_path), undo=None if options.undo else undo)
        io.out.write(answer(document, EXIT_INTERRUPTED))
    else:
        write_wrapped(io.out, io.env, "\n".join(render_outcome(outcome, again)))
        io.out.write(f"Log: {log_path}\n" + ("" if options.undo else f"Undo with: {undo}\n"))
    io.out.flush()
    return EXIT_INTERRUPTED


def _undo(
    options: FixOptions, io: Io, policy, interpreter: Interpreter, state: Path, sources: PipSources, state_what: str
) -> int:
    taken = snapshots.load(state, interpreter.prefix)
    if taken is None:
        nothing = f"Nothing to undo: envcheck fix has not changed {interpreter.executable} (no snapshot in {state})."
        io.out.write(answer({"schema_version": SCHEMA_VERSION, "plan": None, "snapshot": None, "outcome": None,
                             "message": nothing}, EXIT_OK) if options.as_json else nothing + "\n")
        return EXIT_OK
    current_checkout = read_state(taken.checkout.path, taken.cutlass_branch) if taken.checkout else None
    plan = undo_plan(
        taken, interpreter, state / snapshots.SAVED_WHEELS, sources, current_checkout, pip=pip_for(interpreter)
    )
    if options.as_json:
        document: dict = {"schema_version": SCHEMA_VERSION, "plan": plan.to_json(), "snapshot": str(state / "snapshot.json"),
                          "outcome": None}
    else:
        write_wrapped(io.out, io.env, render_plan(plan, f"envcheck fix --undo (back to {taken.taken_at})"))
    if options.dry_run or not plan.steps or (options.as_json and not options.yes):
        if not plan.steps and not options.dry_run:
            snapshots.retire(state)  # already as recorded: nothing left to undo
        if options.as_json:
            io.out.write(answer(document, EXIT_OK))
        return EXIT_OK
    if not _agreed(io, options, f"Undo: apply these {len(plan.steps)} steps to {interpreter.executable}?"):
        return EXIT_FAILED
    pip_files = config_files(interpreter.prefix, io.env)
    io = _masking(io, pip_files)
    console = Console(io.err)
    log, log_path = _open_log(state, "undo", state_what, io.err.redact)  # run_fix's, with the URLs' secrets
    with log:
        console.say(f"The full pip and git output goes to {log_path}")
        outcome = apply(plan, log, runner=io.runner, console=console, pip_files=pip_files)
    if outcome.interrupted is not None:
        return _interrupted(options, io, document if options.as_json else None, outcome, log_path, interpreter.executable)
    from ..gather.interpreter import gather_interpreter

    left = snapshots.differences(taken, gather_interpreter(interpreter.executable, 60.0))
    if outcome.ok and not left:
        snapshots.retire(state)
    code = EXIT_OK if outcome.ok and not left else EXIT_FAILED
    if options.as_json:
        document["outcome"] = outcome.to_json()
        document["log"] = str(log_path)
        document["differences"] = [{"name": n, "recorded": a, "now": b} for n, a, b in left]
        io.out.write(answer(document, code))
    else:
        write_wrapped(io.out, io.env, "\n".join(render_outcome(outcome)))
        for name, was, now in left:
            write_wrapped(io.out, io.env,
                          f"Differs from the snapshot: {name}: recorded {was or '(absent)'}, now {now or '(absent)'}")
        io.out.write(f"Log: {log_path}\n")
    return code
