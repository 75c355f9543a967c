"""Two envcheck runs that meet on one target lose nothing: one fix or undo at a time (a flock in the target's state
folder, dropped by the kernel when its holder dies, kept by the pip it started), real concurrent `envcheck fix`
processes on a real venv, a kill -9 of one of them; and the state folder is the user's alone: no log is written
through a planted link, no folder others can write is used."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import textwrap
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Callable

import pytest
from conftest import git, python312

from envcheck.errors import UsageError
from envcheck.fix import statelock
from envcheck.fix.snapshot import state_dir

REPO = Path(__file__).resolve().parent.parent
BOUND_S = 180  # how long a step of these tests may take at most on a busy machine: a bound, not a measure


# --------------------------------------------------------------------------------------------------------------
# Real processes, and a gate that holds one of them at a known point


class Gate:
    """A file that holds a process at a known point while it exists: the process writes its pid to `reached` when
    it gets there, then waits until the file is gone."""

    def __init__(self, folder: Path):
        folder.mkdir(parents=True, exist_ok=True)
        self.path, self.reached = folder / "closed", folder / "reached"

    @contextmanager
    def closed(self):
        self.path.write_text("")
        try:
            yield self
        finally:
            self.path.unlink(missing_ok=True)

    def open(self) -> None:
        self.path.unlink(missing_ok=True)

    def wait_reached(self, *watched: "Watched") -> list[int]:
        """The pids that reached the gate, once one did; fails if every watched process ended first."""
        deadline = time.monotonic() + BOUND_S
        while time.monotonic() < deadline:
            if self.reached.exists() and self.reached.read_text().strip():
                return [int(line) for line in self.reached.read_text().split()]
            ended = [w for w in watched if w.process.poll() is not None]
            if watched and len(ended) == len(watched):
                pytest.fail("every process ended before the gate:\n" + "\n".join(w.output() for w in ended))
            time.sleep(0.05)
        pytest.fail(f"nothing reached the gate within {BOUND_S} s")


class Watched:
    """A real `envcheck fix` process; its output is collected as it comes, so that a test can wait for a line."""

    def __init__(self, *args: str, env: dict | None = None):
        self.process = subprocess.Popen([sys.executable, "-m", "envcheck", "fix", *args], stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True, cwd=REPO, env=env or os.environ.copy(),
                                        stdin=subprocess.DEVNULL)
        self.pid = self.process.pid
        self.out: list[str] = []
        self.err: list[str] = []
        self._readers = [threading.Thread(target=self._read, args=(s, into), daemon=True)
                         for s, into in ((self.process.stdout, self.out), (self.process.stderr, self.err))]
        for reader in self._readers:
            reader.start()

    @staticmethod
    def _read(stream, into: list) -> None:
        for line in stream:
            into.append(line)

    def output(self) -> str:
        return f"[pid {self.pid}, exit {self.process.poll()}]\n" + "".join(self.out) + "".join(self.err)

    def wait_for(self, pattern: str) -> re.Match:
        """The first stderr line that matches; fails when the process ends without one."""
        deadline = time.monotonic() + BOUND_S
        while time.monotonic() < deadline:
            for line in list(self.err):
                found = re.search(pattern, line)
                if found:
                    return found
            if self.process.poll() is not None:
                for reader in self._readers:
                    reader.join(5)
                found = next((m for m in (re.search(pattern, line) for line in self.err) if m), None)
                if found:
                    return found
                pytest.fail(f"ended without printing {pattern!r}:\n{self.output()}")
            time.sleep(0.05)
        pytest.fail(f"no line {pattern!r} within {BOUND_S} s:\n{self.output()}")

    def finish(self) -> tuple[int, str]:
        code = self.process.wait(timeout=BOUND_S)
        for reader in self._readers:
            reader.join(5)
        return code, self.output()


def holding(state: Path, gate: Gate, child: bool = False) -> subprocess.Popen:
    """A real process (leading a process group, as envcheck does in a terminal) that takes the target's lock as fix
    does and keeps it while the gate is closed; with child, the waiting is done by a command it runs the way fix
    runs pip (apply.run_command). Whoever waits at the gate writes its pid to gate.reached."""
    wait = (f"import os, time\nopen({str(gate.reached)!r}, 'a').write(str(os.getpid()) + '\\n')\n"
            f"while os.path.exists({str(gate.path)!r}): time.sleep(0.02)\n")
    body = f"run_command([sys.executable, '-c', WAIT], io.StringIO(), lambda line: None)" if child else "exec(WAIT)"
    script = textwrap.dedent(f"""\
        import io, sys
        from pathlib import Path
        from envcheck.fix import statelock
        from envcheck.fix.apply import run_command
        WAIT = {wait!r}
        with statelock.hold(Path({str(state)!r}), "fix", target="/venv/bin/python", timeout=0, say=print):
            {body}
        """)
    return subprocess.Popen([sys.executable, "-c", script], cwd=REPO, start_new_session=True)


def waiting_lines() -> tuple[list[str], Callable[[str], None]]:
    """What a waiting run says, collected."""
    lines: list[str] = []
    return lines, lines.append


# --------------------------------------------------------------------------------------------------------------
# The lock itself, between real processes


def test_a_second_run_says_whom_it_waits_for_then_exits_2_naming_them(tmp_path):
    gate = Gate(tmp_path / "gate")
    with gate.closed():
        holder = holding(tmp_path, gate)
        gate.wait_reached()
        said, say = waiting_lines()
        with pytest.raises(UsageError) as refused:
            with statelock.hold(tmp_path, "undo", target="/venv/bin/python", timeout=0.5, say=say):
                pytest.fail("took a lock another process holds")
        assert len(said) == 1 and said[0].startswith(
            f"waiting for envcheck fix (pid {holder.pid}, started ") and " on /venv/bin/python" in said[0], said
        message = str(refused.value)
        assert f"envcheck fix (pid {holder.pid}, started " in message and "is changing /venv/bin/python" in message
        assert f"kill {holder.pid}" in message and "--lock-timeout" in message
        assert statelock.running(tmp_path) == statelock.Holder(holder.pid, os.uname().nodename, "fix",
                                                                statelock.running(tmp_path).started)
    assert holder.wait(timeout=BOUND_S) == 0
    assert statelock.running(tmp_path) is None  # released when its block ended


def test_the_kernel_drops_the_lock_of_a_run_killed_with_sigkill(tmp_path):
    gate = Gate(tmp_path / "gate")
    with gate.closed():
        holder = holding(tmp_path, gate)
        gate.wait_reached()
        assert statelock.running(tmp_path) is not None
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=BOUND_S)
        said, say = waiting_lines()
        with statelock.hold(tmp_path, "fix", target="/venv/bin/python", timeout=0, say=say):  # at once, or exit 2
            assert statelock.inherited() and said == []
    assert statelock.inherited() == ()


def test_a_pip_that_outlives_its_killed_envcheck_keeps_the_lock_until_it_ends(tmp_path):
    """pip runs in a process group of its own: kill -9 of envcheck (its pid or its group) leaves it working on the
    target. It inherits the lock, so the next run waits for it, and says that envcheck itself is gone."""
    gate = Gate(tmp_path / "gate")
    with gate.closed():
        holder = holding(tmp_path, gate, child=True)
        assert gate.wait_reached() != [holder.pid]  # the command waits, in its own process group
        os.killpg(holder.pid, signal.SIGKILL)  # envcheck's whole group: the command's own group survives
        holder.wait(timeout=BOUND_S)
        held = statelock.running(tmp_path)
        assert held is not None and held.pid == holder.pid and held.ended
        with pytest.raises(UsageError, match=rf"pid {holder.pid} has ended, and a pip it started still holds the lock"):
            with statelock.hold(tmp_path, "undo", target="/venv/bin/python", timeout=0.2, say=lambda line: None):
                pass
    deadline = time.monotonic() + BOUND_S
    while statelock.running(tmp_path) is not None and time.monotonic() < deadline:
        time.sleep(0.05)  # the gate is open: the child ends, and the lock with it
    assert statelock.running(tmp_path) is None


def test_a_dry_run_creates_no_lock_file_and_waits_for_nobody(tmp_path):
    assert statelock.running(tmp_path / "no-such-state") is None and not (tmp_path / "no-such-state").exists()
    assert statelock.running(tmp_path) is None and not (tmp_path / statelock.LOCK).exists()


def test_a_lock_file_that_is_a_link_is_refused(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_text("theirs\n")
    (tmp_path / "state").mkdir()
    (tmp_path / "state" / statelock.LOCK).symlink_to(elsewhere)
    with pytest.raises(UsageError, match="lock file: a symbolic link"):
        with statelock.hold(tmp_path / "state", "fix", target="t", timeout=0, say=print):
            pass
    assert elsewhere.read_text() == "theirs\n"


@pytest.mark.parametrize("value", ["-1", "nan", "inf", "-inf", "soon"])
def test_a_lock_timeout_that_is_not_a_number_of_seconds_is_exit_2(value, capsys):
    from envcheck.cli import main

    assert main(["fix", "--dry-run", "--lock-timeout", value]) == 2
    assert "--lock-timeout" in capsys.readouterr().err


# --------------------------------------------------------------------------------------------------------------
# Real fixes and undos that meet on one real venv


def gated_repo(repo: Path, gate: Gate) -> Path:
    """The test CUTLASS repository with one more commit: a setup.py that holds cutlass_api's editable build (the
    plan's last step, a real pip build) at the gate."""
    (repo / "python" / "cutlass_api" / "setup.py").write_text(
        f"import os, time\nopen({str(gate.reached)!r}, 'a').write(str(os.getpid()) + '\\n')\n"
        f"while os.path.exists({str(gate.path)!r}):\n    time.sleep(0.05)\n"
        "from setuptools import setup\nsetup()\n"
    )
    git("add", "-A", cwd=repo)
    git("commit", "-q", "-m", "a build that waits at a gate", cwd=repo)
    return repo


