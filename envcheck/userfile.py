"""A file the user named: read (a policy, a lock: regular files only, under a size cap, UTF-8, TOML) or written
(-o, --junit: replaced whole, so that a reader never sees half of it).

Every way such a file can be unusable is a UsageError that names the flag and the file: a FIFO or a device is never
opened for a blocking read, /dev/zero is not read to the end, and deeply nested TOML is not a crash."""

from __future__ import annotations

import errno
import os
import stat
import sys
from pathlib import Path
from typing import Any, Callable, Optional, TextIO, Union

from .errors import UsageError

from .userdata import parse_json, parse_toml, tomllib

__all__ = ["MAX_BYTES", "read_text", "read_open", "open_inside", "parse_json", "parse_toml", "read_json", "read_toml", "write_text", "emit", "existing_folder", "progress", "kind_of",
           "type_name", "expect", "tomllib"]

MAX_BYTES = 1 << 20  # 1 MiB: the largest profile or lock envcheck reads is a few dozen KiB


def read_text(path: Union[str, Path], what: str, limit: int = MAX_BYTES) -> str:
    """The text of a regular file of at most `limit` bytes; `what` names it in errors ("--policy x.toml")."""
    try:
        # O_NONBLOCK: opening a FIFO must not wait for a writer; fstat then refuses it before any read.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise UsageError(f"{what}: cannot read it: {exc.strerror or exc}") from None
    kind = os.fstat(fd).st_mode
    if not stat.S_ISREG(kind):
        os.close(fd)
        raise UsageError(f"{what}: not a regular file ({kind_of(kind)}); expected a file of at most {_size(limit)}")
    return read_open(fd, what, limit, "expected a small text file")


def open_inside(folder_fd: int, relative: str, what: str, *, folder: bool = False, error: type = UsageError) -> int:
    """A descriptor of the file (folder=True: the folder) at `relative` (POSIX parts, none '..') inside the folder
    open as folder_fd, reached through no link: each part is opened with O_NOFOLLOW from the one before, so that a
    link anywhere on the way (a `wheels/` that points out of a bundle) is never followed. A link, a missing part,
    or one of another kind (a FIFO is never waited on) is `error` naming `what` and the part."""
    parts = relative.split("/")
    if any(part in ("", ".", "..") for part in parts):
        raise error(f"{what}: {relative!r}: expected a path inside the folder")
    fd = folder_fd
    try:
        for depth, part in enumerate(parts):
            inner = depth < len(parts) - 1 or folder
            flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
            try:
                opened = os.open(part, flags | (os.O_DIRECTORY if inner else 0), dir_fd=fd)
            except OSError as exc:
                shown = "/".join(parts[: depth + 1])
                try:
                    kind = os.lstat(part, dir_fd=fd).st_mode
                except OSError:
                    kind = None
                reason = ("a symbolic link, which envcheck does not follow here" if kind is not None and stat.S_ISLNK(kind)
                          else "no such file or folder" if kind is None else exc.strerror or str(exc))
                raise error(f"{what}: {shown}: {reason}") from None
            if fd != folder_fd:
                os.close(fd)
            fd = opened
        kind = os.fstat(fd).st_mode
        if not (stat.S_ISDIR(kind) if folder else stat.S_ISREG(kind)):
            found = "a regular file" if stat.S_ISREG(kind) else kind_of(kind)
            raise error(f"{what}: {relative}: {found}, not a {'folder' if folder else 'regular file'}")
        return fd
    except BaseException:
        if fd != folder_fd:
            os.close(fd)
        raise


def read_open(fd: int, what: str, limit: int, expected: str) -> str:
    """The UTF-8 text of a regular file already opened (and closed here): at most `limit` bytes are read, one more
    is a UsageError naming `what` and saying what was `expected`."""
    with os.fdopen(fd, "rb") as handle:
        try:
            data = handle.read(limit + 1)
        except OSError as exc:
            raise UsageError(f"{what}: cannot read it: {exc.strerror or exc}") from None
    if len(data) > limit:
        raise UsageError(f"{what}: larger than {_size(limit)}; {expected}")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"{what}: not UTF-8 text (byte {exc.start} is {data[exc.start]:#04x})") from None


def existing_folder(path: Union[str, Path], what: str) -> None:
    """A file the user named to write (-o, --junit, --plot) is in a folder that exists: envcheck makes no folder for
    it (a typo in a path would otherwise become a tree of folders). Else a UsageError naming `what` and the folder."""
    folder = Path(path).parent
    try:
        mode = os.stat(folder).st_mode
    except OSError:
        mode = None
    if mode is None or not stat.S_ISDIR(mode):
        found = "does not exist" if mode is None else f"is {kind_of(mode) if not stat.S_ISREG(mode) else 'a file'}"
        raise UsageError(f"{what}: the folder {folder} {found}: expected a file in a folder that exists "
                         "(envcheck makes none; create it first)")


