"""A user's log read as untrusted input: its lines, decoded leniently and cleaned, a block at a time, in bounded memory
and in time linear in its size, whatever its shape.

- A line of at most MAX_LINE bytes is one entry. A longer one (a traceback printed on one line, a log without a
  newline, /dev/zero's endless line) is searched in windows of MAX_LINE bytes, each starting OVERLAP bytes before the
  end of the one before, and every window is numbered as its line: a match of up to OVERLAP bytes anywhere in the
  line is whole in one window, at its end too. A window that does not start its line begins with CONTINUED, so that
  neither `^` nor an exception's name at a line's start matches inside a line.
- What is kept is one block (BLOCK bytes read, its windows) and the unfinished line's last window: never a whole
  line, never the log.
- Terminal escape sequences and control characters are removed (envcheck.terminal.clean), NUL bytes with them: a log
  whose writer was cut off (a file truncated under a process that kept writing, sparse with NULs) or written as UTF-16
  is read as its text. A file whose start is mostly neither text nor NUL (a binary, an archive) is refused.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import IO, Iterator, Optional, Sequence

from ..errors import UsageError
from ..terminal import clean

__all__ = ["MAX_LINE", "OVERLAP", "BLOCK", "CONTINUED", "LogLine", "Block", "LogReader", "clean_line"]

MAX_LINE = 16 * 1024  # bytes of a line searched at once; a longer line is searched in windows of this size
OVERLAP = 1024  # bytes a window shares with the one before it: a match up to this long is whole in one window
BLOCK = 1 << 20  # bytes read at a time; their lines are cleaned and searched together
CONTINUED = "\u2026"  # "…": the start of a window inside a line
SAMPLE = 1 << 16  # bytes of a log's start looked at to tell a binary file
BINARY = 0.25  # the share of that sample (NULs aside) that is neither text nor whitespace in a binary file

# The bytes no text holds: the C0 controls but tab, newline, vertical tab, form feed, carriage return, backspace and
# escape (a log's own), and DEL. Invalid UTF-8 counts with them.
_NOT_TEXT = bytes(c for c in [*range(0x01, 0x08), 0x0E, *range(0x0F, 0x1B), *range(0x1C, 0x20), 0x7F])


def clean_line(text: str) -> str:
    """text without terminal escape sequences or control characters, on one line (a tab becomes a space)."""
    return clean(text).replace("\n", "").replace("\t", " ")


@dataclass(frozen=True)
class LogLine:
    number: int  # 1-based
    text: str  # cleaned


@dataclass(frozen=True)
class Block:
    """Entries read together (lines, and the windows of long lines): their cleaned texts joined by newlines, and the
    number of the line each entry is (or is a window of), ascending."""

    text: str
    numbers: Sequence[int]  # a range where every entry is a line of its own

    @property
    def first(self) -> int:
        return self.numbers[0]

    @functools.cached_property
    def lines(self) -> tuple[str, ...]:
        """The entries' texts: split only where a search looks at them one by one."""
        return tuple(self.text.split("\n"))


def _binary(sample: bytes) -> Optional[str]:
    """Why a log's first bytes are not text (a share of them neither text nor NUL), or None."""
    data = sample.replace(b"\x00", b"")
    if not data:
        return None
    decoded = data.decode("utf-8", errors="replace")
    odd = decoded.count("\ufffd") + len(data) - len(data.translate(None, _NOT_TEXT))
    if odd < BINARY * len(decoded):
        return None
    return f"{odd * 100 // len(decoded)}% of its first {len(sample)} bytes, NULs aside, are neither text nor whitespace"


def _maybe_long(data: bytes, half: int) -> bool:
    """Whether data may hold a line longer than 2 * half - 1 bytes: a run without a newline that long covers one of
    the pieces of `half` bytes at multiples of `half`, so a newline in each of those says no (a few memchr calls)."""
    return any(data.find(b"\n", start, start + half) < 0 for start in range(0, len(data) - half + 1, half))


