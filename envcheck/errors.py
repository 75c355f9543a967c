"""The two kinds of failure envcheck itself can end with, and how each becomes an exit code. (A crash's log is
written by paths.write_crash_log, in envcheck's own folder.)"""

from __future__ import annotations

from typing import Sequence

__all__ = ["UsageError", "EXIT_OK", "EXIT_FAILED", "EXIT_USAGE", "EXIT_CRASH", "EXIT_INTERRUPTED", "EXIT_BROKEN_PIPE",
           "check_choice"]

EXIT_OK = 0  # every required check passed (warnings allowed)
EXIT_FAILED = 1  # a required check failed
EXIT_USAGE = 2  # bad usage or bad input: an unknown option, an unreadable policy
EXIT_CRASH = 3  # envcheck itself failed: a bug, with a log
EXIT_INTERRUPTED = 130  # Ctrl-C (128 + SIGINT)
EXIT_BROKEN_PIPE = 141  # standard output's reader went away (128 + SIGPIPE), as git and coreutils end


class UsageError(Exception):
    """The user's input cannot be used. The message names the file, key or flag and what was expected."""


def check_choice(flag: str, value: str, choices: Sequence[str]) -> str:
    """`value` when it is one of `choices`; else the UsageError that names the flag, the value and every choice."""
    if value not in choices:
        raise UsageError(f"{flag} {value!r}: expected one of {', '.join(choices)}")
    return value
