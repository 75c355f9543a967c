"""envcheck/words.py: counts in the right number, and one wrapping for every renderer (word boundaries only, the
width the text is read at, commands whole)."""

from __future__ import annotations

import io
import os
import pty

import pytest

from envcheck.words import DEFAULT_COLUMNS, columns, counted, fit, wrap


@pytest.mark.parametrize("count, noun, plural, said", [
    (0, "line", None, "0 lines"), (1, "line", None, "1 line"), (2, "line", None, "2 lines"),
    (1, "known failure", None, "1 known failure"), (3, "known failure", None, "3 known failures"),
    (1, "CUDA library folder", None, "1 CUDA library folder"), (2, "match", "matches", "2 matches"),
    (1, "match", "matches", "1 match"),
])
def test_counted(count, noun, plural, said):
    assert counted(count, noun, plural) == said


@pytest.mark.parametrize("env, width", [
    ({}, DEFAULT_COLUMNS), ({"COLUMNS": "120"}, 120), ({"COLUMNS": "0"}, DEFAULT_COLUMNS),
    ({"COLUMNS": "wide"}, DEFAULT_COLUMNS), ({"COLUMNS": " 50 "}, 50), ({"COLUMNS": "-3"}, DEFAULT_COLUMNS),
])
def test_piped_text_is_read_at_columns_or_80(env, width):
    assert columns(io.StringIO(), env) == width


def test_a_terminal_is_read_at_its_own_width_whatever_columns_says():
    primary, secondary = pty.openpty()
    try:
        import fcntl
        import struct
        import termios

        fcntl.ioctl(secondary, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 97, 0, 0))
        with os.fdopen(secondary, "w", closefd=False) as terminal:
            assert columns(terminal, {"COLUMNS": "200"}) == 97
    finally:
        os.close(primary)
        os.close(secondary)


TEXT = ("explain  2 known failures in /home/user/logs/a-very-long-folder-name/that-goes-on-and-on/run.log (3 lines); "
        "the first explains it, and split packages of nvidia-cutlass-dsl-libs-base must go")


@pytest.mark.parametrize("width", [40, 50, 60, 80, 100])
def test_wrap_breaks_between_words_only(width):
    lines = wrap(TEXT, width, "  ", "    ")
    assert " ".join(line.strip() for line in lines) == TEXT  # every word whole, in order
    for line in lines:
        assert len(line) <= width or " " not in line.strip(), line  # longer only where one word is longer
    assert lines[0].startswith("  ") and all(line.startswith("    ") for line in lines[1:])


def test_a_word_longer_than_the_line_keeps_a_line_of_its_own():
    url = "https://download.pytorch.org/whl/cu130/torch-2.11.0%2Bcu130-cp312-cp312-manylinux_2_28_x86_64.whl"
    lines = wrap(f"from {url} it came", 40)
    assert url in lines and lines[0] == "from" and lines[-1].strip() == "it came"


def test_a_label_painted_takes_no_columns():
    painted = "\x1b[31mFAIL \x1b[0m python.version  "
    lines = wrap("word " * 20, 60, painted, " " * 23)
    assert lines[0].startswith(painted)
    assert all(len(line.replace("\x1b[31m", "").replace("\x1b[0m", "")) <= 60 for line in lines)


def test_fit_continues_each_line_under_its_own_text_and_keeps_commands_whole():
    command = "     $ /venv/bin/python -m pip install --disable-pip-version-check --no-input --isolated -- 'torch<2.14,>=2.11'"
    text = "\n".join([
        "envcheck fix: 5 steps for /venv/bin/python",
        "  1. install nvidia-cutlass-dsl<=4.3.5,>=4.3.0, apache-tvm-ffi==0.1.7 in one transaction, holding torch where it is",
        "     why: nvidia-cutlass-dsl is missing (needs >=4.3.0, <=4.3.5); apache-tvm-ffi is missing (needs ==0.1.7)",
        command,
        "",
        "  - python.version: Python is too old (found 3.11.7, needs >=3.12). An interpreter's version cannot be changed",
        "  fix       Install the missing packages into the target interpreter, which `envcheck fix` does for you here",
        "  check     $ envcheck doctor --python /home/someone/projects/venvs/very-long-name/bin/python   # cutedsl.version",
    ])
    out = fit(text, 60).split("\n")
    assert command in out and "" in out
    assert "  check     $ envcheck doctor --python /home/someone/projects/venvs/very-long-name/bin/python   # cutedsl.version" in out
    assert out[out.index("  1. install nvidia-cutlass-dsl<=4.3.5,>=4.3.0,") + 1].startswith("     apache")
    fix = next(i for i, line in enumerate(out) if line.startswith("  fix  "))
    assert out[fix + 1].startswith(" " * 12) and not out[fix + 1].startswith(" " * 13)
    mark = next(i for i, line in enumerate(out) if line.startswith("  - python.version"))
    assert out[mark + 1].startswith("    ") and not out[mark + 1].startswith("     ")
    assert all(len(line) <= 60 for line in out if "$ " not in line)
    words = lambda lines: " ".join(" ".join(lines).split())  # noqa: E731
    assert words(out) == words(text.split("\n"))
