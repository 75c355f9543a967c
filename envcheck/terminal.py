"""What envcheck writes to standard output and standard error: the one edge where text reaches a terminal.

Text from data (a profile's title, a lock's package names, a node report's findings, a user's log) can hold escape
sequences that clear the screen, move the cursor, rewrite a line after `\\r` (a forged PASS), write the clipboard
(OSC 52) or set the window title. `clean` removes them, and every other control character but newline and tab, and
the Unicode direction overrides that make text read differently from what it is. `guarded` puts a `TerminalStream`
in front of sys.stdout and sys.stderr for the whole command, so that nothing a command prints can forget it.

envcheck's own colours survive: `paint` makes the only escape sequences the streams let through (select graphic
rendition: a colour, dim, reset), so the worst the same bytes in data can do is recolour text, never hide it, move
the cursor or write anywhere. JSON output needs none of this (json.dumps escapes every control character), and is
unchanged by it.

A stream that cannot be written (a pipe whose reader has gone, a full disk) raises OutputError, which the CLI turns
into an exit code without a traceback. Text a stream cannot encode (PYTHONIOENCODING=ascii) is written with
backslash escapes instead of failing.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import sys
from typing import Iterator, Optional, TextIO

__all__ = ["clean", "paint", "COLOURS", "OutputError", "TerminalStream", "guarded", "silence"]

# Select graphic rendition, the only sequences envcheck writes itself (render's status labels).
COLOURS = {"green": "32", "yellow": "33", "red": "31", "dim": "2", "magenta": "35"}
_RESET = "\x1b[0m"
_OWN = frozenset({f"\x1b[{code}m" for code in COLOURS.values()} | {_RESET})

# Escape sequences (ECMA-48): CSI (ESC [ ... final), strings (OSC, DCS, SOS, PM, APC: up to BEL, ST or the end of
# the line), two-character ones (ESC c, ESC 7, ESC D ...), and their 8-bit C1 forms. Both kept as text: re compiles
# them the first time a text holds an introducer (and caches them), not at import (doctor's start-up).
_SEQUENCE = (
    r"\x1b(?:\[[0-?]*[ -/]*[@-~]|[\]PX^_][^\x07\x1b\n]*(?:\x07|\x1b\\)?|[ -/]*[0-~])"
    r"|\x9b[0-?]*[ -/]*[@-~]|[\x90\x98\x9d\x9e\x9f][^\x07\x1b\x9c\n]*(?:\x07|\x9c|\x1b\\)?"
)
_CSI = r"\x1b\[[0-?]*[ -/]*[@-~]"  # the common one (colours), alone: Python's re finds it five times faster
_INTRODUCERS = "\x1b\x9b\x90\x98\x9d\x9e\x9f"
# Every control character left (C0 but tab and newline, DEL, C1), and the direction overrides and isolates: first and
# last of each range. Removed with str.translate from ASCII text; from other text with re.sub, which takes about 1 ns a
# character there where translate takes 100 or more (0.2 s a megabyte: explain read a log of 100 MB holding a few
# non-ASCII characters a block, invalid UTF-8 or a progress bar's blocks, in 18 s, 14 of them here).
_CONTROL_RANGES = ((0x00, 0x08), (0x0B, 0x1F), (0x7F, 0x9F), (0x202A, 0x202E), (0x2066, 0x2069))
_CONTROLS = dict.fromkeys(c for first, last in _CONTROL_RANGES for c in range(first, last + 1))
_CONTROL_CLASS = "[" + "".join(f"\\u{first:04x}-\\u{last:04x}" for first, last in _CONTROL_RANGES) + "]"


def clean(text: str, keep_own: bool = False) -> str:
    """text without escape sequences or control characters, but newlines and tabs. keep_own: envcheck's own colours
    (made by `paint`) are kept; a stream does that, a reader of data does not."""
    if not any(c in text for c in _INTRODUCERS):
        return _without_controls(text)
    if not keep_own:
        text = re.sub(_CSI, "", text)
        if any(c in text for c in _INTRODUCERS):
            text = re.sub(_SEQUENCE, "", text)
        return _without_controls(text)
    parts, start = [], 0
    for found in re.finditer(_SEQUENCE, text):
        parts.append(_without_controls(text[start:found.start()]))
        if found.group() in _OWN:
            parts.append(found.group())
        start = found.end()
    parts.append(_without_controls(text[start:]))
    return "".join(parts)


def _without_controls(text: str) -> str:
    return text.translate(_CONTROLS) if text.isascii() else re.sub(_CONTROL_CLASS, "", text)


def paint(text: str, colour: str) -> str:
    """text in one of COLOURS, for a terminal."""
    return f"\x1b[{COLOURS[colour]}m{text}{_RESET}"


class OutputError(Exception):
    """Standard output or standard error could not be written: its reader has gone (EPIPE) or its disk is full."""

    def __init__(self, name: str, error: OSError):
        super().__init__(f"cannot write {name}: {(error.strerror or str(error)).lower()}")
        self.name, self.errno = name, error.errno

    @property
    def broken_pipe(self) -> bool:
        return self.errno == errno.EPIPE


class TerminalStream:
    """A text stream in front of sys.stdout or sys.stderr: what is written is cleaned (while `cleaning`), and a
    failure to write or flush is an OutputError naming the stream. It has no `buffer`, so that no writer can go
    around it with bytes. A stream that was closed before envcheck started (`>&-`: Python's None) fails on the first
    write, or, where its text is only diagnostics (`2>&-`, discard=True), takes it without a word."""

    def __init__(self, stream: Optional[TextIO], name: str, discard: bool = False):
        self.stream, self.name, self.discard, self.cleaning = stream, name, discard, True
        self.written = False  # anything written yet (cli.main: a command asked for JSON that wrote none gets some)

    def write(self, text: str) -> int:
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        if self.stream is None:
            if self.discard:
                return len(text)
            raise OutputError(self.name, OSError(errno.EBADF, "It is closed"))
        self.written = self.written or bool(text)
        try:
            self.stream.write(clean(text, keep_own=True) if self.cleaning else text)
        except OSError as exc:
            raise OutputError(self.name, exc) from None
        return len(text)

    def writelines(self, lines) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        if self.stream is None:
            return
        try:
            self.stream.flush()
        except OSError as exc:
            raise OutputError(self.name, exc) from None

    def isatty(self) -> bool:
        return self.stream is not None and self.stream.isatty()

    def __getattr__(self, name: str):
        if name == "buffer":
            raise AttributeError(name)
        return getattr(self.stream, name)


@contextlib.contextmanager
def guarded() -> Iterator[tuple[TerminalStream, TerminalStream]]:
    """sys.stdout and sys.stderr behind TerminalStreams for the block (and given back after it). Text they cannot
    encode is written with backslash escapes."""
    saved = sys.stdout, sys.stderr
    streams = []
    for stream, name, discard in ((sys.stdout, "standard output", False), (sys.stderr, "standard error", True)):
        if isinstance(stream, TerminalStream):  # main called from inside main (a test): guarded already
            streams.append(stream)
            continue
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            with contextlib.suppress(Exception):  # a stream that cannot change its error handler keeps its own
                reconfigure(errors="backslashreplace")
        streams.append(TerminalStream(stream, name, discard))
    sys.stdout, sys.stderr = streams
    try:
        yield streams[0], streams[1]
    finally:
        sys.stdout, sys.stderr = saved


def silence(stream: Optional[TextIO]) -> None:
    """Point the file descriptor of a stream that can no longer be written at /dev/null, so that the interpreter's
    last flush at exit cannot fail again (the Python documentation's recipe for SIGPIPE)."""
    try:
        fd = stream.fileno() if stream is not None else -1
    except (AttributeError, OSError, ValueError):
        return
    if fd < 0:
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, fd)
    finally:
        os.close(devnull)
