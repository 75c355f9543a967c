"""envcheck.shell, the one renderer of shell words: every hostile text comes back from a real bash as the very word it
was, on one line, with nothing run and no file made; what pip and Docker split lines on is flagged."""

from __future__ import annotations

import shlex

import pytest

from shellstubs import Stubs

from envcheck.shell import is_bare, line, unsafe_character, word

HOSTILE = [
    "nvidia-cutlass-dsl<=4.3.5,>=4.3.0",  # issue 16: unquoted, a redirection
    "python/cutlass_api$(touch${IFS}MARK)",  # issue 15: a command substitution
    "`touch MARK`", "a; touch MARK", "a && touch MARK", "a || touch MARK", "a | tee MARK", "a > MARK", "a < MARK",
    "a & touch MARK", "#a", "a #b", "${IFS}", "$HOME", "$(", "'", "'\"'\"'", '"', "\\", "a\\", "*", "?", "[a]", "!!",
    "{a,b}", "~user", "a b\tc", "-rf", "",
    "a\ntouch MARK", "a\rtouch MARK", "a\u2028touch MARK", "a\u2029b", "a\x85b", "a\x0bb", "a\x0cb", "a\x1cb",
    "it's !! \n!x \\", "\x1b]52;c;b3duZWQ=\x07", "\x1b[2J", "a\u202eb", "a\x01b", "\udcff", "日本語", "é",
]


@pytest.mark.parametrize("text", HOSTILE, ids=repr)
def test_a_word_pastes_back_as_itself_and_runs_nothing(tmp_path, text):
    stubs = Stubs(tmp_path, ["prog"])
    shown = line(["prog", text, "after"])
    assert unsafe_character(shown) is None, "a printed command is one line, with no control character"
    stubs.expect(shown, ["prog", text, "after"])


@pytest.mark.parametrize("text", [t for t in HOSTILE if unsafe_character(t) is None], ids=repr)
def test_a_word_is_one_word_for_shlex_too(text):
    """pip reads a requirements line's options with shlex; Docker's parser reads quotes the same way."""
    assert shlex.split(word(text)) == [text]


def test_a_home_path_keeps_its_tilde_for_the_shell(tmp_path):
    stubs = Stubs(tmp_path, ["prog"])
    home = str(stubs.home)
    for text, expanded in [("~", home), ("~/", f"{home}/"), ("~/my env/$x", f"{home}/my env/$x"), ("~/a\nb", f"{home}/a\nb")]:
        stubs.expect(line(["prog", text]), ["prog", expanded])
    stubs.expect(line(["prog", "~user/x"]), ["prog", "~user/x"])  # another user's: literal


def test_every_character_a_line_splits_on_is_unsafe():
    """str.splitlines is how pip reads a requirements file and Python a text: each of its breaks, and every control
    character, is flagged."""
    for code in range(0x3000):
        character = chr(code)
        if len(f"a{character}b".splitlines()) > 1 or code < 0x20 or 0x7f <= code <= 0x9f:
            assert unsafe_character(f"x{character}y") == character, hex(code)
    for fine in ("plain", "é", "日本語", "a b", "$(x)"):
        assert unsafe_character(fine) is None


@pytest.mark.parametrize("text, bare", [
    ("python/cutlass_api", True), ("nvidia/cuda:13.1.0-devel-ubuntu24.04", True), ("590.44.01", True),
    ("a b", False), ("a$b", False), ("", False), ("a'b", False), ("a\\", False), ("~/x", False), ("日本", False),
])
def test_is_bare(text, bare):
    assert is_bare(text) is bare
    if bare:
        assert word(text) == text
