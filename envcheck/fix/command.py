"""`envcheck fix`: gather, judge, plan, show the plan, and apply it only when asked; `--undo` gives the environment back.

run_fix is the one function the CLI calls; it returns the exit code. Everything it touches from outside (the process
runner, the gatherer, the judge, the confirmation prompt, the output streams) can be passed in.
"""

from __future__ import annotations

import datetime
import json
import os
import shlex
import shutil
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Mapping, Optional, Sequence, TextIO

from .. import proc
from ..errors import EXIT_FAILED, EXIT_OK, UsageError
from ..model import Facts, Finding, Interpreter
from ..paths import cache_dir, default_cutlass_dir, folder_origin, usable_folder
from ..redact import RedactedStream, Redactor, has_credentials
from . import snapshot as snapshots
from .apply import Console, Outcome, Runner, apply, run_command
from .cutlass import checked_url, read_state
from ..target import require_interpreter, resolve_python
from .pip import PipSources, pip_prefix, redact_argv, sources_from_flags
from .plan import Plan, PlanOptions, make_plan

__all__ = ["FixOptions", "run_fix", "find_interpreters"]


@dataclass(frozen=True)
class FixOptions:
    python: Optional[str] = None
    policy: Optional[Path] = None
    profile: Optional[str] = None  # a built-in profile id (--profile)
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
    break_system_packages: bool = False
    bundle: Optional[str] = None  # a bundle folder, FILE.tar or its parts: packages and CUTLASS, with no network


@dataclass
class Io:
    """The outside world of one run, replaceable in tests."""

    out: TextIO = field(default_factory=lambda: sys.stdout)
    err: TextIO = field(default_factory=lambda: sys.stderr)
    env: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    runner: Runner = run_command
    confirm: Optional[Callable[[str], bool]] = None  # None: ask on the terminal when there is one
    gather: Optional[Callable[..., Facts]] = None
    judge: Optional[Callable[..., tuple[Finding, ...]]] = None


def _pip(interpreter: Interpreter) -> tuple[str, ...]:
    """The target's own pip, or envcheck's driving it with --python (a venv made without pip)."""
    if interpreter.dist("pip") is not None:
        return pip_prefix(interpreter.executable, True)
    try:
        from importlib.metadata import version

        own = tuple(int(x) for x in version("pip").split(".")[:2])
    except Exception:  # noqa: BLE001 - no pip next to envcheck, or an odd version
        own = (0, 0)
    if own < (22, 3):
        raise UsageError(
            f"--python {interpreter.executable}: this interpreter has no pip, and envcheck's own pip is too old to "
            f"drive it (pip --python needs 22.3). Run `{interpreter.executable} -m ensurepip` first."
        )
    return pip_prefix(interpreter.executable, False)


def _externally_managed(interpreter: Interpreter) -> bool:
    major, minor = interpreter.version[:2]
    marker = Path(interpreter.base_prefix) / "lib" / f"python{major}.{minor}" / "EXTERNALLY-MANAGED"
    return not interpreter.in_venv and marker.is_file()


def _gather(io: Io, python: str, cutlass_dir: Optional[str], policy) -> Facts:
    from ..gather import Sources, gather

    return (io.gather or gather)(Sources.for_policy(python, policy, cutlass_dir, io.env))


def _judge(io: Io, facts: Facts, policy, no_gpu: bool) -> tuple[Finding, ...]:
    if io.judge is not None:
        return io.judge(facts, policy, no_gpu=no_gpu)
    from ..judge import judge

    return judge(facts, policy, no_gpu=no_gpu)


def find_interpreters(env: Mapping[str, str], timeout: float = 5.0) -> tuple[tuple[str, str], ...]:
    """(path, version) of the Python interpreters on this machine, newest first: for the manual python advice."""
    candidates: list[str] = []
    path = env.get("PATH", "")
    for minor in range(20, 7, -1):
        found = shutil.which(f"python3.{minor}", path=path)
        if found:
            candidates.append(found)
    home = Path(env.get("HOME", os.path.expanduser("~")))
    for pattern in (".pyenv/versions/*/bin/python3", ".local/share/uv/python/*/bin/python3"):
        candidates += sorted(str(p) for p in home.glob(pattern))
    candidates += [p for p in ("/usr/bin/python3", "/usr/local/bin/python3") if os.path.isfile(p)]
    seen, out = set(), []
    for candidate in candidates:
        real = os.path.realpath(candidate)
        if real in seen:
            continue
        seen.add(real)
        try:
            done = proc.run([candidate, "-I", "-c", "import sys; print('%d.%d.%d' % sys.version_info[:3])"], timeout)
        except OSError:
            continue
        if done.returncode == 0 and done.stdout.strip():
            out.append((candidate, done.stdout.strip()))

    def key(item: tuple[str, str]) -> tuple[int, ...]:
        return tuple(int(x) for x in item[1].split(".") if x.isdigit())

    return tuple(sorted(out, key=key, reverse=True))


