"""How a fix run ends: a step that fails, a bug in a step, Ctrl-C; preconditions checked before the first change;
and doctor's promise of what a plain fix will fix, read from the plan fix would make."""

from __future__ import annotations

import io
import re
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import python312
from factsbuilder import facts as facts_good, interpreter

from envcheck.errors import UsageError
from envcheck.commands.fix import FixOptions, Io, run_fix
from envcheck.fix.apply import StepFailed, apply, run_command
from envcheck.fix.steps import Plan, PlannedStep
from envcheck.fix.preflight import preflight
from envcheck.fix.promise import fixable
from envcheck.judge import judge
from envcheck.model import Status


def command_step(name: str, code: int) -> PlannedStep:
    """A step whose command is a real process that exits with `code`."""
    return PlannedStep("pip-install", name, "", ((sys.executable, "-c", f"raise SystemExit({code})"),))


PLAN = Plan("python", (command_step("first", 0), command_step("second", 4), command_step("third", 0)))


def test_a_step_whose_command_fails_stops_the_plan_and_says_which():
    outcome = apply(PLAN, io.StringIO(), runner=run_command)
    assert [(r.step.what, r.ok) for r in outcome.results] == [("first", True), ("second", False)]
    assert "exited with 4" in outcome.failed.message and [s.what for s in outcome.not_done] == ["third"]
    assert not outcome.ok and outcome.interrupted is None


def test_a_bug_inside_a_step_is_not_a_failed_step_it_goes_up():
    """A real bug (here a TypeError from the runner) must reach the CLI's crash handler (exit 3), not be reported
    as a step that failed."""

    def buggy(argv, log, on_line):
        raise TypeError("a bug")

    with pytest.raises(TypeError, match="a bug"):
        apply(PLAN, io.StringIO(), runner=buggy)


def test_only_step_failed_means_failed():
    assert issubclass(StepFailed, Exception) and not issubclass(StepFailed, RuntimeError)


def ctrl_c_at_second_command():
    """A pip runner that succeeds once, then is interrupted (Ctrl-C) in its second command."""
    calls = []

    def runner(argv, log, on_line):
        calls.append(argv)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return 0

    return runner


def test_ctrl_c_in_a_step_ends_the_run_with_the_account():
    outcome = apply(PLAN, io.StringIO(), runner=ctrl_c_at_second_command())
    assert [r.step.what for r in outcome.results] == ["first"]
    assert outcome.interrupted.what == "second" and [s.what for s in outcome.not_done] == ["second", "third"]
    assert not outcome.ok and outcome.to_json()["interrupted"] == "second"


# --------------------------------------------------------------------------------------------------------------
# preflight: every step's preconditions, on the real file system


def fetch_step(dest: Path) -> PlannedStep:
    return PlannedStep("cutlass-fetch", "fetch", "", params=(("dest", str(dest)),))


def write_step(path: Path) -> PlannedStep:
    return PlannedStep("pip-install", "install", "", writes=((str(path), "x"),))


def toolkit_step(prefix: Path) -> PlannedStep:
    return PlannedStep("toolkit-install", "toolkit", "", params=(("prefix", str(prefix)),))


@pytest.mark.parametrize("make_step, layout, words", [
    (fetch_step, "missing", None),
    (fetch_step, "folder", None),
    (fetch_step, "file", "the CUTLASS folder (--cutlass-dir) {p} is a file, not a folder"),
    (fetch_step, "under-file", "the CUTLASS folder (--cutlass-dir) {p} cannot be created: {f} is a file, not a folder"),
    (fetch_step, "read-only", "the CUTLASS folder (--cutlass-dir) {p} cannot be created: {r} is not writable"),
    (toolkit_step, "file", "the toolkit prefix (--toolkit-prefix) {p} is a file, not a folder"),
    (toolkit_step, "missing", None),
    (write_step, "missing", None),
    (write_step, "folder", "{p} is a folder, where envcheck writes a file"),
    (write_step, "under-file", "{p} cannot be written: {f} is a file, not a folder"),
])
def test_preflight_names_what_stops_a_step(tmp_path, make_step, layout, words):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    read_only = tmp_path / "read-only"
    read_only.mkdir(mode=0o555)
    path = {
        "missing": tmp_path / "new" / "deeper",
        "folder": tmp_path,
        "file": blocker,
        "under-file": blocker / "inside",
        "read-only": read_only / "inside",
    }[layout]
    problems = preflight(Plan("python", (command_step("first", 0), make_step(path))))
    if words is None:
        assert problems == ()
    elif layout == "read-only" and __import__("os").geteuid() == 0:
        pytest.skip("root can write anywhere")
    else:
        assert problems == (words.format(p=path, f=blocker, r=read_only),)


