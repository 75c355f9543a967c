"""apply: run a plan's steps in order, with progress, the full pip and git output in a log, and a clear account.

The process runner is passed in (tests give their own); no command goes through a shell. A step that fails stops
the plan, unless it is optional; the Outcome says which steps were done and which were not. A step fails by raising
StepFailed (a command's exit status, git's refusal or error); any other exception is a bug in envcheck and goes up.
Every step is idempotent, so running the fixer again after a failure or a kill finishes the job.
"""

from __future__ import annotations

import os
import sys
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional, Sequence, TextIO

from .. import piprun, shell
from ..atomic import replace_text
from ..cutlass_fetch import CheckoutRefused, CheckoutState, fetch
from ..redact import redact_argv
from . import failure, manifest, statelock
from .byproducts import record_byproducts
from .failure import Cause
from .pipconfig import ConfigFile, configured_constraint
from .steps import Plan, PlannedStep
from .undo import restore

__all__ = ["Runner", "run_command", "StepFailed", "StepResult", "Outcome", "Console", "apply"]

# (argv, log, on_line) -> exit status
Runner = Callable[[Sequence[str], TextIO, Callable[[str], None]], int]
# Lines of pip's output worth showing while it works; everything goes to the log.
_PIP_PROGRESS = ("Collecting", "Processing", "Building", "Installing collected", "Successfully", "Uninstalling",
                 "Attempting uninstall", "Found existing", "Obtaining", "Requirement already satisfied: ")


def run_command(argv: Sequence[str], log: TextIO, on_line: Callable[[str], None], timeout: float = 3600.0) -> int:
    """Run argv (never through a shell), copy its output to the log line by line, return its exit status."""
    log.write(f"$ {shell.line(redact_argv(argv))}\n")
    log.flush()
    # without PIP_CONFIG_FILE: with --isolated, pip reads only the machine-wide configuration files (piprun)
    env = piprun.environment(os.environ, PIP_NO_INPUT="1", PYTHONUNBUFFERED="1", GIT_TERMINAL_PROMPT="0")

    def line(text: str) -> None:
        log.write(text + "\n")
        on_line(text)

    # In an empty, private folder of its own, an index URL's secret in a file there (piprun.run). It keeps the
    # target's lock (statelock) until it ends: a pip that outlives a killed envcheck still holds off the next run.
    try:
        end = piprun.run(argv, timeout, env=env, merge_stderr=True, on_line=line, pass_fds=statelock.inherited())
    except OSError as exc:
        log.write(f"could not start: {exc}\n")
        return 127
    if end.timed_out:
        log.write(f"killed after {timeout:.0f} s (its whole process group)\n")
    status = end.returncode if end.returncode is not None else -9
    log.write(f"(exit {status})\n")
    log.flush()
    return status


class StepFailed(Exception):
    """A step did not do its job for a reason outside envcheck; the message says why, the log has the detail, and
    the cause (when a tool failed) what the tool said and what that means."""

    def __init__(self, message: str, cause: Optional[Cause] = None):
        super().__init__(message)
        self.cause = cause


@dataclass(frozen=True)
class StepResult:
    step: PlannedStep
    ok: bool
    message: str = ""
    seconds: float = 0.0
    cause: Optional[Cause] = None  # a failed tool's own words, read by fix/failure

    def to_json(self) -> dict:
        return {"what": self.step.what, "ok": self.ok, "message": self.message, "seconds": round(self.seconds, 2),
                "cause": self.cause.to_json() if self.cause is not None else None}


@dataclass(frozen=True)
class Outcome:
    results: tuple[StepResult, ...]
    not_done: tuple[PlannedStep, ...]  # the interrupted step first, when there was one
    interrupted: Optional[PlannedStep] = None  # the step Ctrl-C stopped: it may be half done

    @property
    def failed(self) -> Optional[StepResult]:
        return next((r for r in self.results if not r.ok and not r.step.optional), None)

    @property
    def ok(self) -> bool:
        return self.failed is None and not self.not_done and self.interrupted is None

    def to_json(self) -> dict:
        return {
            "ok": self.ok,
            "interrupted": self.interrupted.what if self.interrupted is not None else None,
            "done": [r.to_json() for r in self.results],
            "not_done": [s.what for s in self.not_done],
        }