def fixed(lines: list[str]) -> bool:
    return ("nvidia-cutlass-dsl==4.3.5" in lines and "apache-tvm-ffi==0.1.7" in lines
            and any(line.startswith("-e ") and "cutlass_api" in line for line in lines)
            and not any(line.startswith("nvidia-cutlass==") for line in lines))


@pytest.fixture
def target(tmp_path, wheelhouse, build_backend, cutlass_repo):
    """(python, the fix's arguments, the gate its cutlass_api build waits at, freeze before) on a broken real venv."""
    from test_fix_apply import broken_env, freeze, profile

    gate = Gate(tmp_path / "gate")
    python = broken_env(tmp_path, wheelhouse)
    policy_file = profile(tmp_path, gated_repo(cutlass_repo, gate))
    common = ["--python", str(python), "--policy", str(policy_file), "--cutlass-dir", str(tmp_path / "cutlass"),
              "--find-links", str(wheelhouse), "--find-links", str(build_backend), "--no-index", "--no-gpu"]
    return python, common, gate, freeze(python)


@pytest.mark.slow
@pytest.mark.skipif(python312() is None, reason="needs a Python >= 3.12 for cutlass_api")
def test_an_undo_started_while_a_fix_runs_waits_for_it_then_gives_everything_back(target):
    from test_fix_apply import freeze

    python, common, gate, original = target
    with gate.closed():
        fix = Watched(*common, "--yes")
        gate.wait_reached(fix)  # the fix took its snapshot and holds the lock, in its last step
        undo = Watched("--undo", "--yes", "--python", str(python))
        undo.wait_for(rf"^waiting for envcheck fix \(pid {fix.pid}, started .*\) on {re.escape(str(python))}")
        dry = subprocess.run([sys.executable, "-m", "envcheck", "fix", *common, "--dry-run"], capture_output=True,
                             text=True, cwd=REPO, timeout=BOUND_S)
        assert f"Note: envcheck fix (pid {fix.pid}, started " in dry.stderr, dry.stderr  # a dry run waits for nobody
        assert undo.process.poll() is None  # still waiting: the fix is not done
    code, output = fix.finish()
    assert code == 0 and "Done:" in output, output
    code, output = undo.finish()
    assert code == 0, output
    assert freeze(python) == original, output
    again = subprocess.run([sys.executable, "-m", "envcheck", "fix", "--undo", "--yes", "--python", str(python)],
                           capture_output=True, text=True, cwd=REPO, timeout=BOUND_S)
    assert again.returncode == 0 and "Nothing to undo" in again.stdout and freeze(python) == original