class LogReader:
    """A log's entries, read to the end a block at a time. Iterate once (entries, or `blocks()`); afterwards
    `lines_read` says how many lines there were."""

    def __init__(self, stream: IO[bytes], max_line: int = MAX_LINE, block: int = BLOCK,
                 overlap: Optional[int] = None):
        self.stream, self.max_line, self.block = stream, max_line, block
        self.overlap = min(OVERLAP, max_line // 4) if overlap is None else overlap
        if not 0 <= self.overlap < max_line:
            raise ValueError("overlap must be shorter than max_line")
        self.lines_read = 0

    def __iter__(self) -> Iterator[LogLine]:
        for block in self.blocks():
            yield from (LogLine(number, text) for number, text in zip(block.numbers, block.lines))

    def blocks(self) -> Iterator[Block]:
        """Each block decoded and cleaned at once: a 100 MB log is read in about a second."""
        for raw, numbers, continued in self._raw_blocks():
            text = clean(raw.decode("utf-8", errors="replace")).replace("\t", " ")
            if continued:
                lines = text.split("\n")
                for index in continued:
                    lines[index] = CONTINUED + lines[index]
                text = "\n".join(lines)
            yield Block(text, numbers)

    def _raw_blocks(self) -> Iterator[tuple[bytes, Sequence[int], tuple[int, ...]]]:
        """Each block's entries as bytes joined by newlines, their line numbers, and which of them continue a line."""
        size, step = self.max_line, self.max_line - self.overlap
        rest = b""  # the unfinished line, from its last window's overlap where windows of it were read already
        inside = False  # windows of the unfinished line were read already
        first, ended = True, False  # ended: a read returned nothing (a terminal's Ctrl-D is read once)
        while not ended:
            data = self.stream.read(self.block)
            ended = not data
            if first:  # the log's start, SAMPLE bytes of it however it is read, says whether it is text at all
                while not ended and len(data) < SAMPLE:
                    more = self.stream.read(self.block)
                    ended = not more
                    data += more
                why = _binary(data[:SAMPLE])
                if why:
                    raise UsageError(f"not a text log ({why}): expected a log or traceback")
                first = False
            if not data:
                break
            data = rest + data if rest else data
            end = data.rfind(b"\n")
            complete, rest = (data[:end], data[end + 1:]) if end >= 0 else (None, data)
            entries: list[bytes] = []
            numbers: list[int] = []
            continued: list[int] = []
            if complete is not None:
                if not inside and not _maybe_long(complete, size // 2):  # the common case: every line whole
                    count = complete.count(b"\n") + 1
                    yield complete, range(self.lines_read + 1, self.lines_read + 1 + count), ()
                    self.lines_read += count
                else:
                    for line in complete.split(b"\n"):
                        self.lines_read += 1
                        self._windows(line, self.lines_read, inside, entries, numbers, continued)
                        inside = False
            while len(rest) > size:  # an unfinished line longer than a window: its windows so far
                self._windows(rest[:size], self.lines_read + 1, inside, entries, numbers, continued)
                rest, inside = rest[step:], True
            if entries:
                yield b"\n".join(entries), numbers, tuple(continued)
        if rest or inside:  # the last line had no newline
            self.lines_read += 1
            entries, numbers, continued = [], [], []
            self._windows(rest, self.lines_read, inside, entries, numbers, continued)
            if entries:
                yield b"\n".join(entries), numbers, tuple(continued)

    def _windows(self, line: bytes, number: int, inside: bool, entries: list, numbers: list, continued: list) -> None:
        """A line's entries, each numbered `number`, added to entries: the line where it is short, else its windows.
        inside: the line starts with the last OVERLAP bytes of a window of it read already, so only what follows that
        is new."""
        if inside and len(line) <= self.overlap:
            return  # all of it was in the window before
        size, step = self.max_line, self.max_line - self.overlap
        start = 0
        while True:
            if inside or start:
                continued.append(len(entries))
            entries.append(line[start:start + size])
            numbers.append(number)
            if start + size >= len(line):
                return
            start += step
