"""`envcheck explain [FILE|-]`: known failures of the stack found in a user's own log or traceback.

The log is read and matched by causes/log.py, its causes said by render/explain.py. With --python, what doctor sees in
that interpreter is added, and the causes are explained with its facts. Here: which log is read. A FIFO is read like
standard input, so `envcheck explain <(cmd)` works; one that no process writes to is refused after FIFO_WAIT_S rather
than waited on; a directory or a device is refused before it is opened.
"""

from __future__ import annotations

import os
import select
import stat
import sys
from pathlib import Path
from typing import IO, Optional, TextIO

from ..causes.candidates import CandidateReader
from ..causes.log import STDIN, Explained, LogReader, scan, source_name
from ..errors import UsageError
from ..jsonanswer import answer
from ..render.explain import render_text, to_dict
from ..userfile import emit
from ..words import columns, fit

__all__ = ["FIFO_WAIT_S", "run_explain"]

FIFO_WAIT_S = 5.0  # how long a FIFO may go without a writer before it is refused


def run_explain(
    source: Optional[str], python: Optional[str], profile: Optional[str], as_json: bool,
    stdin: Optional[IO[bytes]] = None, out: Optional[TextIO] = None, gpu_capabilities: tuple[tuple[int, int], ...] = (),
    output: Optional[Path] = None,
) -> int:
    """`envcheck explain`: the causes found in the log, as text or JSON, on `out` (standard output) or in `output`
    (-o FILE, replaced whole). 1 where a known failure is found."""
    from dataclasses import replace

    from ..causes import context_for_log, context_from
    from ..model import gpus_given
    from ..profile import candidates

    report = None
    interpreter = None  # (the interpreter the log's paths name, the site directory it was read from)
    among = candidates(profile)
    chosen_by_log: list = []
    choice = None

    def by_the_log(stack):  # a log alone: the profile and the interpreter its own lines show
        policy, choice = among.from_log(stack)
        chosen_by_log.append((choice, stack))
        ctx = context_for_log(policy, stack.interpreter or "python3")
        given = gpus_given(gpu_capabilities)[:1]  # --gpu-capability: the GPU the log ran on, as the user says
        return replace(ctx, capability=given[0].capability, gpu=f"{given[0].name} ({given[0].capability_text})") if given else ctx

    if python is not None:  # judged as doctor judges it: the profile that covers its torch, unless one is named
        from ..diagnose import diagnose_selected
        from ..gather.target import resolve_python

        target = resolve_python(python)
        chosen, report = diagnose_selected(target, None, among, gpu_capabilities=gpu_capabilities)
        choice = report.profile
        ctx, choose = context_from(report.facts, chosen, target), None
    else:
        ctx, choose = None, by_the_log
    name, stream = _open(source, stdin)
    autotuned = CandidateReader()
    try:
        reader = LogReader(stream)
        causes = scan(reader, ctx, autotuned.block, libraries=among.libraries, choose=choose)
        if chosen_by_log:
            choice, stack = chosen_by_log[0]
            interpreter = (stack.interpreter, stack.site) if stack.interpreter else None
    except UsageError as exc:  # binary: named here, where the name is known
        raise UsageError(f"{source_name(name)}: {exc}") from None
    finally:
        if name != STDIN:  # ours to close; standard input is not
            stream.close()
    from ..redact import Redactor

    redact = Redactor()
    # Redacted before it is rendered, as doctor's report is: a home path becomes ~/..., which a printed command then
    # leaves for the shell to expand.
    explained = redact.deep(Explained(name, causes, reader.lines_read, report, autotuned.end(), interpreter))
    code = explained.exit_code
    if as_json:
        text = redact(answer(to_dict(explained, choice), code, explained.status.value))
    else:  # wrapped once redacted: a home path shortened to ~ takes fewer columns
        text = fit(redact(render_text(explained, choice)), columns(out or sys.stdout))
    emit(text, output, out)
    return code


def _open(source: Optional[str], stdin: Optional[IO[bytes]]) -> tuple[str, IO[bytes]]:
    """The log to read: standard input, a regular file, or a FIFO (`<(cmd)` is one). A directory or a device (/dev/zero
    never ends) is named for what it is, before it is opened."""
    from ..userfile import kind_of

    expected = "expected a log file, a pipe, or - for standard input"
    if source in (None, STDIN):
        stream = stdin or sys.stdin.buffer
        try:
            mode = os.fstat(stream.fileno()).st_mode
        except (AttributeError, OSError, ValueError):  # not a file (a test's bytes): nothing to refuse
            return STDIN, stream
        if stat.S_ISCHR(mode) and not stream.isatty() or stat.S_ISDIR(mode) or stat.S_ISBLK(mode):
            raise UsageError(f"standard input: {kind_of(mode)}, not a log: {expected}")
        if stream.isatty():  # a person at a terminal, who may not know that envcheck now waits for them
            print("envcheck explain: reading the log from standard input (end with Ctrl-D; or give a FILE)",
                  file=sys.stderr, flush=True)
            # Unbuffered: a line at a time, and the first Ctrl-D ends it (a buffered read of a block returns at the
            # first Ctrl-D, and the next read would wait for a second one).
            return STDIN, getattr(stream, "raw", stream)
        return STDIN, stream
    try:
        mode = os.stat(source).st_mode
        if not (stat.S_ISREG(mode) or stat.S_ISFIFO(mode)):
            raise UsageError(f"{source}: {kind_of(mode)}, not a log: {expected}")
        fd = os.open(source, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))  # a FIFO: no wait for a writer
    except FileNotFoundError:
        raise UsageError(f"{source}: no such file ({expected})") from None
    except OSError as exc:
        raise UsageError(f"{source}: cannot be read ({exc.strerror}): {expected}") from None
    mode = os.fstat(fd).st_mode  # what was opened, not what was there a moment before
    if not (stat.S_ISREG(mode) or stat.S_ISFIFO(mode)):
        os.close(fd)
        raise UsageError(f"{source}: {kind_of(mode)}, not a log: {expected}")
    head = _await_writer(fd, source) if stat.S_ISFIFO(mode) else b""
    os.set_blocking(fd, True)
    stream = os.fdopen(fd, "rb")
    return source, (_Prepended(head, stream) if head else stream)


def _await_writer(fd: int, source: str) -> bytes:
    """Wait up to FIFO_WAIT_S for a FIFO's writer to write or close (the writer of `<(cmd)` is there at once). None
    came: refused, unless a writer holds it open without having written yet (then it is read like a pipe). The bytes
    a last check read, if any."""
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    if poller.poll(int(FIFO_WAIT_S * 1000)):  # data, or a writer came and went (POLLHUP)
        return b""
    try:
        head = os.read(fd, 1)
    except BlockingIOError:  # a writer has it open and has written nothing yet
        return b""
    if head:
        return head
    os.close(fd)
    raise UsageError(f"{source}: a FIFO that nothing wrote to within {FIFO_WAIT_S:g} s: expected a log, or a pipe "
                     "that a command writes to (`envcheck explain <(cmd)`)")


class _Prepended:
    """A stream whose first bytes were read already: those, then the rest."""

    def __init__(self, head: bytes, stream: IO[bytes]):
        self.head, self.stream = head, stream

    def read(self, size: int = -1) -> bytes:
        if not self.head:
            return self.stream.read(size)
        data, self.head = self.head, b""
        return data

    def close(self) -> None:
        self.stream.close()
