"""`envcheck explain [FILE|-]`: known failures of the stack found in a user's own log or traceback.

The signatures are the smoke stage's (envcheck/smoke/signatures.toml, one table): each line of the log is matched
against them, and every signature found becomes a cause with its evidence line, its remedy and the doctor checks
that confirm it; the first in the table's order is the main one. With --python, what doctor sees in that
interpreter is added, and the causes are explained with its facts.

A log is untrusted input: it is read to its end in blocks (constant memory, each line cut at MAX_LINE characters, so
that /dev/zero's endless line could not grow it: devices are refused anyway), and what is shown of it has terminal
escape sequences and control characters removed (envcheck.terminal.clean). A FIFO is read like standard input, so
`envcheck explain <(cmd)` works; one that no process writes to is refused after FIFO_WAIT_S rather than waited on.
benchmarks/explain_big_log.py measures a 200 MB log.
"""

from __future__ import annotations

import functools
import json
import os
import re
import select
import stat
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Iterator, Optional, TextIO

from . import shell
from .errors import UsageError
from .model import Finding, Report
from .terminal import clean

__all__ = ["Found", "Explained", "LogReader", "clean_line", "scan", "run_explain", "MAX_LINE"]

SCHEMA_VERSION = 1
MAX_LINE = 16 * 1024  # characters of one line kept for matching; the rest of a longer line is skipped
BLOCK = 1 << 20  # bytes read at a time; lines are cleaned and searched a block at a time
FIFO_WAIT_S = 5.0  # how long a FIFO may go without a writer before it is refused
SHOWN = 300  # characters of an evidence line shown


def clean_line(text: str) -> str:
    """text without terminal escape sequences or control characters, on one line (a tab becomes a space)."""
    return clean(text).replace("\n", "").replace("\t", " ")


@dataclass(frozen=True)
class LogLine:
    number: int  # 1-based
    text: str  # cleaned


@dataclass(frozen=True)
class Block:
    """Lines read together: the number of the first, their cleaned texts, and those texts joined by newlines."""

    first: int
    lines: tuple[str, ...]
    text: str


class LogReader:
    """A log's lines, decoded leniently and cleaned, read to the end a block at a time with a cap on each line.
    Iterate once (lines, or `blocks()`); afterwards `lines_read` says how many there were."""

    def __init__(self, stream: IO[bytes], max_line: int = MAX_LINE, block: int = BLOCK):
        self.stream, self.max_line, self.block = stream, max_line, block
        self.lines_read = 0

    def __iter__(self) -> Iterator[LogLine]:
        for block in self.blocks():
            yield from (LogLine(block.first + i, text) for i, text in enumerate(block.lines))

    def blocks(self) -> Iterator[Block]:
        """One decode and one cleaning per block, not per line: a 200 MB log is read in seconds."""
        for raw in self._raw_blocks():
            if self.lines_read == 0 and b"\x00" in raw[0]:
                raise UsageError("not a text log (it holds NUL bytes): expected a log or traceback")
            text = clean(b"\n".join(raw).decode("utf-8", errors="replace")).replace("\t", " ")
            lines = tuple(text.split("\n"))
            if max(map(len, lines)) > self.max_line:
                lines = tuple(line[: self.max_line] for line in lines)
                text = "\n".join(lines)
            yield Block(self.lines_read + 1, lines, text)
            self.lines_read += len(lines)

    def _raw_blocks(self) -> Iterator[list[bytes]]:
        """Each block's whole lines as bytes, without their newlines, each cut at 4 bytes a character kept (a UTF-8
        character is at most four); the rest of an over-long line is read past, never kept."""
        limit = self.max_line * 4
        rest = b""  # the start of a line the last block ended in
        skipping = False  # inside an over-long line that was cut: read to its newline
        while True:
            data = self.stream.read(self.block)
            if not data:
                if rest:
                    yield [rest]
                return
            lines = data.split(b"\n")
            if skipping:  # the first piece is still the over-long line's
                if len(lines) == 1:
                    continue
                del lines[0]
                skipping = False
            else:
                lines[0] = rest + lines[0]
            rest = lines.pop()
            if len(rest) > limit:  # a line longer than the cap that has not ended: cut it now, skip its rest
                lines.append(rest[:limit])
                rest, skipping = b"", True
            if lines:
                yield [line[:limit] for line in lines]


