"""shell: the one way envcheck writes a word or a command line that a shell will read.

Every `$` line envcheck prints (doctor's remedies, fix's plan and log, explain, smoke, the "run this" hints), the
shell words of the generated Dockerfile and the option values of an exported requirements file come from here, so
that a value from a profile, a lock, a flag or the target environment stays one word for the program that reads it:
never a second command, a redirection, an expansion, or a new line.

- `word(text)`: shlex.quote, which bash, POSIX sh, Docker's own word parser and pip's option parser all read back
  as the same single word; a text holding a line break or a control character is written in bash's `$'...'` form
  instead, so that a printed command is always one line, shows no control character, and pastes back exactly.
  A word that starts with `~/` (a home path as redaction writes it) keeps the `~` outside the quotes, so that the
  shell expands it to the home folder it stands for.
- `line(argv)`: the words of argv joined by spaces (shlex.join, with the rules above).
- `unsafe_character(text)`: the first character that would end a line or hide text for Docker, pip, Python's
  `str.splitlines` or a terminal, or None; the validators of profiles and locks refuse values that hold one.
- `is_bare(text)`: the text is a word already, the same with or without quoting.
"""

from __future__ import annotations

import re
import shlex
from typing import Iterable, Optional

__all__ = ["word", "line", "unsafe_character", "is_bare", "describe"]

# C0 (tab included), DEL and C1 controls, the line and paragraph separators (str.splitlines and pip split on them,
# and on \x1c-\x1e, \x85), and the invisible formatting characters that make text read differently from what it is
# (zero-width spaces and marks, bidirectional overrides and isolates, the byte order mark).
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ud800-\udfff]")
_BARE = re.compile(r"[A-Za-z0-9_@%+=:,./-]+")  # what shlex.quote leaves unquoted
# In $'...': a quote and a ! as hex, so that no reader (an interactive bash's history expansion) sees either.
_ESCAPES = {"\\": "\\\\", "'": "\\x27", "!": "\\x21", "\n": "\\n", "\t": "\\t", "\r": "\\r"}


def unsafe_character(text: str) -> Optional[str]:
    """The first line break, control or invisible formatting character in text, or None."""
    found = _UNSAFE.search(text)
    return found.group() if found else None


def describe(character: str) -> str:
    """A character as an error message names it: U+000A."""
    return f"U+{ord(character):04X}"


def is_bare(text: str) -> bool:
    """text is one word as it is: no shell, Docker or pip reading changes it."""
    return bool(_BARE.fullmatch(text))


def word(text: str) -> str:
    """text as one shell word."""
    if text == "~" or text.startswith("~/"):  # a home path: the shell expands the unquoted ~
        rest = text[2:]
        return "~/" + word(rest) if rest else text
    if unsafe_character(text) is None:
        return shlex.quote(text)
    return "$'" + "".join(_ESCAPES.get(ch) or (_bytes(ch) if _UNSAFE.match(ch) else ch) for ch in text) + "'"


def _bytes(character: str) -> str:
    """A character as the \\xHH escapes of its UTF-8 bytes: the same in every locale (bash's \\u is not)."""
    try:
        data = character.encode("utf-8", "surrogateescape")  # a byte of a file name that was not UTF-8
    except UnicodeEncodeError:
        data = character.encode("utf-8", "surrogatepass")
    return "".join(f"\\x{byte:02x}" for byte in data)


def line(argv: Iterable[str]) -> str:
    """argv as one shell command line."""
    return " ".join(word(arg) for arg in argv)
