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
    body = "run_command([sys.executable, '-c', WAIT], io.StringIO(), lambda line: None)" if child else "exec(WAIT)"
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


# --------------------------------------------------------------------------------------------------------------
# envcheck's own folders are the user's alone; its logs are created new, never through a link


NOBODY = 65534


def layout(tmp_path: Path, case: str) -> tuple[Path, Path]:
    """(root, folder): envcheck's tree from root down to the folder it writes in, shaped as the case says."""
    above = tmp_path / "above"
    root, folder = above / "cache", above / "cache" / "fix" / "state"
    folder.mkdir(parents=True)
    for path in (above, root, root / "fix", folder):
        path.chmod(0o755)
    change = {
        "private": {},
        "folder 0777": {folder: 0o777},
        "folder group-writable": {folder: 0o775},
        "folder sticky 1777": {folder: 0o1777},
        "root of the tree 0777": {root: 0o777},
        "between them 0777": {root / "fix": 0o777},
        "above 0777": {above: 0o777},
        "above sticky 1777": {above: 0o1777},
    }.get(case, {})
    for path, mode in change.items():
        path.chmod(mode)
    if case == "folder not mine":
        os.chown(folder, NOBODY, NOBODY)
    if case == "above not mine":
        os.chown(above, NOBODY, NOBODY)
    return root, folder


@pytest.mark.parametrize("case, words", [
    ("private", None),
    ("above sticky 1777", None),  # /tmp: nobody can move another's folder away
    ("folder 0777", "{folder} can be written by others (mode 0777)"),
    ("folder group-writable", "{folder} can be written by others (mode 0775)"),
    ("folder sticky 1777", "{folder} can be written by others (mode 1777)"),  # others could still add a link
    ("root of the tree 0777", "{root} can be written by others (mode 0777)"),
    ("between them 0777", "{root}/fix can be written by others (mode 0777)"),
    ("above 0777", "{above}, a folder above {folder}, can be written by others and is not sticky (mode 0777)"),
    ("folder not mine", "{folder} belongs to nobody (uid 65534), not to you"),
    ("above not mine", "{above}, a folder above {folder}, belongs to nobody (uid 65534)"),
])
@pytest.mark.parametrize("create", [True, False])
def test_envcheck_uses_only_folders_nobody_else_can_change(tmp_path, case, words, create):
    from envcheck.paths import usable_folder

    if "not mine" in case and os.geteuid() != 0:
        pytest.skip("giving a folder to another user needs root")
    root, folder = layout(tmp_path, case)
    if words is None:
        assert usable_folder(folder, "WHAT", create=create, root=root) == folder
        return
    with pytest.raises(UsageError) as refused:
        usable_folder(folder, "ENVCHECK_CACHE_DIR=x (envcheck's cache folder)", create=create, root=root)
    message = str(refused.value)
    assert message.startswith("ENVCHECK_CACHE_DIR=x (envcheck's cache folder): ")
    assert words.format(folder=folder, root=root, above=root.parent) in message, message
    assert "Point ENVCHECK_CACHE_DIR at a folder of your own" in message or "chmod go-w" in message


def test_folders_envcheck_makes_are_its_owners_alone_all_the_way_down(tmp_path):
    from envcheck.paths import usable_folder

    old = os.umask(0o002)  # a umask that would leave the folders above group-writable
    try:
        usable_folder(tmp_path / "a" / "b" / "c", "WHAT", create=True, root=tmp_path / "a")
    finally:
        os.umask(old)
    assert [oct(os.stat(tmp_path.joinpath(*"abc"[:n])).st_mode & 0o777) for n in (1, 2, 3)] == ["0o700"] * 3


def test_fix_refuses_a_state_folder_others_can_write_and_changes_nothing(tmp_path):
    """The outside attack: ENVCHECK_CACHE_DIR on a shared folder whose logs/ is 0777."""
    from wheelfactory import make_venv

    python = make_venv(tmp_path / "venv")
    shared = tmp_path / "shared"
    env = {**os.environ, "ENVCHECK_CACHE_DIR": str(shared)}
    logs = state_dir(str(tmp_path / "venv"), env) / "logs"
    logs.mkdir(parents=True)
    logs.chmod(0o777)
    policy_file = tmp_path / "profile.toml"
    policy_file.write_text('extends = "torch-2.11-nvgemm"\n\n[python]\nversion = ">=3.10"\n')
    (tmp_path / "empty").mkdir()
    before = sorted(p.name for p in logs.iterdir())
    done = subprocess.run([sys.executable, "-m", "envcheck", "fix", "--yes", "--python", str(python), "--policy",
                           str(policy_file), "--no-index", "--find-links", str(tmp_path / "empty"), "--no-gpu"],
                          capture_output=True, text=True, cwd=tmp_path, env=env, timeout=BOUND_S)
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"ENVCHECK_CACHE_DIR={shared} (envcheck fix's state folder): {logs} can be written by others" in done.stderr
    assert "Traceback" not in done.stderr and sorted(p.name for p in logs.iterdir()) == before
    assert not (logs.parent / "snapshot.json").exists()


