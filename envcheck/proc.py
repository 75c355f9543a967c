"""Running a program under a time limit: in a process group of its own, and the whole group killed when it ends;
in an empty folder of its own, never the user's.

A program that leaves a child behind holding its stdout open (a daemon, a stuck compiler worker) must not make
envcheck wait: once the program exits, or its time is up, every process of its group is killed and only what is
already in the pipes is read. Output beyond a cap is counted, not kept. No shell is ever involved.

The folder a program starts in is data it may run: `python -m pip` puts it first on sys.path (a `pip/` there is
imported instead of pip), git looks for a repository from it. Unless the caller names a folder, each program
runs in a new, empty folder only its owner can enter (private_folder), removed when it ends.
"""

from __future__ import annotations

import os
import selectors
import signal
import subprocess
import time
import weakref
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator, Mapping, Optional, Sequence

__all__ = ["MAX_OUTPUT", "Child", "Finished", "run", "kill_group", "stop_group", "empty_folder", "private_folder", "remove_folder"]

MAX_OUTPUT = 16 << 20  # bytes kept per stream; the rest is drained and dropped
DRAIN_S = 0.5  # after the program ends or is told to: how long to wait for what is left in the pipes
GRACE_S = 2.0  # between SIGTERM and SIGKILL


@dataclass(frozen=True)
class Finished:
    """How a program ended: its exit status (None when it was killed for time), its output, its time."""

    returncode: Optional[int]
    stdout: str
    stderr: str
    timed_out: bool
    seconds: float
    stdout_cut: bool = False  # it wrote more than MAX_OUTPUT to stdout: what is kept is its first MAX_OUTPUT bytes


def empty_folder() -> str:
    """A new, empty folder only its owner can enter (0700), in the temporary folder, for one child to run in.
    Made with mkdir under a random name (no tempfile import: doctor's start-up is a measured goal); mkdir never
    takes a folder that is there already."""
    base = os.environ.get("TMPDIR") or "/tmp"
    try:
        path = os.path.join(base, f"envcheck-cwd-{os.getpid()}-{os.urandom(8).hex()}")
        os.mkdir(path, 0o700)
        return path
    except OSError:  # an odd TMPDIR: the standard library's search for a usable temporary folder
        import tempfile

        return tempfile.mkdtemp(prefix="envcheck-cwd-")


def remove_folder(path: str) -> None:
    """Remove a folder empty_folder made (and whatever the child left in it); gone already is fine."""
    try:
        os.rmdir(path)
    except FileNotFoundError:
        pass
    except OSError:
        import shutil

        shutil.rmtree(path, ignore_errors=True)


@contextmanager
def private_folder() -> Iterator[Path]:
    """An empty folder of envcheck's own (empty_folder) for the block: a child runs in it and gets what must not go
    into its argv in a file there (redact.index_out_of_argv); removed with what is in it when the block ends."""
    path = empty_folder()
    try:
        yield Path(path)
    finally:
        remove_folder(path)


def kill_group(pid: int, how: int = signal.SIGKILL) -> None:
    """Signal the process group that `pid` leads (started with start_new_session); gone already is fine."""
    try:
        os.killpg(pid, how)
    except (ProcessLookupError, PermissionError):
        pass


