"""The two kinds of failure envcheck itself can end with, and how each becomes an exit code."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["UsageError", "EXIT_OK", "EXIT_FAILED", "EXIT_USAGE", "EXIT_CRASH", "EXIT_INTERRUPTED", "EXIT_BROKEN_PIPE",
           "write_crash_log"]

EXIT_OK = 0  # every required check passed (warnings allowed)
EXIT_FAILED = 1  # a required check failed
EXIT_USAGE = 2  # bad usage or bad input: an unknown option, an unreadable policy
EXIT_CRASH = 3  # envcheck itself failed: a bug, with a log
EXIT_INTERRUPTED = 130  # Ctrl-C (128 + SIGINT)
EXIT_BROKEN_PIPE = 141  # standard output's reader went away (128 + SIGPIPE), as git and coreutils end


class UsageError(Exception):
    """The user's input cannot be used. The message names the file, key or flag and what was expected."""


def log_dir() -> Path:
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return Path(base) / "envcheck"


def write_crash_log(exc: BaseException) -> Path:
    """Write the traceback of a crash inside envcheck to a log (redacted, readable by its owner only); its path.

    The log goes into envcheck's state folder when that is the user's alone (paths.usable_folder), created new
    (paths.new_file: never through a link); else into a new file of a random name in the temporary folder."""
    import datetime
    import tempfile
    import traceback

    from .paths import new_file, usable_folder
    from .redact import Redactor

    text = Redactor()("".join(traceback.format_exception(type(exc), exc, exc.__traceback__)))
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    try:
        path = usable_folder(log_dir(), "the crash log folder", create=True) / f"crash-{stamp}-{os.getpid()}.log"
        with new_file(path, "the crash log") as log:
            log.write(text)
        return path
    except (UsageError, OSError):
        pass
    try:  # mkstemp: a new file (O_EXCL) of a name nobody could guess, readable by its owner only
        fd, name = tempfile.mkstemp(prefix=f"envcheck-crash-{stamp}-", suffix=".log")
        with os.fdopen(fd, "w", encoding="utf-8") as log:
            log.write(text)
        return Path(name)
    except OSError:
        raise exc