# --------------------------------------------------------------------------------------------------------------
# Showing a plan


def _quote(argv: Sequence[str]) -> str:
    return " ".join(shlex.quote(a) for a in redact_argv(argv))


def render_plan(plan: Plan, title: str) -> str:
    lines = []
    if plan.steps:
        lines.append(f"{title}: {len(plan.steps)} step{'s' if len(plan.steps) != 1 else ''} for {plan.target}")
        for index, step in enumerate(plan.steps, 1):
            lines.append(f"  {index}. {step.what}")
            if step.why:
                lines.append(f"     why: {step.why}")
            for path, _ in step.writes + step.writes_after:
                lines.append(f"     writes {path}")
            for argv in step.commands:
                lines.append(f"     $ {_quote(argv)}")
    elif not plan.manual and not plan.blocked:
        lines.append(f"{title}: nothing to do for {plan.target}")
    if plan.offered:
        lines.append("Offered (applied only with --toolkit):")
        for step in plan.offered:
            lines.append(f"  - {step.what}")
            if step.why:
                lines.append(f"    why: {step.why}")
            for argv in step.commands:
                lines.append(f"    $ {_quote(argv)}")
    if plan.manual:
        lines.append("Needs you (envcheck does not try these):")
        for item in plan.manual:
            lines.append(f"  - {item.check_id}: {item.text}")
            for argv in item.commands:
                lines.append(f"      $ {' '.join(shlex.quote(a) for a in argv)}")
    for reason in plan.blocked:
        lines.append(f"Stopped before any change: {reason}")
    return "\n".join(lines)


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


def _open_log(state: Path, verb: str, what: str) -> tuple[TextIO, Path]:
    """A new log in the state folder: its owner's only, secrets masked (pip's and git's output name index URLs)."""
    folder = usable_folder(state / "logs", what, create=True)
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    path = folder / f"{verb}-{stamp}-{os.getpid()}.log"
    try:
        handle = open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600), "a", encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"{what}: cannot write the log {path}: {exc.strerror or exc}") from None
    return RedactedStream(handle), path


def _no_credentials(url: str, flag_value: Optional[str]) -> str:
    """The CUTLASS URL, refused when it carries a secret: git would keep it in the checkout's .git/config."""
    if has_credentials(url):
        where = "--cutlass-url" if flag_value else "the policy's cutlass.url"
        raise UsageError(
            f"{where} {Redactor(paths=False)(url)!r}: carries credentials, which git would keep in the checkout's "
            "configuration and its output would show; fetch over ssh:// with your key, or from a local mirror "
            "(--cutlass-url DIR)"
        )
    return url


def _pip_names(argv: Sequence[str]) -> list[str]:
    from packaging.requirements import Requirement

    if "--" not in argv:
        return []
    names = []
    for text in argv[list(argv).index("--") + 1:]:
        try:
            names.append(Requirement(text).name)
        except Exception:  # noqa: BLE001 - a distribution name for uninstall
            names.append(text)
    return names


def save_originals(interpreter: Interpreter, plan: Plan, saved: Path, log: TextIO) -> None:
    """Pack the installed distributions into wheels before the first change, so undo needs no network.

    Every distribution up to SMALL bytes is packed (pip may upgrade any dependency); bigger ones only when a step
    names them (up to snapshot.MAX_SAVED_BYTES): a CUDA build of torch is left to the package sources.
    """
    from ..model import canonical_name

    named = {canonical_name(n) for step in plan.steps for argv in step.commands for n in _pip_names(argv)}
    for dist in snapshots._first_copies(interpreter.distributions).values():
        if dist.editable or dist.name in ("pip",):
            continue
        limit = snapshots.MAX_SAVED_BYTES if dist.name in named else SMALL
        wheel = snapshots.save_wheel(dist, saved, max_bytes=limit)
        log.write(f"# saved {dist.name} {dist.version}: {wheel or 'not packed (too big: undo takes it from the sources)'}\n")


SMALL = 64 * 1024 * 1024


def _account(outcome: Outcome) -> list[str]:
    lines = []
    done = [r for r in outcome.results if r.ok]
    skipped = [r for r in outcome.results if not r.ok and r.step.optional]
    if done:
        lines.append("Done: " + "; ".join(r.step.what for r in done))
    for r in skipped:
        lines.append(f"Not done (optional): {r.step.what}: {r.message}")
    failed = outcome.failed
    if failed is not None:
        lines.append(f"Failed: {failed.step.what}: {failed.message}")
    if outcome.not_done:
        lines.append("Not done: " + "; ".join(s.what for s in outcome.not_done))
        lines.append("Run `envcheck fix` again to finish the job once the cause is fixed.")
    return lines