@dataclass(frozen=True)
class Found:
    """One known failure in the log: the explained cause, and the line it was seen on."""

    cause: object  # envcheck.smoke.causes.Cause
    line: int
    checks: tuple[str, ...]
    raised: bool = False  # the line is an exception's own (`ModuleNotFoundError: ...`), the best evidence


# An exception as a traceback ends with it: `ModuleNotFoundError: No module named 'x'`, `torch.OutOfMemoryError: ...`
_RAISED = re.compile(r"^\s*(?:\w+\.)*(?:\w*(?:Error|Exception|Warning)|Smoke\w+): ")


@dataclass(frozen=True)
class Explained:
    source: str
    causes: tuple[Found, ...]  # the table's order: the first is the main cause
    lines_read: int
    doctor: Optional[Report] = None

    @property
    def exit_code(self) -> int:
        return 1 if self.causes else 0


def scan(reader: LogReader, ctx) -> tuple[Found, ...]:
    """Every signature found in the log, in the table's priority order. Its evidence is the first line that shows
    it, or a later one where that is the exception's own line (the end of a traceback) and the first was not.

    A block of lines is searched whole first, and line by line only for a signature that may match in it: most
    blocks of a big log hold no known failure."""
    from .causes import SIGNATURES, explain_match

    first: dict[str, Found] = {}
    for block in reader.blocks():
        for signature in SIGNATURES:
            seen = first.get(signature.id)
            if seen is not None and seen.raised:
                continue
            whole = _whole_block_patterns(signature.row)
            if whole is not None and not any(pattern.search(block.text) for pattern in whole):
                continue
            for number, text in enumerate(block.lines, block.first):
                seen = first.get(signature.id)
                raised = None
                if seen is not None:
                    if seen.raised:
                        break
                    raised = bool(_RAISED.match(text))
                    if not raised:
                        continue
                found = signature.search(text)
                if found:
                    raised = bool(_RAISED.match(text)) if raised is None else raised
                    first[signature.id] = Found(explain_match(signature, found, text, ctx), number, signature.checks,
                                                raised)
    return tuple(first[s.id] for s in SIGNATURES if s.id in first)


# A construct whose meaning at a line's start or end differs from its meaning beside a newline: a pattern holding
# one is only ever matched line by line.
_EDGE_SENSITIVE = re.compile(r"\\[AZz]|\(\?(?!:|P<)")


@functools.lru_cache(maxsize=None)
def _whole_block_patterns(row) -> Optional[tuple["re.Pattern[str]", ...]]:
    """Patterns that find a match in a block's lines joined by newlines whenever a line of it matches the row: each
    pattern's top-level alternatives apart (Python's re scans fast only for a literal start) and with ^ and $ at
    line ends. A cross-line match is only a false alarm: the block is then read line by line. None: the row's
    patterns are searched line by line only."""
    patterns = []
    for pattern in row.patterns:
        if _EDGE_SENSITIVE.search(pattern.pattern):
            return None
        try:
            patterns.extend(re.compile(part, pattern.flags | re.MULTILINE) for part in _alternatives(pattern.pattern))
        except re.error:  # an alternative alone is not a pattern (a back-reference): the whole one
            patterns.append(re.compile(pattern.pattern, pattern.flags | re.MULTILINE))
    return tuple(patterns)


def _alternatives(source: str) -> list[str]:
    """A regular expression's top-level alternatives ("a|b(c|d)" -> "a", "b(c|d)")."""
    parts, start, depth, index, in_class = [], 0, 0, 0, False
    while index < len(source):
        char = source[index]
        if char == "\\":
            index += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
            index += 1 + (source[index + 1: index + 2] == "^")
            index += source[index: index + 1] == "]"  # a ] first in a class is a character of it
            continue
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == "|" and depth == 0:
            parts.append(source[start:index])
            start = index + 1
        index += 1
    return parts + [source[start:]]


# --------------------------------------------------------------------------------------------------------------
# The command