# --------------------------------------------------------------------------------------------------------------
# run_fix: preconditions before the first change; Ctrl-C's account


def broken_facts():
    """Python 3.12 with DSL 4.4.0, no apache-tvm-ffi and no cutlass_api: a runnable plan with pip steps (the missing
    required package, then the recipe's DSL), then a fetch."""
    dists = {"torch": "2.11.0+cu130", "nvidia-cutlass-dsl": "4.4.0", "pip": "25.0"}
    return replace(facts_good(), interpreter=interpreter(dists=dists), checkout=None)


def fix_io(runner, facts) -> Io:
    return Io(out=io.StringIO(), err=io.StringIO(), runner=runner, confirm=lambda q: True,
              gather=lambda sources: facts, judge=lambda f, p, no_gpu=False, **kw: judge(f, p, no_gpu=True, **kw))


def test_a_cutlass_dir_that_is_a_file_stops_fix_before_any_pip_call(tmp_path):
    calls = []
    not_a_folder = tmp_path / "cutlass.txt"
    not_a_folder.write_text("")
    options = FixOptions(python=sys.executable, cutlass_dir=str(not_a_folder), yes=True)
    with pytest.raises(UsageError, match=r"--cutlass-dir\) .*cutlass.txt is a file, not a folder"):
        run_fix(options, fix_io(lambda *a: calls.append(a) or 0, broken_facts()))
    assert calls == []


def test_ctrl_c_during_fix_prints_done_not_done_and_the_undo_command(tmp_path):
    fix = fix_io(ctrl_c_at_second_command(), broken_facts())
    fix = replace(fix, env={**fix.env, "COLUMNS": "1000"})  # each account on one line, to be read by its label
    code = run_fix(FixOptions(python=sys.executable, cutlass_dir=str(tmp_path / "cutlass"), yes=True), fix)
    out = fix.out.getvalue()
    assert code == 130
    done, interrupted, not_done = (re.search(rf"^{label}: (.*)$", out, re.M) for label in
                                   ("Done", r"Interrupted \(Ctrl-C\) during", "Not done"))
    assert done and interrupted and not_done, out
    assert done[1].startswith("install ") and not_done[1].startswith(interrupted[1].split(" (it may be")[0])
    assert "fetch CUTLASS" in not_done[1]
    assert f"Undo with: envcheck fix --undo --python {sys.executable}" in out


# --------------------------------------------------------------------------------------------------------------
# doctor's promise


def promised(facts, policy, cutlass_dir=None):
    return fixable(judge(facts, policy, no_gpu=True), facts, policy, cutlass_dir, {})


def test_doctor_promises_what_a_plain_fix_does(policy):
    ids = promised(broken_facts(), policy)
    assert {"cutedsl.version", "nvgemm.deps", "cutlass.checkout", "cutlass-api.install"} <= set(ids)
    assert "cuda.toolkit" not in ids and "cuda.driver" not in ids


def test_doctor_promises_nothing_where_fix_stops_at_once(policy):
    old = replace(broken_facts(), interpreter=replace(broken_facts().interpreter, version=(3, 11, 7)))
    assert promised(old, policy) == ()


def test_doctor_makes_no_plan_where_fix_stops_at_once(policy, monkeypatch):
    """plan_blockers first: doctor's table pays for a plan only where it may print what the plan fixes."""
    import envcheck.fix.planners as planners

    def no_plan(*args, **kwargs):
        raise AssertionError("a plan was made for a target no plan can run on")

    monkeypatch.setattr(planners, "plan_parts", no_plan)
    old = replace(broken_facts(), interpreter=replace(broken_facts().interpreter, version=(3, 11, 7)))
    assert promised(old, policy) == ()
    with pytest.raises(AssertionError, match="a plan was made"):
        promised(broken_facts(), policy)  # where a plan may run, one is made


