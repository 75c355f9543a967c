"""Every pattern of the known-failure table (envcheck/causes/signatures.toml), as explain searches it, takes time
linear in the line's length, on lines made to trip it (issue 29 item 5): runs of each character its classes take, its
literal text repeated, cut short, and followed or preceded by such runs. guard.py's rewriting keeps what each pattern
finds (the table's sample lines) and the literal text each match holds (`needles`) is in each sample.

Time is CPU time of this process, against a budget that a linear search stays far below (a few milliseconds for the
longest line here) and a quadratic one far exceeds (`(\\w+Provider) is unavailable` as written took 0.3 s on 16 KiB of
word characters, so about 80 s on the 256 KiB here)."""

from __future__ import annotations

import random
import re
import time

import pytest

from envcheck.causes.guard import REACH, alternatives, guarded, needles
from envcheck.causes.table import TABLE, load_signatures
from envcheck.userfile import tomllib
from test_explain import TABLE_SAMPLES

LENGTH = 256 * 1024  # characters of an adversarial line: 16 windows of explain's reader
BUDGET_S = 1.0  # CPU seconds one search may take on it
PROBES = "a0A _.'\"-:,/()[]=<>x\\"  # characters a class may take: each class is tried with those it matches

ROWS = load_signatures()
WRITTEN = {row["id"]: [*row["patterns"], *([row["above"]] if "above" in row else [])]
           for row in tomllib.loads(TABLE.read_text(encoding="utf-8"))["signature"]}  # as the table writes them
PATTERNS = [(row.id, written, searched) for row in ROWS
            for written, searched in zip(WRITTEN[row.id], (*row.patterns, *([row.above] if row.above else [])))]