def run_explain(
    source: Optional[str], python: Optional[str], policy_file: Optional[Path], as_json: bool,
    stdin: Optional[IO[bytes]] = None, out: Optional[TextIO] = None,
) -> int:
    from . import profile as policy_module
    from .causes import Context, context_from

    out = out or sys.stdout
    chosen = policy_module.resolve(policy_file)
    report = None
    if python is not None:
        from .diagnose import diagnose
        from .target import resolve_python

        target = resolve_python(python)
        report = diagnose(target, None, chosen)
        ctx = context_from(report.facts, chosen, target)
    else:
        ctx = Context(python="python3", policy=chosen, known=False)
    name, stream = _open(source, stdin)
    try:
        reader = LogReader(stream)
        causes = scan(reader, ctx)
    except UsageError as exc:  # binary: named here, where the name is known
        raise UsageError(f"{'standard input' if name == '-' else name}: {exc}") from None
    finally:
        if name != "-":  # ours to close; standard input is not
            stream.close()
    from .redact import Redactor

    redact = Redactor()
    # Redacted before it is rendered, as doctor's report is: a home path becomes ~/..., which a printed command then
    # leaves for the shell to expand.
    explained = redact.deep(Explained(name, causes, reader.lines_read, report))
    text = json.dumps(to_dict(explained), indent=2) + "\n" if as_json else render_text(explained)
    out.write(redact(text))
    return explained.exit_code


def _open(source: Optional[str], stdin: Optional[IO[bytes]]) -> tuple[str, IO[bytes]]:
    """The log to read: standard input, a regular file, or a FIFO (`<(cmd)` is one). A directory or a device (/dev/zero
    never ends) is named for what it is, before it is opened."""
    from .userfile import kind_of

    expected = "expected a log file, a pipe, or - for standard input"
    if source in (None, "-"):
        stream = stdin or sys.stdin.buffer
        try:
            mode = os.fstat(stream.fileno()).st_mode
        except (AttributeError, OSError, ValueError):  # not a file (a test's bytes): nothing to refuse
            return "-", stream
        if stat.S_ISCHR(mode) and not stream.isatty() or stat.S_ISDIR(mode) or stat.S_ISBLK(mode):
            raise UsageError(f"standard input: {kind_of(mode)}, not a log: {expected}")
        if stream.isatty():  # a person at a terminal, who may not know that envcheck now waits for them
            print("envcheck explain: reading the log from standard input (end with Ctrl-D; or give a FILE)",
                  file=sys.stderr, flush=True)
            # Unbuffered: a line at a time, and the first Ctrl-D ends it (a buffered read of a block returns at the
            # first Ctrl-D, and the next read would wait for a second one).
            return "-", getattr(stream, "raw", stream)
        return "-", stream
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


def _short(text: str) -> str:
    return text if len(text) <= SHOWN else text[: SHOWN - 1] + "…"


def _findings(report: Optional[Report], checks: tuple[str, ...]) -> list[Finding]:
    if report is None:
        return []
    return [f for f in (report.finding(c) for c in checks) if f is not None]


def to_dict(explained: Explained) -> dict:
    from .model import plain  # one JSON shape for a remedy, the smoke result's

    return {
        "schema_version": SCHEMA_VERSION,
        "source": explained.source,
        "lines_read": explained.lines_read,
        "truncated": False,  # schema 1 kept: a log is read to its end now
        "found": bool(explained.causes),
        "causes": [
            {
                "id": f.cause.id,
                "text": f.cause.text,
                "evidence": {"line": f.line, "text": _short(f.cause.evidence)},
                "remedy": plain(f.cause.remedy),
                "checks": list(f.checks),
                "doctor": [
                    {"id": d.id, "status": d.status.value, "found": d.found, "wanted": d.wanted}
                    for d in _findings(explained.doctor, f.checks)
                ],
            }
            for f in explained.causes
        ],
        "target": explained.doctor.target if explained.doctor else None,
    }


def render_text(explained: Explained) -> str:
    read = f"{explained.lines_read} lines"
    if not explained.causes:
        return f"explain  no known failure of the stack in {explained.source} ({read})\n"
    lines = [f"explain  {len(explained.causes)} known failure(s) in {explained.source} ({read}); the first explains it"]
    for index, found in enumerate(explained.causes):
        cause = found.cause
        lines.append("")
        lines.append(f"{'cause' if index == 0 else 'also':5}  {cause.id}: {cause.text}")
        lines.append(f"  seen      line {found.line}: {_short(cause.evidence)}")
        if cause.remedy is not None:
            lines.append(f"  fix       {cause.remedy.text}")
            lines.extend(f"            $ {shell.line(command)}" for command in cause.remedy.commands)
        if found.checks:
            target = explained.doctor.target if explained.doctor else "python3"  # the remedies' python, unknown
            doctor = shell.line(("envcheck", "doctor", "--python", target))
            lines.append(f"  check     $ {doctor}   # {', '.join(found.checks)}")
        for finding in _findings(explained.doctor, found.checks):
            lines.append(f"  doctor    {finding.id} {finding.status.value.upper()}: {_short(finding.found)}")
    return "\n".join(lines) + "\n"