def test_doctor_never_promises_the_toolkit_which_needs_a_flag(policy):
    facts = facts_good()
    facts = replace(facts, toolkit=replace(facts.toolkit, candidates=()))  # no nvcc at all: cuda.toolkit fails
    toolkit = next(f for f in judge(facts, policy, no_gpu=True) if f.id == "cuda.toolkit")
    assert toolkit.status is not Status.PASS and [s.kind for s in toolkit.remedy.steps] == ["toolkit-install"]
    assert promised(facts, policy) == ()


# --------------------------------------------------------------------------------------------------------------
# A fix killed (its pid only) during the CUTLASS fetch: undo, or the next fix, clears the half-made checkout


GIT_AT_A_GATE = """#!/bin/sh
# git, except that `git fetch` waits while the gate is closed, then runs
sub=""; skip=""
for a in "$@"; do
  if [ -n "$skip" ]; then skip=""; continue; fi
  case "$a" in -c|-C) skip=1;; -*) ;; *) sub="$a"; break;; esac
done
if [ "$sub" = fetch ]; then
  echo $$ >> {reached}
  while [ -e {gate} ]; do sleep 0.05; done
fi
exec {git} "$@"
"""


def working_in(folder: Path) -> list[int]:
    """The live processes whose working directory is folder or inside it (a git fetch building a checkout there)."""
    import os

    found = []
    for entry in Path("/proc").iterdir():
        try:
            cwd = Path(os.readlink(entry / "cwd"))
        except (OSError, ValueError):
            continue
        if entry.name.isdigit() and (cwd == folder or folder in cwd.parents):
            found.append(int(entry.name))
    return found


@pytest.mark.slow
@pytest.mark.skipif(python312() is None, reason="needs a Python >= 3.12 for cutlass_api")
def test_a_fix_killed_during_its_fetch_leaves_nothing_that_undo_or_the_next_fix_does_not_clear(
    tmp_path, wheelhouse, build_backend, cutlass_repo
):
    import os
    import shlex
    import shutil
    import signal
    import time

    from test_fix_apply import broken_env, freeze, profile
    from test_fix_cli import cli
    from test_fix_lock import BOUND_S, Gate, Watched

    python = broken_env(tmp_path, wheelhouse)
    policy_file = profile(tmp_path, cutlass_repo)
    original = freeze(python)
    checkout, partial = tmp_path / "cutlass", tmp_path / "cutlass.envcheck-partial"
    gate = Gate(tmp_path / "gate")
    wrapper = tmp_path / "bin" / "git"
    wrapper.parent.mkdir()
    wrapper.write_text(GIT_AT_A_GATE.format(reached=shlex.quote(str(gate.reached)), gate=shlex.quote(str(gate.path)),
                                            git=shlex.quote(shutil.which("git"))))
    wrapper.chmod(0o755)
    env = {**os.environ, "PATH": f"{wrapper.parent}:{os.environ['PATH']}"}
    common = ["--python", str(python), "--policy", str(policy_file), "--cutlass-dir", str(checkout),
              "--find-links", str(wheelhouse), "--find-links", str(build_backend), "--no-index", "--no-gpu"]
    for then in ("undo", "fix, then undo"):
        gate.reached.unlink(missing_ok=True)
        with gate.closed():
            fix = Watched(*common, "--yes", env=env)
            gate.wait_reached(fix)  # the fetch step runs: the half-made checkout is there, its `git fetch` waits
            assert partial.is_dir() and not checkout.exists()
            os.kill(fix.pid, signal.SIGKILL)  # the envcheck process only: its git fetch is orphaned, not killed
            assert fix.process.wait(timeout=BOUND_S) == -signal.SIGKILL
        deadline = time.monotonic() + BOUND_S
        while working_in(partial) and time.monotonic() < deadline:
            time.sleep(0.05)  # the gate is open: the orphaned fetch ends (nobody reads its output any more)
        assert not working_in(partial) and partial.is_dir(), then  # what the killed fetch left behind
        if then.startswith("fix"):
            done = cli(*common, "--yes", env=env)
            assert done.returncode == 0, done.stdout + done.stderr
            assert not partial.exists() and (checkout / "python" / "cutlass_api").is_dir()
        done = cli("--undo", "--yes", "--python", str(python), env=env)
        assert done.returncode == 0, then + done.stdout + done.stderr
        assert not partial.exists() and not checkout.exists(), then + done.stdout
        assert freeze(python) == original, then