@pytest.mark.parametrize("pointing", ["to a file outside", "nowhere (dangling)"])
def test_a_log_is_never_written_through_a_link_planted_under_its_name(tmp_path, pointing):
    """The next log's name (verb, second, pid) is guessable: a link planted under it must not be followed."""
    import datetime

    from envcheck.commands.fix import _open_log

    state = tmp_path / "state"
    logs = state / "logs"
    logs.mkdir(parents=True, mode=0o700)
    victim = tmp_path / "victim.txt"
    if pointing == "to a file outside":
        victim.write_text("theirs\n")
    now = datetime.datetime.now()
    for second in range(0, 5):  # this second and the next few: one of them is the name _open_log picks
        stamp = (now + datetime.timedelta(seconds=second)).strftime("%Y%m%d-%H%M%S")
        (logs / f"fix-{stamp}-{os.getpid()}.log").symlink_to(victim)
    with pytest.raises(UsageError, match=r"the log: cannot create .*fix-.*\.log: something is there already"):
        _open_log(state, "fix", "ENVCHECK_STATE_DIR=x (envcheck fix's state folder)")
    assert (victim.read_text() == "theirs\n") if pointing == "to a file outside" else not victim.exists()


def test_a_crash_log_is_never_written_through_a_link_nor_into_a_folder_others_can_write(tmp_path, monkeypatch):
    import datetime

    from envcheck.paths import write_crash_log

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    folder = tmp_path / "state" / "envcheck"
    folder.mkdir(parents=True, mode=0o700)
    victim = tmp_path / "victim.txt"
    victim.write_text("theirs\n")
    now = datetime.datetime.now()
    for second in range(0, 5):
        stamp = (now + datetime.timedelta(seconds=second)).strftime("%Y%m%d-%H%M%S")
        (folder / f"crash-{stamp}-{os.getpid()}.log").symlink_to(victim)
    written = []
    for mode in (0o700, 0o777):  # a link where the log would go; then the whole folder open to all
        folder.chmod(mode)
        try:
            raise RuntimeError("a bug")
        except RuntimeError as exc:
            written.append(write_crash_log(exc))
    assert victim.read_text() == "theirs\n"
    for log in written:
        assert "RuntimeError: a bug" in log.read_text() and log.parent != folder and not log.is_symlink()
        assert oct(log.stat().st_mode & 0o777) == "0o600"
        log.unlink()


@pytest.mark.parametrize("planted", ["smoke", "inductor"])
def test_smoke_and_bench_refuse_run_and_compiler_cache_folders_others_can_write(tmp_path, planted):
    """Inductor loads the compiled code it finds in its cache: a cache others can write is their code in the run."""
    from envcheck.runner import prepare_run

    cache = tmp_path / "cache"
    (cache / planted).mkdir(parents=True)
    cache.chmod(0o700)
    (cache / planted).chmod(0o777)
    with pytest.raises(UsageError, match=rf"{re.escape(str(cache / planted))} can be written by others"):
        prepare_run(cache, "smoke", fresh=False, env={"ENVCHECK_CACHE_DIR": str(cache)}, named=False)
    assert not list(cache.glob("smoke/*"))  # no run folder was made
    (cache / planted).chmod(0o700)
    run_dir, _ = prepare_run(cache, "smoke", fresh=False, env={"ENVCHECK_CACHE_DIR": str(cache)}, named=False)
    assert run_dir.parent == cache / "smoke" and oct((cache / "smoke").stat().st_mode & 0o777) == "0o700"


def test_a_toolkit_manifest_is_never_written_through_a_link_nor_read_from_one(tmp_path):
    """The manifest decides what undo deletes: a link in its place is no manifest, and the folder stays."""
    from envcheck.fix import manifest

    prefix = tmp_path / "cuda-13.1"
    (prefix / "bin").mkdir(parents=True)
    (prefix / "bin" / "nvcc").write_text("nvcc\n")
    victim = tmp_path / "victim.json"
    victim.write_text("theirs\n")
    (prefix / manifest.MANIFEST).symlink_to(victim)
    manifest.write(prefix)  # replaces the link whole
    assert victim.read_text() == "theirs\n" and not (prefix / manifest.MANIFEST).is_symlink()

    (prefix / "work.txt").write_text("someone's work\n")
    manifest.write(prefix)  # a list that names work.txt too, moved aside and linked back: not fix's own list
    listed = tmp_path / "listed.json"
    (prefix / manifest.MANIFEST).rename(listed)
    (prefix / manifest.MANIFEST).symlink_to(listed)
    assert manifest.changed_since(prefix) == [f"{manifest.MANIFEST} (envcheck's list of what it put there) is missing "
                                              "or unreadable"]
    assert "kept" in manifest.remove_if_untouched(prefix) and (prefix / "work.txt").exists()
