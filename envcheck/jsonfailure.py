"""What a command asked for JSON prints when it has no answer to give: one JSON object on standard output.

`envcheck ... --json` (or `--format json`) prints JSON whatever happens, so that a program reading it never gets an
empty standard output: bad usage or input (exit 2), a crash inside envcheck (exit 3, with the log's path), Ctrl-C
(130), and a command with nothing to measure (`bench` without a GPU, exit 1). The object has the status, the exit
code (the one the command exits with) and the message standard error shows. cli.main writes it for every command,
once, where the command wrote nothing to standard output.
"""

from __future__ import annotations

import json
from typing import Optional, Sequence

from . import __version__

__all__ = ["SCHEMA_VERSION", "asked_for_json", "failure_json"]

SCHEMA_VERSION = 1
STATUS = {1: "fail", 2: "error", 3: "crash", 130: "interrupted"}


def asked_for_json(args: Sequence[str]) -> bool:
    """Whether the command line asks for JSON: `--json`, `--format json` or `--format=json` before any `--`."""
    words = list(args)
    if "--" in words:
        words = words[:words.index("--")]
    return "--json" in words or "--format=json" in words or any(
        word == "--format" and following == "json" for word, following in zip(words, words[1:])
    )


def failure_json(command: Optional[str], exit_code: int, message: str, status: Optional[str] = None, **more: object) -> str:
    """The object, as text ending in a newline. status: default from the exit code (fail, error, crash, interrupted)."""
    document = {
        "schema_version": SCHEMA_VERSION, "envcheck_version": __version__, "command": command,
        "status": status or STATUS.get(exit_code, "error"), "exit_code": exit_code, "message": message, **more,
    }
    return json.dumps(document, indent=2) + "\n"
