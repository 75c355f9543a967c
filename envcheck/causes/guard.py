"""A signature's pattern made safe to search in a line of any length, and the words every match of it holds.

Python's re backtracks: a pattern can take time quadratic (or worse) in the length of the line it is searched in.
`(\\w+Provider) is unavailable` took 0.3 s on one 16 KiB line of word characters (a base64 blob) and 13 s on a 400 KB
log of them: every start in the run tries the whole run again. `guarded` rewrites a pattern, once when the table is
read, so that its cost stays linear, and so that it finds what the pattern found:

- a pattern (a top-level alternative) that starts with a repeat of one character class (`\\w+...`, `.*...`) is tried
  only where a run of that class starts (a lookbehind, `(?<!\\w)\\w+...`): the leftmost match starts there anyway,
  since the repeat can always take the run's characters before any later start;
- every other unbounded repeat (`*`, `+`, `{m,}`) is bounded at REACH characters: after each start of its prefix it
  looks no further than that, not to the line's end (a message whose repeated part is longer is not one of the
  table's: an argument list, a path, a version).
A repeat inside a repeated group that can match the same text two ways (`(a+)+`, `(\\w|\\d)*`) is exponential still:
tests/test_explain_adversarial.py searches every row of the table in lines made to trip it, and fails on such a row.

`needles` reads the literal text each alternative of a pattern cannot match without (its longest run of plain
characters): a block of a log holding none of a row's needles cannot match it, and `needle in text` is a few times
faster than searching the pattern.

Only the syntax of Python's re is read here, a token at a time; nothing of a pattern runs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterator, Optional

__all__ = ["REACH", "MIN_NEEDLE", "guarded", "needles", "alternatives"]

REACH = 512  # characters an unbounded repeat of a signature matches at most
MIN_NEEDLE = 4  # a shorter literal filters too little to be worth a search of its own

# A quantifier: ?, *, +, {m}, {m,}, {,n}, {m,n}, each maybe lazy (?) or possessive (+, Python 3.11).
_QUANTIFIER = re.compile(r"(?:([?*+])|\{(?:(\d+)(,(\d*))?|,(\d+))\})([?+]?)")
_CLASS_ESCAPES = "dDwWsS"
_ANCHOR_ESCAPES = "bBAZ"
_GLOBAL_FLAGS = re.compile(r"\(\?[aiLmsux]+\)")


@dataclass(frozen=True)
class _Token:
    kind: str  # literal, class (one character of a set), open, close, alt, anchor, repeat, other
    text: str
    value: str = ""  # literal: the character it matches
    least: int = 0  # repeat: its bounds (most None: unbounded)
    most: Optional[int] = 0
    suffix: str = ""  # repeat: "?" lazy, "+" possessive


def _tokens(source: str) -> Iterator[_Token]:
    """A pattern's tokens, in order; their texts joined are the pattern."""
    index, length = 0, len(source)
    while index < length:
        char = source[index]
        if char == "\\":
            escaped = source[index + 1: index + 2]
            text = source[index: index + 2]
            index += 2
            if escaped in _CLASS_ESCAPES:
                yield _Token("class", text)
            elif escaped in _ANCHOR_ESCAPES:
                yield _Token("anchor", text)
            elif escaped and not escaped.isalnum():
                yield _Token("literal", text, escaped)
            else:  # \n, \x41, \u00e9, \1: one character or a back-reference, not read as text here
                digits = {"x": 2, "u": 4, "U": 8, "0": 2}.get(escaped, 0)
                text += source[index: index + digits]
                index += digits
                yield _Token("other", text)
        elif char == "[":
            end = index + 1
            end += source[end: end + 1] == "^"
            end += source[end: end + 1] == "]"  # a ] first in a class is a character of it
            while end < length and source[end] != "]":
                end += 2 if source[end] == "\\" else 1
            yield _Token("class", source[index: end + 1])
            index = end + 1
        elif char == "(":
            opened = re.match(r"\((?:\?(?:[:=!>]|<[=!]|P<\w+>|[aiLmsux-]+:|#[^)]*\)|P=\w+\)|[aiLmsux]+\)|\(\w+\)))?",
                              source[index:])
            text = opened.group(0)
            index += len(text)
            if text.startswith("(?P="):  # a named back-reference
                yield _Token("other", text)
            elif text.endswith(")") and not text.startswith("(?("):  # a comment, flags: they match nothing
                yield _Token("anchor", text)
            else:  # a group, or a conditional's (its test said)
                yield _Token("open", text)
        elif char == ")":
            yield _Token("close", char)
            index += 1
        elif char == "|":
            yield _Token("alt", char)
            index += 1
        elif char in "^$":
            yield _Token("anchor", char)
            index += 1
        elif char == ".":
            yield _Token("class", char)
            index += 1
        else:
            found = _QUANTIFIER.match(source, index)
            if found and (found.group(1) or found.group(2) or found.group(5)):
                sign, least, comma, most, only_most, suffix = found.groups()
                if sign:
                    bounds = {"?": (0, 1), "*": (0, None), "+": (1, None)}[sign]
                elif only_most is not None:
                    bounds = (0, int(only_most))
                else:
                    bounds = (int(least), int(most) if most else None if comma else int(least))
                yield _Token("repeat", found.group(0), least=bounds[0], most=bounds[1], suffix=suffix)
                index = found.end()
            else:
                yield _Token("literal", char, char)
                index += 1


