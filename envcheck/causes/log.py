"""A user's log or traceback read as untrusted input, and the known failures of the stack found in it.

The signatures are the smoke stage's (causes/signatures.toml, one table): each line of the log is matched against
them, and every signature found becomes a cause with its evidence line and its remedy (causes/explanations.py says
each); the first in the table's order is the main one.

A log is read to its end in blocks (constant memory, each line cut at MAX_LINE characters, so that /dev/zero's
endless line could not grow it), and what is kept of it has terminal escape sequences and control characters removed
(envcheck.terminal.clean). benchmarks/explain_big_log.py measures a 200 MB log.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import IO, Callable, Iterator, Optional

from ..errors import UsageError
from ..model import Report, Status
from ..terminal import clean

__all__ = ["MAX_LINE", "LogLine", "Block", "LogReader", "Found", "Explained", "clean_line", "scan"]

MAX_LINE = 16 * 1024  # characters of one line kept for matching; the rest of a longer line is skipped
BLOCK = 1 << 20  # bytes read at a time; lines are cleaned and searched a block at a time


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


STDIN = "-"  # the source that is standard input


def source_name(source: str) -> str:
    """A log's source as people read it: a path, or "standard input" for `-`."""
    return "standard input" if source == STDIN else source


@dataclass(frozen=True)
class Explained:
    source: str  # a path, or STDIN
    causes: tuple[Found, ...]  # the table's order: the first is the main cause
    lines_read: int
    doctor: Optional[Report] = None
    candidates: tuple = ()  # GemmCandidates: each GEMM with NVGEMM candidates the log shows Inductor autotuning
    # without --python: the interpreter the log's paths name, and the site directory it was read from
    interpreter: Optional[tuple[str, str]] = None

    @property
    def status(self) -> Status:
        """The worst status of the causes found; pass where none is."""
        return max((f.cause.status for f in self.causes), key=lambda s: s.rank, default=Status.PASS)

    @property
    def exit_code(self) -> int:
        """1 where a known failure is found; a cause that is only a warning (a deprecated setting) is not one."""
        return 1 if self.status.is_problem else 0


# A block of at most this many lines (a traceback, a short log) is searched line by line: making the whole-block
# patterns (90 more regular expressions) would cost more than it saves (benchmarks/startup_options.py, explain).
FEW_LINES = 1000


def scan(reader: LogReader, ctx, each: Optional[Callable[[Block], None]] = None, *, libraries: tuple[str, ...] = (),
         choose=None) -> tuple[Found, ...]:
    """Every signature found in the log, in the table's priority order. Its evidence is the first line that shows
    it, or a later one where that is the exception's own line (the end of a traceback) and the first was not.
    each: called with every block too, in order (explain reads the NVGEMM candidates in the same pass).

    `choose`, if given, is called once the log is read with what it says of its stack (a LogStack, read by
    logstack.py; `libraries`: the kernel-library modules to look for) and returns the Context to explain the causes
    by: explain without --python picks its profile and interpreter from the log itself.

    A block of lines is searched whole first, and line by line only for a signature that may match in it: most
    blocks of a big log hold no known failure. A block of FEW_LINES or fewer is searched line by line at once."""
    from .explanations import SIGNATURES, explain_said
    from .logstack import StackReader
    from .table import ABOVE_LINES

    first: dict[str, tuple[str, str, int, bool]] = {}  # id -> (what it named, the evidence line, its number, raised)
    stack = StackReader(libraries) if choose is not None else None
    prior: tuple[str, ...] = ()  # the last lines of the block before: a row with `above` looks up into them
    for block in reader.blocks():
        if each is not None:
            each(block)
        if stack is not None:
            stack.read(block.text)
        for signature in SIGNATURES:
            seen = first.get(signature.id)
            if seen is not None and seen[3]:
                continue
            whole = _whole_block_patterns(signature.row) if len(block.lines) > FEW_LINES else None
            if whole is not None and not any(pattern.search(block.text) for pattern in whole):
                continue
            for number, text in enumerate(block.lines, block.first):
                seen = first.get(signature.id)
                raised = None
                if seen is not None:
                    if seen[3]:
                        break
                    raised = bool(_RAISED.match(text))
                    if not raised:
                        continue
                found = signature.search(text, _before(prior, block.lines, number - block.first, ABOVE_LINES)
                                         if signature.row.above else ())
                if found:
                    raised = bool(_RAISED.match(text)) if raised is None else raised
                    said = found.group(1) if found.re.groups else found.group(0)
                    first[signature.id] = (said, text.strip()[:300], number, raised)
        prior = (*prior, *block.lines[-ABOVE_LINES:])[-ABOVE_LINES:]
    if stack is not None:
        ctx = choose(stack.stack())
    explained = ((s, explain_said(s, *first[s.id][:2], ctx)) for s in SIGNATURES if s.id in first)
    return tuple(Found(cause, first[s.id][2], s.checks, first[s.id][3]) for s, cause in explained if cause is not None)


def _before(prior: tuple[str, ...], lines: tuple[str, ...], index: int, count: int) -> tuple[str, ...]:
    """The `count` lines before lines[index], the block before's last ones (`prior`) included."""
    return lines[index - count:index] if index >= count else (*prior, *lines[:index])[-count:]


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