@pytest.mark.slow
@pytest.mark.skipif(python312() is None, reason="needs a Python >= 3.12 for cutlass_api")
def test_two_fixes_at_once_one_killed_with_sigkill_the_other_finishes_and_undo_gives_back_all(target):
    """Two `fix --yes` started together: one holds the lock, the other waits. The holder is killed (its pid only)
    in its last step, where its pip build goes on alone; the other finishes the job, and undo goes back to the
    environment as it was before either began."""
    from test_fix_apply import freeze

    python, common, gate, original = target
    with gate.closed():
        runs = [Watched(*common, "--yes"), Watched(*common, "--yes")]
        gate.wait_reached(*runs)  # one of them holds the lock, in its last step
        held = statelock.running(state_dir(str(python.parent.parent)))
        assert held is not None and held.pid in [run.pid for run in runs]
        holder, waiter = sorted(runs, key=lambda run: run.pid != held.pid)
        waiter.wait_for(rf"^waiting for envcheck fix \(pid {holder.pid}, started ")
        os.kill(holder.pid, signal.SIGKILL)  # the envcheck process only: its pip (and that pip's build) go on
        assert holder.process.wait(timeout=BOUND_S) == -signal.SIGKILL
    code, output = waiter.finish()
    assert code == 0, output
    after = freeze(python)
    assert fixed(after), after
    done = subprocess.run([sys.executable, "-m", "envcheck", "fix", "--undo", "--yes", "--python", str(python)],
                          capture_output=True, text=True, cwd=REPO, timeout=BOUND_S)
    assert done.returncode == 0, done.stdout + done.stderr
    assert freeze(python) == original
