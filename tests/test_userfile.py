"""envcheck.userfile: a file the user named is read only if it is a regular file, small, UTF-8 and sane TOML."""

from __future__ import annotations

import os
import stat

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


def _key(parts: int, dot: str = ".") -> str:
    return dot.join(f"k{i}" for i in range(parts))


@pytest.mark.parametrize("text, refused_on", [
    (f"{_key(32)} = 1\n", None),  # at the cap
    (f"{_key(33)} = 1\n", 1),  # one part over it
    (f"{_key(33, ' . ')} = 1\n", 1),  # spaces around the dots: the same key
    (f"a = 1\n[{_key(33)}]\n", 2),  # a table header, on its line
    (f"x = {{ {_key(33)} = 1 }}\n", 1),  # inside an inline table
    (f'{_key(31)}."b.c.d" = 1\n', None),  # 32 parts: the dots inside a quoted part are not separators
    (f'url = "{_key(200)}"\n', None),  # a string full of dots is not a key
    (f'url = "{_key(200)}"\n{_key(33)} = 1\n', 2),
])
def test_a_dotted_key_over_the_cap_is_refused_naming_its_line(text, refused_on):
    if refused_on is None:
        assert parse_toml(text, "x")
        return
    with pytest.raises(UsageError, match=rf"^x: not usable TOML: a dotted key of more than 32 parts \(line {refused_on}\)$"):
        parse_toml(text, "x")


# --------------------------------------------------------------------------------------------------------------
# Writing: -o FILE is replaced whole; a device or a pipe is written as it is


def test_an_output_file_is_replaced_whole_keeping_its_mode_and_its_link(tmp_path):
    from envcheck.userfile import write_text

    target = tmp_path / "reports" / "node1.json"
    target.parent.mkdir()
    write_text(target, "first\n", "-o x")  # a new file: the umask's mode
    umask = os.umask(0)
    os.umask(umask)
    assert target.read_text() == "first\n" and stat.S_IMODE(target.stat().st_mode) == 0o666 & ~umask
    target.chmod(0o600)
    inode = target.stat().st_ino
    link = tmp_path / "latest.json"
    link.symlink_to(target)
    write_text(link, "second\n", "-o latest.json")
    assert link.is_symlink() and target.read_text() == "second\n"
    assert target.stat().st_ino != inode and stat.S_IMODE(target.stat().st_mode) == 0o600  # renamed over, same mode
    assert sorted(p.name for p in target.parent.iterdir()) == ["node1.json"]  # no temporary left


def test_an_output_that_cannot_be_written_changes_nothing(tmp_path):
    from envcheck.userfile import write_text

    blocker = tmp_path / "a-file"
    blocker.write_text("kept\n")
    with pytest.raises(UsageError, match=r"^-o .*a-file/out.json: the folder .*a-file is a file: "):
        write_text(blocker / "out.json", "x", f"-o {blocker / 'out.json'}")
    assert blocker.read_text() == "kept\n" and [p.name for p in tmp_path.iterdir()] == ["a-file"]


@pytest.mark.parametrize("named, link", [("reports/node1.json", None), ("a/b/c/r.json", None),
                                         ("latest.json", "gone/r.json")])
def test_an_output_in_a_folder_that_does_not_exist_is_refused_and_nothing_is_made(tmp_path, named, link):
    """A typo in -o's folder is said, naming the folder, not made into a tree of folders (issue 26); a link to a file
    in a folder that is not there neither. Whatever the path, nothing appears."""
    from envcheck.userfile import write_text

    path = tmp_path / named
    if link is not None:
        path.symlink_to(tmp_path / link)
    missing = (tmp_path / (link or named)).parent
    before = sorted(p.name for p in tmp_path.iterdir())
    with pytest.raises(UsageError, match=rf"the folder {missing} does not exist: expected a file in a folder that exists"):
        write_text(path, "x", f"-o {path}")
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_a_device_is_written_in_place():
    from envcheck.userfile import write_text

    write_text("/dev/null", "nothing\n", "-o /dev/null")
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)  # still the device, not a file renamed over it


def test_replace_text_sets_the_mode_it_is_given(tmp_path):
    from envcheck.atomic import replace_text

    path = tmp_path / "state" / "snapshot.json"
    replace_text(path, "{}\n", mode=0o600)
    assert path.read_text() == "{}\n" and stat.S_IMODE(path.stat().st_mode) == 0o600
