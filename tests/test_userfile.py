"""envcheck.userfile: a file the user named is read only if it is a regular file, small, UTF-8 and sane TOML."""

from __future__ import annotations

import os

import pytest

from envcheck.errors import UsageError
from envcheck.userfile import MAX_BYTES, parse_toml, read_text, read_toml


def _make(tmp_path, kind):
    path = tmp_path / "input.toml"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "directory":
        path.mkdir()
    elif kind == "too big":
        path.write_bytes(b"#" * (MAX_BYTES + 1))
    elif kind == "not utf-8":
        path.write_bytes(b'a = "\xff"\n')
    elif kind == "nested":
        path.write_text("a = " + "[" * 3000 + "]" * 3000)
    elif kind == "not toml":
        path.write_text("a = = 1")
    elif kind == "dev zero":
        return "/dev/zero"
    return str(path)


@pytest.mark.parametrize("kind, message", [
    ("missing", "cannot read it: No such file"),
    ("fifo", "not a regular file (a FIFO)"),
    ("directory", "not a regular file (a directory)"),
    ("dev zero", "not a regular file (a character device)"),
    ("too big", "larger than 1 MiB"),
    ("not utf-8", "not UTF-8 text (byte 5 is 0xff)"),
    ("nested", "nested too deeply"),
    ("not toml", "not valid TOML"),
])
def test_every_unusable_file_is_a_usage_error_naming_it(tmp_path, kind, message):
    path = _make(tmp_path, kind)
    with pytest.raises(UsageError) as caught:
        read_toml(path, f"--policy {path}")
    assert str(caught.value).startswith(f"--policy {path}: ") and message in str(caught.value)


def test_a_file_at_the_cap_is_read(tmp_path):
    path = tmp_path / "ok.toml"
    head = b'a = "\xc3\xa9"\n'
    path.write_bytes(head + b"#" * (1024 - len(head)))
    assert len(path.read_bytes()) == 1024
    assert read_toml(path, "x", limit=1024) == {"a": "é"} and read_text(path, "x", limit=1024).startswith('a = "é"')
    assert parse_toml("", "x") == {}
    path.write_bytes(path.read_bytes() + b"#")
    with pytest.raises(UsageError, match="larger than 1024 bytes"):
        read_text(path, "x", limit=1024)