class Console:
    """Progress for people, on stderr: a line per step, and what long steps are doing."""

    def __init__(self, stream: TextIO = sys.stderr, quiet: bool = False):
        self.stream, self.quiet = stream, quiet
        self._last_fraction: dict[str, int] = {}

    def say(self, text: str) -> None:
        if not self.quiet:
            print(text, file=self.stream, flush=True)

    def step(self, index: int, total: int, step: PlannedStep) -> None:
        self.say(f"[{index}/{total}] {step.what}")

    def pip_line(self, line: str) -> None:
        text = line.strip()
        if text.startswith(_PIP_PROGRESS) and not text.startswith("Requirement already satisfied"):
            self.say(f"      {text[:160]}")

    def failed(self, exc: "StepFailed", optional: bool) -> None:
        self.say(("      not done (optional, the plan goes on): " if optional else "      FAILED: ") + str(exc))
        if exc.cause is not None:
            for line in exc.cause.lines:
                self.say(f"      {exc.cause.tool}: {line}")

    def fetch(self, stage: str, fraction: Optional[float]) -> None:
        if fraction is None:
            self.say(f"      {stage}")
            return
        tenth = int(fraction * 10)
        if self._last_fraction.get(stage) != tenth:
            self._last_fraction[stage] = tenth
            self.say(f"      {stage}: {tenth * 10}%")


def _write_files(files: Sequence[tuple[str, str]]) -> None:
    for path, text in files:
        replace_text(path, text)


class _GitLines:
    """The fix log, keeping the last lines git printed into it (cutlass_fetch writes them as `git: ...`)."""

    def __init__(self, log: TextIO):
        self.log, self.lines = log, deque(maxlen=200)

    def write(self, text: str) -> int:
        self.lines.extend(line for line in text.splitlines() if line.startswith("git: "))
        return self.log.write(text)

    def flush(self) -> None:
        self.log.flush()


def _git_error() -> type:
    from git.exc import GitError  # GitPython, only once a fetch runs

    return GitError


def _run_step(step: PlannedStep, runner: Runner, log: TextIO, console: Console, pip_files: Sequence[ConfigFile]) -> str:
    """Run one step; return a short account, raise StepFailed with the reason when it fails."""
    _write_files(step.writes)
    if step.kind == "cutlass-fetch":
        log.write(f"# fetch {step.param('url')} {step.param('commit')} -> {step.param('dest')}\n")
        git_log = _GitLines(log)
        try:
            result = fetch(
                step.param("dest"), step.param("url"), step.param("branch"), step.param("commit"), step.param("subdir"),
                progress=console.fetch, log=git_log,  # type: ignore[arg-type]
            )
        except CheckoutRefused as exc:
            raise StepFailed(str(exc)) from None
        except (OSError, _git_error()) as exc:  # git's failure is the step's failure; the log has the detail
            log.write(f"fetch failed: {type(exc).__name__}: {exc}\n")
            cause = failure.read("git", [*git_log.lines, *_stderr_lines(exc)])
            said = cause.text() or git_error_line(exc)
            raise StepFailed(f"the fetch from {step.param('url')} failed: {said}", cause) from None
        return f"{result.action}: {result.path} at {result.commit[:12]} ({result.bytes_received / 1e6:.2f} MB in {result.seconds:.1f} s)"
    if step.kind == "checkout-restore":
        import json

        state = CheckoutState.from_json(json.loads(step.param("state")))
        return restore(state, step.param("branch"), log, commit=step.param("commit"))
    if step.kind == "remove-path":
        return manifest.remove_if_untouched(step.param("path"))
    for argv in step.commands:
        said: deque[str] = deque(maxlen=400)  # the tool's last lines: what it said before it failed

        def on_line(text: str) -> None:
            said.append(text)
            console.pip_line(text)

        status = runner(argv, log, on_line)
        if status != 0:
            constraints = [a.split("=", 1)[1] for a in argv if a.startswith("--constraint=")]
            cause = failure.read(failure.tool_of(argv), said, constraints, configured_constraint(argv, pip_files))
            why = f": {cause.text()}" if cause.text() else ""
            raise StepFailed(f"{Path(argv[0]).name} {' '.join(argv[1:4])} ... exited with {status}{why}", cause)
    _write_files(step.writes_after)
    if step.kind == "toolkit-install":
        manifest.write(step.param("prefix"))  # what undo may remove, and nothing else
    checkout = step.param("checkout") if step.kind == "cutlass-install" else ""
    if checkout and os.path.isdir(os.path.join(checkout, ".git")):
        record_byproducts(checkout)  # the files the install wrote: undo may remove those, and no others
    return ""