def write_text(path: Union[str, Path], text: str, what: str) -> None:
    """Write a file the user named (-o, --junit), in a folder that exists (existing_folder: none is made). A regular
    file (or a new one) is replaced whole: written beside itself, then renamed over, so that a reader (node-exporter's textfile collector, a fleet
    job) never sees half of it; it keeps its mode, and a link to it stays a link. A device or a FIFO (/dev/stdout, a
    pipe) is written as it is, and a FIFO nobody reads is refused at once rather than waited on. Any failure is a
    UsageError naming `what`, and leaves the file as it was."""
    existing_folder(path, what)
    real = Path(os.path.realpath(path))
    existing_folder(real, f"{what} (what the symbolic link names)")  # a dangling link's folder is made by no one
    try:
        mode = os.stat(real).st_mode
    except OSError:
        mode = None
    if mode is not None and stat.S_ISDIR(mode):
        link = " (what the symbolic link names)" if os.path.islink(path) else ""
        raise UsageError(f"{what}: a folder{link}: expected a file to write, or a new name")
    if mode is not None and not stat.S_ISREG(mode):
        _write_in_place(real, text, what)
    else:
        _replace(real, text, what)


def emit(text: str, output: Optional[Union[str, Path]], out: Optional[TextIO] = None) -> None:
    """A command's result: to the -o file the user named (replaced whole, see write_text), else to `out`
    (standard output by default), flushed. The file gets the text without escape sequences or control characters,
    as the terminal does (envcheck.terminal guards standard output): `cat` of it later shows what envcheck showed."""
    if output is not None:
        from .terminal import clean

        write_text(output, clean(text), f"-o {output}")
        return
    out = out or sys.stdout
    out.write(text)
    out.flush()


def progress(stream: TextIO) -> Callable[[str], None]:
    """How a command says what it is doing while it works: each message one line `envcheck: MESSAGE` on `stream`
    (standard error: standard output is the result), flushed at once."""

    def say(message: str) -> None:
        print(f"envcheck: {message}", file=stream, flush=True)

    return say


def _write_in_place(path: Path, text: str, what: str) -> None:
    try:
        fd = os.open(path, os.O_WRONLY | os.O_TRUNC | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        reason = "a FIFO that nothing reads" if exc.errno == errno.ENXIO else exc.strerror or exc
        raise UsageError(f"{what}: cannot write it: {reason}") from None
    os.set_blocking(fd, True)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
    except OSError as exc:
        raise UsageError(f"{what}: cannot write it: {exc.strerror or exc}") from None


def _replace(path: Path, text: str, what: str) -> None:
    from .atomic import replace_text  # tempfile: only for writes, never on doctor's read-only path

    try:
        replace_text(path, text)
    except OSError as exc:
        raise UsageError(f"{what}: cannot write it: {exc.strerror or exc}") from None


def read_toml(path: Union[str, Path], what: str, limit: int = MAX_BYTES, error: type = UsageError) -> dict:
    """A TOML file the user named, read (read_text) and parsed (userdata.parse_toml): every failure an `error`."""
    return parse_toml(_text_or(error, path, what, limit), what, error)


def read_json(path: Union[str, Path], what: str, limit: int = MAX_BYTES, error: type = UsageError) -> Any:
    """A JSON file the user named, read (read_text) and parsed (userdata.parse_json): every failure an `error`."""
    return parse_json(_text_or(error, path, what, limit), what, error)


def _text_or(error: type, path: Union[str, Path], what: str, limit: int) -> str:
    """read_text, its failure raised as `error` (a bundle's file that cannot be read is the bundle's fault)."""
    try:
        return read_text(path, what, limit)
    except UsageError as exc:
        raise error(str(exc)) from None


def type_name(value: object, toml: bool = False) -> str:
    """The type of a value read from JSON (or TOML), as an error message says what was expected or found: "an
    object" (TOML: "a table"), "an array", "a string", "an integer", "null"..."""
    if value is None:
        return "null"
    for kind, name in ((bool, "true or false"), (dict, "a table" if toml else "an object"), (list, "an array"),
                       (str, "a string"), (int, "an integer"), (float, "a number")):
        if isinstance(value, kind):
            return name
    return f"a {type(value).__name__}"  # TOML's dates and times


def expect(value: object, kind: type, where: str, key: str, error: type = UsageError, toml: bool = False,
           present: bool = True) -> Any:
    """value, if it is a `kind` (true and false are not integers); else `error` naming the file, the key, the type
    expected and the type found ("r.json: key host.gpus expected an array, got an integer"). present=False: the key
    was not there at all."""
    if isinstance(value, kind) and not (isinstance(value, bool) and kind is not bool):
        return value
    found = type_name(value, toml) if present else "nothing (the key is missing)"
    raise error(f"{where}: key {key} expected {type_name(kind(), toml)}, got {found}")


def kind_of(mode: int) -> str:
    """What a file that is not a regular one is, in words ("a FIFO", "a character device")."""
    for test, name in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a file"


def _size(limit: int) -> str:
    return f"{limit // (1 << 20)} MiB" if limit % (1 << 20) == 0 else f"{limit} bytes"