def stop_group(process: subprocess.Popen, grace: float) -> None:
    """End a program started in a session of its own: SIGTERM to its group, `grace` seconds to exit, then SIGKILL;
    then whatever it left behind in the group is killed too."""
    if process.poll() is None:
        kill_group(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            kill_group(process.pid)
    process.wait()
    kill_group(process.pid)  # whatever it left behind


class Child:
    """A program started at once, in a new session; `finish` collects it. Starting it early lets envcheck work
    meanwhile (the probe runs while the policy is read). cwd: where it runs; by default an empty folder of its own
    (empty_folder), removed once it has finished (or this object is gone). Raises OSError when it cannot be
    started."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        env: Optional[Mapping[str, str]] = None,
        cwd: Optional[str] = None,
        input: Optional[bytes] = None,
        merge_stderr: bool = False,
        pass_fds: Sequence[int] = (),
    ):
        self.argv = list(argv)
        if os.sep in self.argv[0] and not os.path.isabs(self.argv[0]):  # found from here, not from where it runs
            self.argv[0] = os.path.abspath(self.argv[0])
        self.started = time.monotonic()
        self._folder: Optional[weakref.finalize] = None
        if cwd is None:
            cwd = empty_folder()
            self._folder = weakref.finalize(self, remove_folder, cwd)
        try:
            self.process = subprocess.Popen(
                self.argv,
                stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT if merge_stderr else subprocess.PIPE,
                env=dict(env) if env is not None else None,
                cwd=cwd,
                start_new_session=True,
                pass_fds=tuple(pass_fds),  # descriptors it keeps (a lock it must hold until it ends); all others close
            )
        except BaseException:
            if self._folder is not None:
                self._folder()
            raise
        self._input = memoryview(input) if input is not None else None

    def feed(self, data: bytes) -> None:
        """What finish() writes to its stdin, given after the start (it must have been started with input=...)."""
        self._input = memoryview(data)

    def finish(self, timeout: float, on_line: Optional[Callable[[str], None]] = None) -> Finished:
        """Wait up to `timeout` seconds from now, then kill the group. on_line sees stdout line by line as it comes."""
        process = self.process
        deadline = time.monotonic() + max(0.0, timeout)
        chunks: dict[int, list[bytes]] = {}
        kept: dict[int, int] = {}
        cut: set[int] = set()
        pending = b""
        timed_out = False
        out_fd = process.stdout.fileno() if process.stdout is not None else -1
        err_fd = process.stderr.fileno() if process.stderr is not None else -1
        in_fd = process.stdin.fileno() if process.stdin is not None else -1
        with selectors.DefaultSelector() as selector:
            for stream in (process.stdout, process.stderr):
                if stream is not None:
                    selector.register(stream.fileno(), selectors.EVENT_READ)
                    chunks[stream.fileno()], kept[stream.fileno()] = [], 0
            if process.stdin is not None:
                selector.register(in_fd, selectors.EVENT_WRITE)
            ended_at: Optional[float] = None
            try:
                while selector.get_map():
                    now = time.monotonic()
                    if ended_at is None and process.poll() is not None:
                        kill_group(process.pid)  # what it left behind may hold the pipes open
                        ended_at = now
                    if ended_at is None and now >= deadline:
                        timed_out = True
                        kill_group(process.pid, signal.SIGTERM)  # a chance to clean up; SIGKILL follows
                        ended_at = now
                    if ended_at is not None and now - ended_at > DRAIN_S:
                        break
                    wait = min(0.05, max(0.0, deadline - now)) if ended_at is None else 0.05
                    for key, _ in selector.select(wait):
                        fd = key.fd
                        if fd == in_fd:
                            self._write_some(fd, selector)
                            continue
                        data = os.read(fd, 65536)
                        if not data:
                            selector.unregister(fd)
                            continue
                        room = max(0, MAX_OUTPUT - kept[fd])
                        if room:
                            chunks[fd].append(data[:room])
                            kept[fd] += len(chunks[fd][-1])
                        if len(data) > room:
                            cut.add(fd)
                        if on_line is not None and fd == out_fd:
                            pending += data
                            *lines, pending = pending.split(b"\n")
                            for line in lines:
                                on_line(line.decode("utf-8", "replace"))
                if ended_at is None:  # it closed its output but runs on: wait for it, up to its time limit
                    try:
                        process.wait(timeout=max(0.0, deadline - time.monotonic()))
                    except subprocess.TimeoutExpired:
                        timed_out = True
            finally:
                stop_group(process, GRACE_S)  # interrupted, or out of time: TERM, a grace period, then KILL
                for stream in (process.stdin, process.stdout, process.stderr):
                    if stream is not None and not stream.closed:
                        stream.close()
                if self._folder is not None:
                    self._folder()  # its empty folder, and whatever it left there
        if on_line is not None and pending:
            on_line(pending.decode("utf-8", "replace"))

        def text(fd: int) -> str:
            return b"".join(chunks.get(fd, ())).decode("utf-8", "replace")

        return Finished(
            None if timed_out else process.returncode, text(out_fd), text(err_fd), timed_out,
            round(time.monotonic() - self.started, 3), out_fd in cut,
        )


    def _write_some(self, fd: int, selector: selectors.BaseSelector) -> None:
        left = self._input or memoryview(b"")
        try:
            written = os.write(fd, left[:65536]) if left else 0
        except OSError:  # it stopped reading (exited, or closed stdin): the rest is not wanted
            written = len(left)
        self._input = left[written:]
        if not self._input:
            selector.unregister(fd)
            assert self.process.stdin is not None
            self.process.stdin.close()


def run(
    argv: Sequence[str],
    timeout: float,
    *,
    env: Optional[Mapping[str, str]] = None,
    cwd: Optional[str] = None,
    input: Optional[bytes] = None,
    merge_stderr: bool = False,
    on_line: Optional[Callable[[str], None]] = None,
    pass_fds: Sequence[int] = (),
) -> Finished:
    """Run argv (no shell) to its end or its time limit; the whole process group is killed either way."""
    return Child(argv, env=env, cwd=cwd, input=input, merge_stderr=merge_stderr, pass_fds=pass_fds).finish(timeout, on_line)