def run_fix(options: FixOptions, io: Optional[Io] = None) -> int:
    io = io or Io()
    # pip's output, git's and fix's own carry index URLs: whatever reaches the user or the log is masked.
    io = replace(io, out=RedactedStream(io.out), err=RedactedStream(io.err))
    from ..policy import resolve

    python = resolve_python(options.python)
    policy = resolve(options.policy, profile=options.profile)
    sources = sources_from_flags(options.find_links, options.index_url, options.no_index)
    cutlass_url = checked_url(_no_credentials(options.cutlass_url or policy.cutlass.url, options.cutlass_url), "--cutlass-url")
    offline = None
    if options.bundle is not None:
        from .offline import open_for_fix

        if options.undo or options.find_links or options.index_url or options.no_index or options.cutlass_url:
            raise UsageError("--bundle brings its own packages and CUTLASS: it takes no --undo, --find-links, "
                             "--index-url, --no-index or --cutlass-url")
        offline = open_for_fix(Path(options.bundle), policy, cache_dir(io.env))
        io.err.write(offline.summary + "\n")
        sources, cutlass_url = offline.sources, offline.cutlass_url or cutlass_url
        options = replace(options, no_deps=True)  # the lock is the whole closure: install exactly it
    if options.undo and (options.toolkit or options.no_deps):
        raise UsageError("--undo cannot be combined with --toolkit or --no-deps")
    if options.cutlass_dir is not None and (not options.cutlass_dir or options.cutlass_dir.startswith("-")):
        raise UsageError(f"--cutlass-dir {options.cutlass_dir!r}: expected a folder")

    facts = _gather(io, python, options.cutlass_dir, policy)
    interpreter = require_interpreter(python, facts.interpreter)
    if offline is not None:
        offline.check_target(interpreter)
    state_what = " ".join(filter(None, (folder_origin(io.env, "ENVCHECK_STATE_DIR"), "(envcheck fix's state folder)")))
    # A run that may change things needs its state folder before the first change: checked (made) here.
    state = usable_folder(
        snapshots.state_dir(interpreter.prefix, io.env), state_what, create=(options.yes or options.undo) and not options.dry_run
    )
    # pip refuses to change an interpreter its distribution manages (PEP 668) unless told; the flag is the consent,
    # passed to pip only where it matters.
    sources = replace(sources, break_system_packages=options.break_system_packages and _externally_managed(interpreter))
    if options.undo:
        return _undo(options, io, policy, interpreter, state, sources, state_what)

    checkout = facts.checkout
    if options.cutlass_dir:
        cutlass_dir = str(Path(options.cutlass_dir).expanduser().absolute())
    elif checkout is not None and getattr(checkout, "path", None):
        cutlass_dir = str(Path(checkout.path).absolute())
    else:
        cutlass_dir = str(default_cutlass_dir(io.env).absolute())
    toolkit_prefix = options.toolkit_prefix or str(cache_dir(io.env) / f"cuda-{policy.driver_cuda}")
    findings = _judge(io, facts, policy, options.no_gpu)
    needs_python = any(f.id == "python.version" and f.status.is_problem for f in findings)
    plan = make_plan(findings, facts, policy, PlanOptions(
        python=python,
        pip=_pip(interpreter),
        state_dir=str(state),
        cutlass_dir=cutlass_dir,
        cutlass_url=cutlass_url,
        sources=sources,
        no_deps=options.no_deps,
        toolkit=options.toolkit,
        toolkit_prefix=str(Path(toolkit_prefix).expanduser().absolute()),
        interpreters=find_interpreters(io.env) if needs_python else (),
        locked=offline.locked if offline is not None else (),
    ))
    console = Console(io.err, quiet=False)
    if options.as_json:
        document: dict = {
            "policy": {"id": policy.id, "source": policy.source},
            "plan": plan.to_json(), "dry_run": options.dry_run or not options.yes, "outcome": None,
        }
    else:
        io.out.write(f"Policy: {policy.id} ({policy.source})\n" + render_plan(plan, "envcheck fix") + "\n")
    problem = EXIT_FAILED if plan.failing else EXIT_OK

    if options.dry_run or not plan.runnable or (options.as_json and not options.yes):
        if options.as_json:
            io.out.write(json.dumps(document, indent=2) + "\n")
        elif options.dry_run and plan.runnable:
            io.out.write("--dry-run: nothing was changed.\n")
        if not plan.steps and not plan.blocked and not options.dry_run:
            snapshots.mark(state, "done")  # a run killed after its last step: nothing was left to do
        return problem
    if not options.yes and not _confirm(io, f"Apply these {len(plan.steps)} steps to {python}?"):
        io.err.write("Nothing was changed (run with --yes to apply without asking).\n")
        return EXIT_FAILED

    log, log_path = _open_log(state, "fix", state_what)
    with log:
        console.say(f"The full pip and git output goes to {log_path}")
        existing = snapshots.load(state)
        if existing is None or existing.status == "done":
            taken = snapshots.record(
                interpreter,
                read_state(cutlass_dir, policy.cutlass.branch),
                policy.cutlass.branch,
                created=(plan_prefix(plan),) if plan_prefix(plan) else (),
                sources=sources,
                cutlass_commit=policy.cutlass.commit,
            )
            save_originals(interpreter, plan, state / snapshots.SAVED_WHEELS, log)
            path = snapshots.save(taken, state)
            console.say(f"Recorded the environment before any change: {path}")
        else:
            console.say(f"Keeping the snapshot of {existing.taken_at} (an earlier fix did not finish)")
        outcome = apply(plan, log, runner=io.runner, console=console)
        if outcome.ok:
            snapshots.mark(state, "done")
        after = _judge(io, _gather(io, python, cutlass_dir if options.cutlass_dir else None, policy), policy, options.no_gpu)
    remaining = [f for f in after if f.status.is_problem]
    if options.as_json:
        document["outcome"] = outcome.to_json()
        document["log"] = str(log_path)
        document["remaining"] = [{"check": f.id, "status": f.status.value, "found": f.found} for f in remaining]
        io.out.write(json.dumps(document, indent=2) + "\n")
    else:
        for line in _account(outcome):
            io.out.write(line + "\n")
        if remaining:
            io.out.write("Still failing: " + ", ".join(f"{f.id} ({f.found})" for f in remaining) + "\n")
        io.out.write(f"Log: {log_path}\nUndo with: envcheck fix --undo --python {shlex.quote(python)}\n")
    return EXIT_OK if outcome.ok and not remaining else EXIT_FAILED


