"""A user's log or traceback read as untrusted input, and the known failures of the stack found in it.

The signatures are the smoke stage's (causes/signatures.toml, one table): every signature found in the log becomes a
cause with its evidence line and its remedy (causes/explanations.py says each); the first in the table's order is the
main one.

The log is read by logreader.py: a block at a time, in bounded memory, a long line as windows of MAX_LINE bytes. A
block is searched for a row only where it holds one of the row's needles (the text every match holds), and then
through the whole block at once: only the entries where a pattern matches are looked at one by one. So the time is
linear in the log's size whatever its shape, every row's patterns being guarded (guard.py) against backtracking.
benchmarks/explain_big_log.py and explain_long_lines.py measure it.
"""

from __future__ import annotations

import bisect
import functools
import heapq
import re
from dataclasses import dataclass
from typing import Callable, Iterator, Optional

from ..model import Report, Status
from .guard import alternatives
from .logreader import BLOCK, CONTINUED, MAX_LINE, OVERLAP, Block, LogLine, LogReader, clean_line

__all__ = ["MAX_LINE", "OVERLAP", "BLOCK", "QUOTE", "LogLine", "Block", "LogReader", "Found", "Explained", "clean_line",
           "quote", "scan"]

QUOTE = 300  # characters of a line kept to show a match in it
HUNT = 10_000  # lines that show a signature looked at, after its first, for the exception's own line


