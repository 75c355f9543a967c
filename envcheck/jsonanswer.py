"""What a command asked for JSON answers with: one JSON object on standard output (or in -o FILE), whatever happens.

Every command's object says how the run ended at its top: `status` (a word) and `exit_code` (the code the command
exits with). answer() puts both into the object a command made (doctor's report, fix's plan, explain's causes, ...),
and every JSON a command prints goes through it. A run with no answer to give answers with failure_json: bad usage
or input (exit 2), a crash inside envcheck (exit 3, with the log's path), Ctrl-C (130), and a command with nothing
to measure (`bench` without a GPU, exit 1): the status, the exit code and the message standard error shows.
endings.run writes that one for every command, once, where the command wrote nothing to standard output.
"""

from __future__ import annotations

import json
from typing import Mapping, Optional, Sequence

from . import __version__

__all__ = ["SCHEMA_VERSION", "STATUS", "answer", "asked_for_json", "failure_json", "status_of"]

SCHEMA_VERSION = 1  # of failure_json's object
# The status an exit code stands for, where the command has no finer word (doctor's warn, smoke's skip).
STATUS = {0: "pass", 1: "fail", 2: "error", 3: "crash", 130: "interrupted"}
HEAD = ("schema_version", "envcheck_version", "command")  # the keys that stay before status and exit_code


def status_of(exit_code: int) -> str:
    """The word for an exit code (STATUS): an unknown code is an error."""
    return STATUS.get(exit_code, "error")


def answer(document: Mapping[str, object], exit_code: int, status: Optional[str] = None) -> str:
    """The command's object as JSON text ending in a newline, with `status` (default: status_of(exit_code)) and
    `exit_code` at its top, after the keys of HEAD it has; a `status` or `exit_code` it had is replaced."""
    head = {key: document[key] for key in HEAD if key in document}
    rest = {key: value for key, value in document.items() if key not in head and key not in ("status", "exit_code")}
    whole = {**head, "status": status or status_of(exit_code), "exit_code": exit_code, **rest}
    return json.dumps(whole, indent=2) + "\n"


def asked_for_json(args: Sequence[str]) -> bool:
    """Whether the command line asks for JSON: `--json`, `--format json` or `--format=json` before any `--`."""
    words = list(args)
    if "--" in words:
        words = words[:words.index("--")]
    return "--json" in words or "--format=json" in words or any(
        word == "--format" and following == "json" for word, following in zip(words, words[1:])
    )


def failure_json(command: Optional[str], exit_code: int, message: str, status: Optional[str] = None, **more: object) -> str:
    """The object of a run with no answer, as text ending in a newline. status: default from the exit code."""
    document = {"schema_version": SCHEMA_VERSION, "envcheck_version": __version__, "command": command,
                "message": message, **more}
    return answer(document, exit_code, status)
