"""Writing a file whole: into a new file beside it, flushed to disk, renamed over it. A reader sees the old content
or the new, never half; a crash leaves the old file and, at worst, a stray temporary beside it.

The new file is created here, under a name nobody can guess, with O_CREAT|O_EXCL|O_NOFOLLOW (what mkstemp does):
never opened through a link or over a file someone put there first (a planted `B.tar.partial` link, a part file),
and readable by its owner only until it is complete. The rename then replaces the name itself: a link at the
destination is replaced by the file, never written through. Every file envcheck writes goes this way (-o, bundle's
tar, parts and index, a saved wheel), or through paths.new_file for a log that is new by name."""

from __future__ import annotations

import os
import stat
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO, Iterator, Optional, Union

__all__ = ["replace_text", "replacing", "refuse_folder"]


def refuse_folder(path: Union[str, Path]) -> None:
    """IsADirectoryError when path is a folder, or a link to one: a file cannot be written there whole (the rename
    would replace a link to a folder with the file, or fail on a folder)."""
    try:
        if stat.S_ISDIR(os.stat(path).st_mode):
            raise IsADirectoryError(21, "a folder (or a link to one), not a file", str(path))
    except FileNotFoundError:
        pass


@contextmanager
def replacing(path: Union[str, Path], mode: Optional[int] = None) -> Iterator[BinaryIO]:
    """A new file beside path to write (binary), renamed over path when the block ends; on any error it is removed
    and path is as it was. mode: the file's permission bits (default: those of the file it replaces, else what the
    umask allows). The folder is made where missing. Raises OSError, with nothing changed."""
    path = Path(path)
    refuse_folder(path)
    if mode is None:
        try:
            mode = os.stat(path).st_mode & 0o7777
        except FileNotFoundError:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)  # 0600, O_EXCL
    try:
        with os.fdopen(fd, "wb") as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def replace_text(path: Union[str, Path], text: str, mode: Optional[int] = None) -> None:
    """Write text (UTF-8) to path atomically (replacing), making its folder. Raises OSError, with nothing changed."""
    with replacing(path, mode) as handle:
        handle.write(text.encode("utf-8"))
