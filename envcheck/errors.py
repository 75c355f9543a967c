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
    """Write the traceback of a crash inside envcheck to a log (redacted, readable by its owner only); its path."""
    import datetime
    import tempfile
    import traceback

    from .redact import Redactor

    text = Redactor()("".join(traceback.format_exception(type(exc), exc, exc.__traceback__)))
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    for folder in (log_dir(), Path(tempfile.gettempdir())):
        try:
            folder.mkdir(parents=True, exist_ok=True)
            path = folder / f"crash-{stamp}-{os.getpid()}.log"
            with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w", encoding="utf-8") as log:
                log.write(text)
            return path
        except OSError:
            continue
    raise exc
