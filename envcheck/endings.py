"""How a run of the command line ends: every way it can end mapped to its exit code and its words.

Exit codes (the same for every command): 0 every required check passed, 1 a required check failed,
2 bad usage or bad input (and an output that cannot be written: a full disk), 3 envcheck itself failed (the log's
path is printed), 130 interrupted, 141 standard output closed early (`envcheck ... | head`: quietly, as git does).
A command asked for JSON answers with JSON however it ends (envcheck/jsonanswer.py). cli.main runs every command
through run().
"""

from __future__ import annotations

import sys
from typing import List, Optional

import typer

from . import terminal
from .errors import EXIT_BROKEN_PIPE, EXIT_CRASH, EXIT_INTERRUPTED, EXIT_USAGE, UsageError
from .paths import write_crash_log

__all__ = ["run"]


def _click_error() -> type:
    """click's base exception (bad usage, shown with its own message). typer 0.2x vendors click and older typer
    depends on it, so the class is found from typer's public BadParameter rather than imported from either."""
    return next(c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException")


def run(app: typer.Typer, args: List[str]) -> int:
    """Run the command line `args` of `app` and map every way it can end to an exit code.

    The command runs outside typer's own main loop, which would turn Ctrl-C into a silent exit 130 before envcheck
    could say anything: here every exception reaches envcheck's handlers. Standard output and standard error are
    guarded for the whole run (envcheck.terminal): escape sequences from data never reach the terminal, text the
    terminal cannot encode is escaped, and an output that cannot be written ends the run with an exit code."""
    with terminal.guarded() as (out, err):
        try:
            code = _run(app, args, out, err)
            out.flush()
            err.flush()
            return code
        except terminal.OutputError as exc:
            return _unwritable(exc, out, err)


def _run(app: typer.Typer, args: List[str], out: terminal.TerminalStream, err: terminal.TerminalStream) -> int:
    """The command's exit code. One asked for JSON that ends with an error, unanswered on standard output, answers
    there with the error as JSON (envcheck/jsonanswer.py) besides saying it on standard error."""
    from .jsonanswer import asked_for_json, failure_json

    code, message, more = _ended(app, args, out, err)
    if message is not None and asked_for_json(args) and not out.written:
        command = next((word for word in args if not word.startswith("-")), None)
        out.write(failure_json(command, code, message, **more))
    return code


def _ended(app: typer.Typer, args: List[str], out: terminal.TerminalStream,
           err: terminal.TerminalStream) -> tuple[int, Optional[str], dict]:
    """How the command ended: its exit code, and for an error the message shown on standard error (else None) with
    what more a JSON answer carries (a crash's log)."""
    try:
        command = typer.main.get_command(app)
        out.cleaning = err.cleaning = False  # typer's own help and usage, in its own colours: no data is read yet
        try:
            context = command.make_context("envcheck", args)
        finally:
            out.cleaning = err.cleaning = True
        with context:
            result = command.invoke(context)
    except typer.Exit as done:
        return done.exit_code, None, {}
    except (typer.Abort, KeyboardInterrupt):
        print("envcheck: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED, "interrupted", {}
    except UsageError as exc:
        message = _redacted(str(exc))
        print(f"envcheck: error: {message}", file=sys.stderr)
        return EXIT_USAGE, message, {}
    except terminal.OutputError:
        raise
    except Exception as exc:  # noqa: BLE001 - a crash inside envcheck: exit 3 with a log
        if isinstance(exc, _click_error()):
            exc.show()  # type: ignore[attr-defined]
            return EXIT_USAGE, _redacted(exc.format_message()), {}  # type: ignore[attr-defined]
        log = write_crash_log(exc)
        message = _redacted(f"internal error: {type(exc).__name__}: {exc}")
        print(f"envcheck: {message}\nThe full traceback is in {log}", file=sys.stderr)
        return EXIT_CRASH, message, {"log": str(log)}
    return (result if isinstance(result, int) else 0), None, {}


def _unwritable(exc: terminal.OutputError, out: terminal.TerminalStream, err: terminal.TerminalStream) -> int:
    """A reader that went away (`| head`) ends the run quietly with 141, as git and coreutils do (128 + SIGPIPE); any
    other failure (a full disk: `> /dev/full`) is said on standard error, exit 2. The stream is pointed at /dev/null
    first, so that the interpreter's last flush cannot fail again."""
    broken = out if exc.name == out.name else err
    terminal.silence(broken)
    if exc.broken_pipe:
        return EXIT_BROKEN_PIPE
    if broken is not err:
        try:
            print(f"envcheck: error: {exc}", file=err, flush=True)
        except terminal.OutputError:
            terminal.silence(err)
    return EXIT_USAGE


def _redacted(text: str, limit: int = 4000) -> str:
    """An error message with the secrets a flag or a file put in it masked (a URL's password, a token), and cut
    short: whatever bad input it quotes, it is never echoed in full."""
    from .redact import Redactor

    text = Redactor(paths=False)(text)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text) - limit} more characters)"
