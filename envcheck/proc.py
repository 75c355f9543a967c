"""Running a program under a time limit: in a process group of its own, and the whole group killed when it ends.

A program that leaves a child behind holding its stdout open (a daemon, a stuck compiler worker) must not make
envcheck wait: once the program exits, or its time is up, every process of its group is killed and only what is
already in the pipes is read. Output beyond a cap is counted, not kept. No shell is ever involved.
"""

from __future__ import annotations

import os
import selectors
import signal
import subprocess
import time
from dataclasses import dataclass
from typing import Callable, Mapping, Optional, Sequence

__all__ = ["Child", "Finished", "run", "kill_group", "stop_group"]

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
    meanwhile (the probe runs while the policy is read). Raises OSError when it cannot be started."""

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
        self.started = time.monotonic()
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
                        if kept[fd] < MAX_OUTPUT:
                            chunks[fd].append(data[: MAX_OUTPUT - kept[fd]])
                            kept[fd] += len(chunks[fd][-1])
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
        if on_line is not None and pending:
            on_line(pending.decode("utf-8", "replace"))

        def text(fd: int) -> str:
            return b"".join(chunks.get(fd, ())).decode("utf-8", "replace")

        return Finished(
            None if timed_out else process.returncode, text(out_fd), text(err_fd), timed_out,
            round(time.monotonic() - self.started, 3),
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