def quote(text: str, found: "re.Match[str]") -> str:
    """What is kept of a line to show a match in it: the line, stripped, up to QUOTE characters; where the match ends
    further in (a long line, a window of one), QUOTE characters from a little before the match, marked as cut."""
    line = text.strip()
    lead = len(text) - len(text.lstrip())
    if len(line) <= QUOTE or found.end() - lead <= QUOTE:
        return line[:QUOTE]
    start = max(0, found.start() - lead - QUOTE // 3)
    return CONTINUED + line[start:start + QUOTE - 1]


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


# A block of at most this many entries and characters (a traceback, a short log) is searched line by line: making the
# whole-block patterns (90 more regular expressions) would cost more than it saves (benchmarks/startup_options.py).
FEW_LINES = 1000
FEW_CHARS = 1 << 16


def scan(reader: LogReader, ctx, each: Optional[Callable[[Block], None]] = None, *, libraries: tuple[str, ...] = (),
         choose=None) -> tuple[Found, ...]:
    """Every signature found in the log, in the table's priority order. Its evidence is the first line that shows
    it, or a later one where that is the exception's own line (the end of a traceback) and the first was not (the
    next HUNT lines that show it are looked at for one).
    each: called with every block too, in order (explain reads the NVGEMM candidates in the same pass).

    `choose`, if given, is called once the log is read with what it says of its stack (a LogStack, read by
    logstack.py; `libraries`: the kernel-library modules to look for) and returns the Context to explain the causes
    by: explain without --python picks its profile and interpreter from the log itself."""
    from .explanations import SIGNATURES, explain_said
    from .logstack import StackReader
    from .table import ABOVE_LINES

    first: dict[str, tuple[str, str, int, bool]] = {}  # id -> (what it named, the evidence line, its number, raised)
    hunted: dict[str, int] = {}  # id -> lines that showed it looked at since its first
    stack = StackReader(libraries) if choose is not None else None
    prior: tuple[str, ...] = ()  # the last entries of the block before: a row with `above` looks up into them
    for block in reader.blocks():
        if each is not None:
            each(block)
        if stack is not None:
            stack.read(block.text)
        few = len(block.numbers) <= FEW_LINES and len(block.text) <= FEW_CHARS
        for signature in SIGNATURES:
            row, seen = signature.row, first.get(signature.id)
            if seen is not None and (seen[3] or hunted[signature.id] >= HUNT):
                continue
            if not row.may_match(block.text):
                continue
            for index in range(len(block.numbers)) if few else _hits(row, block, prior, ABOVE_LINES):
                text = block.lines[index]
                seen = first.get(signature.id)
                if seen is not None:
                    if seen[3] or hunted[signature.id] >= HUNT:
                        break
                    hunted[signature.id] += 1
                    if not _RAISED.match(text):
                        continue
                found = row.search(text, _before(prior, block.lines, index, ABOVE_LINES) if row.above else ())
                if found:
                    said = found.group(1) if found.re.groups else found.group(0)
                    first[signature.id] = (said, quote(text, found), block.numbers[index], bool(_RAISED.match(text)))
                    hunted.setdefault(signature.id, 0)
        prior = (*prior, *_last(block.text, ABOVE_LINES))[-ABOVE_LINES:]
    if stack is not None:
        ctx = choose(stack.stack())
    explained = ((s, explain_said(s, *first[s.id][:2], ctx)) for s in SIGNATURES if s.id in first)
    return tuple(Found(cause, first[s.id][2], s.checks, first[s.id][3]) for s, cause in explained if cause is not None)


def _before(prior: tuple[str, ...], lines: tuple[str, ...], index: int, count: int) -> tuple[str, ...]:
    """The `count` lines before lines[index], the block before's last ones (`prior`) included."""
    return lines[index - count:index] if index >= count else (*prior, *lines[:index])[-count:]


def _last(text: str, count: int) -> list[str]:
    """The last `count` entries of a block's text (fewer where it has fewer), without splitting all of it."""
    start = len(text)
    for _ in range(count):
        start = text.rfind("\n", 0, start)
        if start < 0:
            break
    return text[start + 1:].split("\n")


def _hits(row, block: Block, prior: tuple[str, ...], above_lines: int) -> Iterator[int]:
    """The indices of a block's entries where one of the row's patterns matches, ascending and each once, found by
    searching the whole block's text at once (a match across entries is only a false alarm: the entry is then
    searched alone and shows nothing). A row with `above`: those with its `above` line at most above_lines entries
    up. Every entry, where a pattern cannot be searched so."""
    patterns = _whole_block_patterns(row)
    if patterns is None:
        yield from range(len(block.numbers))
        return
    starts = heapq.merge(*(_starts(pattern, block.text) for pattern in patterns))
    if row.above is not None:
        above = _block_patterns(row.above)
        if above is None:
            yield from range(len(block.numbers))
            return
        marks = sorted({index for pattern in above for index in _starts(pattern, block.text)})
        after_prior = bool(prior) and row.above.search("\n".join(prior)) is not None
        starts = (index for index in starts if (after_prior and index < above_lines)
                  or bisect.bisect_right(marks, index) > bisect.bisect_left(marks, index - above_lines))
    last = -1
    for index in starts:
        if index != last:
            yield index
            last = index


def _starts(pattern: "re.Pattern[str]", text: str) -> Iterator[int]:
    """The index of every line of text (joined by newlines) where a match of pattern starts, ascending: one search from
    the start of each line after the last found (a C-speed pass; Python only once per line found)."""
    position = index = counted = 0
    while True:
        found = pattern.search(text, position)
        if found is None:
            return
        index += text.count("\n", counted, found.start())
        counted = found.start()
        yield index
        position = text.find("\n", found.start()) + 1
        if position == 0:
            return


# A construct whose meaning at a line's start or end differs from its meaning beside a newline: a pattern holding
# one is only ever matched line by line. A lookbehind of one character that is never a newline (guard.py's start of
# a run, `(?<!\w)`) means the same beside a newline as at a line's start.
_EDGE_SENSITIVE = re.compile(r"\\[AZz]|\(\?(?!:|P<|<!(?:\\[wd]|\.)\))")


@functools.lru_cache(maxsize=None)
def _whole_block_patterns(row) -> Optional[tuple["re.Pattern[str]", ...]]:
    """Patterns that find a match in a block's lines joined by newlines whenever a line of it matches the row: each
    pattern's top-level alternatives apart (Python's re scans fast only for a literal start) and with ^ and $ at
    line ends. None: the row's patterns are searched line by line only."""
    patterns: list["re.Pattern[str]"] = []
    for pattern in row.patterns:
        made = _block_patterns(pattern)
        if made is None:
            return None
        patterns.extend(made)
    return tuple(patterns)


@functools.lru_cache(maxsize=None)
def _block_patterns(pattern: "re.Pattern[str]") -> Optional[tuple["re.Pattern[str]", ...]]:
    """One pattern as whole-block patterns (see _whole_block_patterns); None where it cannot be."""
    if _EDGE_SENSITIVE.search(pattern.pattern):
        return None
    try:
        return tuple(re.compile(part, pattern.flags | re.MULTILINE) for part in alternatives(pattern.pattern))
    except re.error:  # an alternative alone is not a pattern (a back-reference): the whole one
        return (re.compile(pattern.pattern, pattern.flags | re.MULTILINE),)
