"""How envcheck words what it prints for people: a count with its noun in the right number, and text wrapped at word
boundaries to the width it is read at.

One wrapping for every renderer: a line is broken only between words, never inside one (a path, a URL or a
requirement longer than the line keeps a line of its own), and a command line (`$ ARGV`) is never broken, so that
it pastes as one line. The width is the terminal's where standard output is one; piped or written to a file, it is
`COLUMNS`, or 80 where that is not set.
"""

from __future__ import annotations

import os
import re
import sys
import textwrap
from typing import Mapping, Optional, TextIO

__all__ = ["counted", "columns", "wrap", "fit", "write_wrapped", "DEFAULT_COLUMNS", "NARROWEST"]

DEFAULT_COLUMNS = 80  # piped without COLUMNS
NARROWEST = 40  # below this a hanging indent leaves too little room: lines run longer instead

# A line's hanging part: its indentation, then a list mark ("- ", "3. ") or a label followed by a gap of two or more
# spaces ("fix       ", "seen      "); its continuation lines start under the text after it.
_HANG = re.compile(r"( *)((?:[-*] |\d+\. )|(?:[A-Za-z][\w.-]*:? {2,}))?")
# envcheck's own colours (terminal.paint): they take no columns.
_SGR = re.compile(r"\x1b\[[0-9;]*m")


def counted(count: int, noun: str, plural: Optional[str] = None) -> str:
    """`1 line`, `2 lines`, `0 lines`: the count and its noun (plural: where it is not noun + "s")."""
    return f"{count} {noun if count == 1 else plural or noun + 's'}"


def columns(stream: Optional[TextIO] = None, env: Optional[Mapping[str, str]] = None) -> int:
    """The width text is read at: the terminal's, where `stream` (standard output) is one; else COLUMNS; else 80."""
    stream = sys.stdout if stream is None else stream
    try:
        if stream.isatty():
            return os.get_terminal_size(stream.fileno()).columns or DEFAULT_COLUMNS
    except (AttributeError, OSError, ValueError):
        pass
    value = (os.environ if env is None else env).get("COLUMNS", "")
    return int(value) if value.strip().isdigit() and int(value) > 0 else DEFAULT_COLUMNS


def _width(text: str) -> int:
    return len(_SGR.sub("", text))


def wrap(text: str, width: int, first: str = "", rest: Optional[str] = None) -> list[str]:
    """text as lines of at most `width` columns, broken between words only: `first` before the first line, `rest`
    (default: as many spaces as `first`) before the others. A word longer than a line keeps a line of its own."""
    rest = " " * _width(first) if rest is None else rest
    if _width(first + text) <= width:
        return [first + text]
    bare = _SGR.sub("", first)  # textwrap would count a label's colour codes as columns
    lines = textwrap.wrap(text, max(width, NARROWEST), initial_indent=bare, subsequent_indent=rest,
                          break_long_words=False, break_on_hyphens=False)
    if not lines:
        return [first.rstrip()]
    return [first + lines[0][len(bare):], *lines[1:]]


def fit(text: str, width: int) -> str:
    """Every line of text wrapped to `width` (`wrap`), each continued under its own text: after its indentation and
    its list mark or label. Command lines (`$ ...`) and blank lines are kept as they are."""
    out = []
    for line in text.split("\n"):
        stripped = line.lstrip(" ")
        if _width(line) <= width or stripped.startswith("$ ") or not stripped:
            out.append(line)
            continue
        hang = _HANG.match(line)
        head = hang.group(0) if hang and hang.group(2) else hang.group(1) if hang else ""
        body = line[len(head):]
        if body.startswith("$ "):  # a command after its label: `check     $ envcheck doctor ...`
            out.append(line)
            continue
        rest = " " * _width(head) if hang and hang.group(2) else " " * (len(head) + 2)
        if _width(rest) > width // 2:  # a label so wide that little is left: continue two columns in
            rest = " " * (len(hang.group(1) if hang else "") + 2)
        out.extend(wrap(body, width, head, rest))
    return "\n".join(out)


def write_wrapped(stream: TextIO, env: Optional[Mapping[str, str]], text: str) -> None:
    """Text for people on `stream` (and a newline), fitted to the width it is read at (`columns`); nothing for ""."""
    if text:
        stream.write(fit(text, columns(stream, env)) + "\n")
