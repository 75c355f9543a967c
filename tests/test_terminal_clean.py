"""envcheck.terminal.clean removes the same characters from text that is all ASCII (str.translate) and from text that
is not (a regular expression, a hundred times faster there: issue 29 item 5, explain on a log of non-ASCII lines)."""

from __future__ import annotations

import random

import pytest

from envcheck.terminal import _CONTROLS, clean

# Every kind of character: ASCII text, tab and newline (kept), C0, DEL, C1 (no escape introducer: those take text
# with them), the direction overrides and isolates and their neighbours (kept), Latin-1, a block of a progress bar, an
# emoji, the replacement character of invalid UTF-8.
POOL = ("abc XYZ 019 .:/'", "\t", "\n", "\x00", "\x07", "\x0b", "\x1f", "\x7f", "\x80", "\x85", "\x9c", "\xa0", "é",
        "\u2029", "\u202a", "\u202e", "\u202f", "\u2065", "\u2066", "\u2069", "\u206a", "█", "\U0001f600", "\ufffd")
KEPT = {"abc XYZ 019 .:/'", "\t", "\n", "\xa0", "é", "\u2029", "\u202f", "\u2065", "\u206a", "█", "\U0001f600", "\ufffd"}


@pytest.mark.parametrize("seed", range(20))
def test_clean_removes_the_same_controls_from_ascii_and_other_text(seed):
    rng = random.Random(seed)
    parts = [rng.choice(POOL) for _ in range(rng.randrange(1, 60))]
    text = "".join(parts)
    assert clean(text) == "".join(p for p in parts if p in KEPT) == text.translate(_CONTROLS)
    ascii_only = "".join(p for p in parts if p.isascii())
    assert ascii_only.isascii() and clean(ascii_only) == "".join(p for p in parts if p.isascii() and p in KEPT)


def test_a_megabyte_of_non_ascii_text_is_cleaned_whole():
    line = "Grüße \x00aus\x85 Köln █ \u202eevil\u202c \ufffd\n"
    text = line * (1 << 20 // len(line))
    assert clean(text) == "Grüße aus Köln █ evil \ufffd\n" * (1 << 20 // len(line))