def alternatives(source: str) -> list[str]:
    """A pattern's top-level alternatives ("a|b(c|d)" -> "a", "b(c|d)")."""
    parts: list[list[str]] = [[]]
    depth = 0
    for token in _tokens(source):
        depth += (token.kind == "open") - (token.kind == "close")
        if token.kind == "alt" and depth == 0:
            parts.append([])
        else:
            parts[-1].append(token.text)
    return ["".join(part) for part in parts]


def _plain(token: _Token) -> bool:
    """Whether a token opens a group that only groups: a capture, (?:...), (?P<name>...)."""
    return token.kind == "open" and (token.text in ("(", "(?:") or token.text.startswith("(?P<"))


def _leading_repeat(tokens: list[_Token]) -> Optional[int]:
    """The index of the class an alternative starts with (after the groups it opens) where an unbounded repeat
    follows it, if any."""
    index = 0
    while index < len(tokens) and _plain(tokens[index]):
        index += 1
    if index + 1 < len(tokens) and tokens[index].kind in ("class", "literal") and tokens[index + 1].kind == "repeat":
        if tokens[index + 1].most is None:  # bounded, a later start can match where the run's cannot (\w{2,5}F)
            return index
    return None


def guarded(source: str) -> str:
    """The pattern rewritten to search in linear time (see the module's words)."""
    flags = _GLOBAL_FLAGS.match(source)
    head, body = (flags.group(0), source[flags.end():]) if flags else ("", source)
    parts = []
    for alternative in alternatives(body):
        tokens = list(_tokens(alternative))
        leading = _leading_repeat(tokens)
        text = []
        for index, token in enumerate(tokens):
            if index == 0 and leading is not None:
                text.append(f"(?<!{tokens[leading].text})")
            if token.kind == "repeat" and token.most is None and index - 1 != leading:
                text.append(f"{{{token.least},{max(token.least, REACH)}}}{token.suffix}")
            else:
                text.append(token.text)
        parts.append("".join(text))
    return head + "|".join(parts)


def needles(source: str) -> Optional[tuple[str, ...]]:
    """The literal text each top-level alternative of the pattern holds in every match (its longest run of plain
    characters outside any repeat, optional part or alternation), one per alternative; None where one has none of
    MIN_NEEDLE characters, or the pattern ignores case."""
    flags = _GLOBAL_FLAGS.match(source)
    if flags and "i" in flags.group(0):
        return None
    found = []
    for alternative in alternatives(source[flags.end():] if flags else source):
        best = _longest_literal(list(_tokens(alternative)))
        if len(best) < MIN_NEEDLE:
            return None
        found.append(best)
    return tuple(dict.fromkeys(found))


def _longest_literal(tokens: list[_Token]) -> str:
    """The longest run of literal characters that every match holds: in no group but a plain one (a capture or
    (?:...), neither repeated nor holding alternatives), none of them repeated or optional."""
    required = _required_groups(tokens)
    best, run = "", ""
    depth_ok: list[bool] = []  # per open group: whether its content is required
    for index, token in enumerate(tokens):
        following = tokens[index + 1] if index + 1 < len(tokens) else None
        if token.kind == "open":
            depth_ok.append(index in required)
            if index not in required:
                run = ""
            continue
        if token.kind == "close":
            if depth_ok and not depth_ok.pop():
                run = ""
            continue
        counts = all(depth_ok)
        if token.kind == "literal" and counts and not (following and following.kind == "repeat"):
            run += token.value
            best = max(best, run, key=len)
            continue
        if token.kind == "literal" and counts and following.least >= 1:  # a+: one a is certain, then the run ends
            best = max(best, run + token.value, key=len)
        run = ""
    return best


def _required_groups(tokens: list[_Token]) -> set[int]:
    """The indices of the groups whose content every match holds: plain ones (a capture or (?:...)), not repeated
    and holding no alternation of their own."""
    required, stack = set(), []  # stack: (index of the open token, holds an alternation)
    for index, token in enumerate(tokens):
        if token.kind == "open":
            stack.append([index, not _plain(token)])
        elif token.kind == "alt" and stack:
            stack[-1][1] = True
        elif token.kind == "close" and stack:
            opened, other = stack.pop()
            following = tokens[index + 1] if index + 1 < len(tokens) else None
            if not other and not (following is not None and following.kind == "repeat"):
                required.add(opened)
    return required