def _stderr_lines(exc: BaseException) -> list[str]:
    """What a GitCommandError carries of git's stderr (a checkout's; a fetch's went to the log)."""
    stderr = getattr(exc, "stderr", None)
    if isinstance(stderr, bytes):
        stderr = stderr.decode("utf-8", "replace")
    return [ln.strip().removeprefix("stderr:").strip().strip("'") for ln in (stderr or "").splitlines()]


def git_error_line(exc: BaseException) -> str:
    """The exception's own last line, for a git failure whose output said nothing."""
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    return lines[-1][:300] if lines else type(exc).__name__


def apply(
    plan: Plan,
    log: TextIO,
    *,
    runner: Runner = run_command,
    console: Optional[Console] = None,
    before_step: Optional[Callable[[PlannedStep], None]] = None,
    pip_files: Sequence[ConfigFile] = (),
) -> Outcome:
    """Run the plan's steps in order. before_step runs first for each (the snapshot packs what the step replaces).
    pip_files: the pip configuration files found (pipconfig.config_files), so that a failure names the one it came from.

    Ctrl-C during a step ends the run with an Outcome that names the interrupted step; every step is idempotent, so
    running the plan again finishes it."""
    console = console or Console(quiet=True)
    results: list[StepResult] = []
    try:
        return _steps(plan.steps, results, log, runner, console, before_step, pip_files)
    except KeyboardInterrupt:  # Ctrl-C, in a step or between two: the account of what was done and what was not
        left = plan.steps[len(results):]
        if left:
            log.write(f"## interrupted during step {len(results) + 1}\n")
            log.flush()
        return Outcome(tuple(results), left, interrupted=left[0] if left else None)


def _steps(
    steps: tuple[PlannedStep, ...], results: list[StepResult], log: TextIO, runner: Runner, console: Console,
    before_step: Optional[Callable[[PlannedStep], None]], pip_files: Sequence[ConfigFile],
) -> Outcome:
    for index, step in enumerate(steps, 1):
        console.step(index, len(steps), step)
        log.write(f"\n## step {index}/{len(steps)}: {step.what}\n")
        log.flush()
        started = time.monotonic()
        try:
            if before_step is not None:
                before_step(step)
            message = _run_step(step, runner, log, console, pip_files)
        except StepFailed as exc:
            seconds = time.monotonic() - started
            results.append(StepResult(step, False, str(exc), seconds, exc.cause))
            log.write(f"## step {index} failed: {exc}\n")
            log.flush()
            console.failed(exc, step.optional)
            if step.optional:
                continue
            return Outcome(tuple(results), steps[index:])
        seconds = time.monotonic() - started
        results.append(StepResult(step, True, message, seconds))
        log.write(f"## step {index} done in {seconds:.1f} s {message}\n")
        log.flush()
        console.say(f"      done in {seconds:.1f} s" + (f": {message}" if message else ""))
    return Outcome(tuple(results), ())