def adversarial_lines(source: str, length: int = LENGTH) -> dict[str, str]:
    """Lines of `length` characters made from a pattern to make a backtracking search slow: a run of every character
    it takes in a repeat; each of its needles repeated, and followed and preceded by each run; each prefix of it
    (its literal text, one character for each class) repeated."""
    runs = {c for c in PROBES if any(re.fullmatch(part, c) for part in _atoms(source))} | {"a", " "}
    texts = {f"run {c!r}": c for c in runs}
    for needle in needles(source) or ():
        texts[f"needle {needle!r}"] = needle
        for c in runs:
            texts[f"needle {needle!r} then {c!r}"] = needle + c * length
            texts[f"{c!r} then needle {needle!r}"] = c * length + " " + needle
    for alternative in alternatives(source):
        for end in range(1, len(alternative) + 1):
            try:
                prefix = _example(alternative[:end])
            except re.error:
                continue
            if prefix:
                texts[f"prefix {alternative[:end]!r}"] = prefix
    return {name: (text * (length // max(1, len(text)) + 1))[:length] for name, text in texts.items()}


def _atoms(source: str) -> list[str]:
    """The character classes of a pattern, as patterns of one character: [..], \\w and such, and `.`."""
    tokens = re.findall(r"\\.|\[\^?\]?(?:\\.|[^]\\])*\]|\.", source)
    return [t for t in tokens if not t.startswith("\\") or t[1] in "dDwWsS"]


def _example(part: str) -> str:
    """Text that the start of a pattern could begin a match with: its literals, one probe for each class (a
    quantifier's once), groups opened and not closed dropped."""
    re.compile(part)  # only whole prefixes: an open group or class is not one
    out = []
    for token in re.findall(r"\\.|\[(?:\\.|[^]\\])+\]|\(\?:|\(\?P<\w+>|[()|?*+]|\{\d*,?\d*\}|.", part):
        if token in "()|?*+" or token.startswith(("(?", "{")):
            continue
        if token.startswith("\\") and token[1] not in "dDwWsS":
            out.append(token[1])
        elif token.startswith(("[", "\\")) or token == ".":
            out.append(next((c for c in PROBES if re.fullmatch(token, c)), "a"))
        else:
            out.append(token)
    return "".join(out)


@pytest.mark.parametrize("row_id, written, pattern", PATTERNS, ids=[f"{r}:{w[:40]}" for r, w, _ in PATTERNS])
def test_every_pattern_is_searched_in_linear_time_on_lines_made_to_trip_it(row_id, written, pattern):
    assert pattern.pattern == guarded(written)  # the table is searched as guard.py makes it
    slowest = (0.0, "")
    for name, line in adversarial_lines(written).items():
        began = time.process_time()
        pattern.search(line)
        slowest = max(slowest, (time.process_time() - began, name))
    assert slowest[0] < BUDGET_S, f"{row_id}: {pattern.pattern!r} took {slowest[0]:.2f} s on {slowest[1]}"


def test_the_adversarial_lines_trip_a_pattern_that_is_not_guarded():
    """The lines above catch the pattern that hung explain (issue 29 item 5), as written, on a shorter line."""
    unguarded = re.compile(r"(\w+Provider) is unavailable: install")
    lines = adversarial_lines(unguarded.pattern, length=4 * 1024)
    began = time.process_time()
    for line in lines.values():
        unguarded.search(line)
    quadratic = time.process_time() - began
    began = time.process_time()
    for line in lines.values():
        re.compile(guarded(unguarded.pattern)).search(line)
    assert time.process_time() - began < quadratic / 20


@pytest.mark.parametrize("source, made", [
    (r"(\w+Provider) is unavailable: install", r"(?<!\w)(\w+Provider) is unavailable: install"),
    (r".*Error: x", r"(?<!.).*Error: x"),
    (r"[0-9]+ ms|a+b", r"(?<![0-9])[0-9]+ ms|(?<!a)a+b"),  # each alternative by itself
    (r"(?i)\s*foo", r"(?i)(?<!\s)\s*foo"),  # the global flags stay first
    (r"(?P<name>\w+?)Foo", r"(?<!\w)(?P<name>\w+?)Foo"),
    (r"\w{2,5}Foo", r"\w{2,5}Foo"),  # bounded: its match may start inside a run ("aaaaaaFoo")
    (r"x.*y", r"x.{0,%d}y" % REACH),
    (r"x[^']*?'", r"x[^']{0,%d}?'" % REACH),  # lazy stays lazy
    (r"x\d+y\d{2,}", r"x\d{1,%d}y\d{2,%d}" % (REACH, REACH)),
    (r"x(?:\.[\w.]+)?", r"x(?:\.[\w.]{1,%d})?" % REACH),
    (r"x\d?y{2}z{1,3}", r"x\d?y{2}z{1,3}"),  # bounded already
    (r"a\+b\*c\{2,\}", r"a\+b\*c\{2,\}"),  # escaped: no repeat
    (r"[*+]x|[]+]y", r"[*+]x|[]+]y"),  # in a class: no repeat
    (r"No module named '(torch)'", r"No module named '(torch)'"),
])
def test_guarded(source, made):
    assert guarded(source) == made
    re.compile(made)


@pytest.mark.parametrize("source, found", [
    (r"No module named '(torch)'", ("No module named 'torch'",)),  # a plain group is part of the text
    (r"(\w+Provider) is unavailable: install", ("Provider is unavailable: install",)),
    (r"Found GPU[0-9]+ .* which is of compute capability \(CC\) ([0-9]+)", (" which is of compute capability (CC) ",)),
    (r"aaaa|bbbbb", ("aaaa", "bbbbb")),  # one per alternative
    (r"No choices (?:exist|to select)", ("No choices ",)),  # a group of alternatives ends the run
    (r"Foobar(?:Error)?", ("Foobar",)),  # an optional group is not held
    (r"Fooo+bar", ("Fooo",)),  # one o is certain, then the run ends
    (r"Foox*barr", ("barr",)),
    (r"Foo\.bar\(\)", ("Foo.bar()",)),  # escaped punctuation is literal
    (r"abc|\d+", None),  # an alternative without one: the row has none
    (r"(?i)foobar", None),  # case ignored: `in` cannot tell
    (r"xyz", None),  # shorter than MIN_NEEDLE
])
def test_needles(source, found):
    assert needles(source) == found


@pytest.mark.parametrize("row_id, lines", TABLE_SAMPLES.items())
def test_the_guarded_table_finds_what_the_table_found_and_each_match_holds_a_needle(row_id, lines):
    row = next(r for r in ROWS if r.id == row_id)
    for line in lines:
        written = [re.compile(p).search(line) for p in WRITTEN[row_id][:len(row.patterns)]]
        made = [p.search(line) for p in row.patterns]
        assert [m and m.group(0) for m in made] == [m and m.group(0) for m in written], line
        assert row.needles is not None and any(needle in line for needle in row.needles), line


@pytest.mark.parametrize("row_id, written, pattern", PATTERNS, ids=[f"{r}:{w[:40]}" for r, w, _ in PATTERNS])
def test_a_guarded_pattern_finds_the_same_match_as_written_on_lines_shorter_than_its_reach(row_id, written, pattern):
    """Lines pieced together from the pattern's own parts (its needles, the starts of a match, runs of the characters
    its classes take) and the table's sample lines: the guarded pattern matches where, and what, the table's does."""
    rng = random.Random(29)
    parts = [*(text[:40] for text in adversarial_lines(written, length=40).values()), *TABLE_SAMPLES[row_id], " ", "\n"]
    table = re.compile(written)
    for _ in range(300):
        line = "".join(rng.choice(parts) for _ in range(rng.randrange(1, 8)))
        expected, found = table.search(line), pattern.search(line)
        assert (found and (found.span(), found.groups())) == (expected and (expected.span(), expected.groups())), line