def plan_prefix(plan: Plan) -> str:
    return next((s.param("prefix") for s in plan.steps if s.kind == "toolkit-install"), "")


def _undo(
    options: FixOptions, io: Io, policy, interpreter: Interpreter, state: Path, sources: PipSources, state_what: str
) -> int:
    taken = snapshots.load(state)
    if taken is None:
        io.out.write(f"Nothing to undo: envcheck fix has not changed {interpreter.executable} (no snapshot in {state}).\n")
        return EXIT_OK
    current_checkout = read_state(taken.checkout.path, taken.cutlass_branch) if taken.checkout else None
    plan = snapshots.undo_plan(
        taken, interpreter, state / snapshots.SAVED_WHEELS, sources, current_checkout, pip=_pip(interpreter)
    )
    if options.as_json:
        document: dict = {"plan": plan.to_json(), "snapshot": str(state / "snapshot.json"), "outcome": None}
    else:
        io.out.write(render_plan(plan, f"envcheck fix --undo (back to {taken.taken_at})") + "\n")
    if options.dry_run or not plan.steps or (options.as_json and not options.yes):
        if not plan.steps and not options.dry_run:
            snapshots.retire(state)  # already as recorded: nothing left to undo
        if options.as_json:
            io.out.write(json.dumps(document, indent=2) + "\n")
        return EXIT_OK
    if not options.yes and not _confirm(io, f"Undo: apply these {len(plan.steps)} steps to {interpreter.executable}?"):
        io.err.write("Nothing was changed (run with --yes to apply without asking).\n")
        return EXIT_FAILED
    console = Console(io.err)
    log, log_path = _open_log(state, "undo", state_what)
    with log:
        console.say(f"The full pip and git output goes to {log_path}")
        outcome = apply(plan, log, runner=io.runner, console=console)
    from ..gather.interpreter import gather_interpreter

    left = snapshots.differences(taken, gather_interpreter(interpreter.executable, 60.0))
    if outcome.ok and not left:
        snapshots.retire(state)
    if options.as_json:
        document["outcome"] = outcome.to_json()
        document["log"] = str(log_path)
        document["differences"] = [{"name": n, "recorded": a, "now": b} for n, a, b in left]
        io.out.write(json.dumps(document, indent=2) + "\n")
    else:
        for line in _account(outcome):
            io.out.write(line + "\n")
        for name, was, now in left:
            io.out.write(f"Differs from the snapshot: {name}: recorded {was or '(absent)'}, now {now or '(absent)'}\n")
        io.out.write(f"Log: {log_path}\n")
    return EXIT_OK if outcome.ok and not left else EXIT_FAILED
