"""`envcheck explain [FILE|-]`: known failures of the stack found in a user's own log or traceback.

The signatures are the smoke stage's (envcheck/smoke/signatures.toml, one table): each line of the log is matched
against them, and every signature found becomes a cause with its evidence line, its remedy and the doctor checks
that confirm it; the first in the table's order is the main one. With --python, what doctor sees in that
interpreter is added, and the causes are explained with its facts.

A log is untrusted input: it is read line by line, with a cap on each line and on the whole, and what is shown of
it has terminal escape sequences and control characters removed.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Iterable, Iterator, Optional, TextIO

from . import shell
from .errors import UsageError
from .model import Finding, Report

__all__ = ["Found", "Explained", "LogReader", "clean_line", "scan", "run_explain", "MAX_BYTES", "MAX_LINE"]

SCHEMA_VERSION = 1
MAX_BYTES = 64 * 1024 * 1024  # read no more of a log than this
MAX_LINE = 16 * 1024  # characters of one line kept for matching; the rest of a longer line is skipped
SHOWN = 300  # characters of an evidence line shown

# ESC-started sequences (CSI, OSC, and two-character ones), then any control character left (C0 but tab, DEL, C1)
# and the Unicode direction overrides that make text read differently from what it is.
_ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[ -/]*[0-~]|\x9b[0-?]*[ -/]*[@-~]")
_CONTROLS = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def clean_line(text: str) -> str:
    """text without terminal escape sequences or control characters (a tab becomes a space)."""
    return _CONTROLS.sub("", _ESCAPES.sub("", text)).replace("\t", " ")


@dataclass(frozen=True)
class LogLine:
    number: int  # 1-based
    text: str  # cleaned


class LogReader:
    """A log's lines, decoded leniently and cleaned, read with a cap on each line and on the whole. Iterate once;
    afterwards `lines_read` and `truncated` say how much was read."""

    def __init__(self, stream: IO[bytes], max_bytes: int = MAX_BYTES, max_line: int = MAX_LINE):
        self.stream, self.max_bytes, self.max_line = stream, max_bytes, max_line
        self.lines_read = 0
        self.truncated = False  # the log was longer than max_bytes: the rest was not read

    def __iter__(self) -> Iterator[LogLine]:
        total = 0
        limit = self.max_line * 4  # bytes: a UTF-8 character is at most four
        while True:
            raw = self.stream.readline(limit + 1)
            if not raw:
                return
            total += len(raw)
            if total > self.max_bytes:
                self.truncated = True
                return
            self.lines_read += 1
            if len(raw) > limit and not raw.endswith(b"\n"):  # an over-long line: skip to its end
                while True:
                    rest = self.stream.readline(1 << 20)
                    total += len(rest)
                    if not rest or rest.endswith(b"\n") or total > self.max_bytes:
                        break
            if self.lines_read == 1 and b"\x00" in raw:
                raise UsageError("the input is not a text log (it holds NUL bytes): expected a log or traceback")
            text = raw.decode("utf-8", errors="replace").rstrip("\r\n")
            yield LogLine(self.lines_read, clean_line(text)[: self.max_line])


@dataclass(frozen=True)
class Found:
    """One known failure in the log: the explained cause, and the line it was seen on."""

    cause: object  # envcheck.smoke.causes.Cause
    line: int
    checks: tuple[str, ...]
    raised: bool = False  # the line is an exception's own (`ModuleNotFoundError: ...`), the best evidence


# An exception as a traceback ends with it: `ModuleNotFoundError: No module named 'x'`, `torch.OutOfMemoryError: ...`
_RAISED = re.compile(r"^\s*(?:\w+\.)*(?:\w*(?:Error|Exception|Warning)|Smoke\w+): ")


@dataclass(frozen=True)
class Explained:
    source: str
    causes: tuple[Found, ...]  # the table's order: the first is the main cause
    lines_read: int
    truncated: bool
    doctor: Optional[Report] = None

    @property
    def exit_code(self) -> int:
        return 1 if self.causes else 0


def scan(lines: Iterable[LogLine], ctx) -> tuple[Found, ...]:
    """Every signature found in the lines, in the table's priority order. Pure. Its evidence is the first line that
    shows it, or a later one where that is the exception's own line (the end of a traceback) and the first was not."""
    from .smoke.causes import SIGNATURES, explain_match

    first: dict[str, Found] = {}
    for line in lines:
        raised = bool(_RAISED.match(line.text))
        for signature in SIGNATURES:
            seen = first.get(signature.id)
            if seen is not None and (seen.raised or not raised):
                continue
            found = signature.search(line.text)
            if found:
                first[signature.id] = Found(explain_match(signature, found, line.text, ctx), line.number,
                                            signature.checks, raised)
    return tuple(first[s.id] for s in SIGNATURES if s.id in first)


# --------------------------------------------------------------------------------------------------------------
# The command


def run_explain(
    source: Optional[str], python: Optional[str], policy_file: Optional[Path], as_json: bool,
    stdin: Optional[IO[bytes]] = None, out: Optional[TextIO] = None,
) -> int:
    from . import policy as policy_module
    from .smoke.causes import Context, context_from

    out = out or sys.stdout
    chosen = policy_module.resolve(policy_file)
    report = None
    if python is not None:
        from .doctor import diagnose
        from .target import resolve_python

        target = resolve_python(python)
        report = diagnose(target, None, chosen)
        ctx = context_from(report.facts, chosen, target)
    else:
        ctx = Context(python="python3", policy=chosen, known=False)
    name, stream = _open(source, stdin)
    try:
        reader = LogReader(stream)
        causes = scan(reader, ctx)
    finally:
        if name != "-":  # ours to close; standard input is not
            stream.close()
    from .redact import Redactor

    redact = Redactor()
    # Redacted before it is rendered, as doctor's report is: a home path becomes ~/..., which a printed command then
    # leaves for the shell to expand.
    explained = redact.deep(Explained(name, causes, reader.lines_read, reader.truncated, report))
    text = json.dumps(to_dict(explained), indent=2) + "\n" if as_json else render_text(explained)
    out.write(redact(text))
    return explained.exit_code


def _open(source: Optional[str], stdin: Optional[IO[bytes]]) -> tuple[str, IO[bytes]]:
    if source in (None, "-"):
        return "-", stdin or sys.stdin.buffer
    path = Path(source)
    if not path.is_file():
        raise UsageError(f"{source}: no such file (expected a log file, or - for standard input)")
    try:
        return str(path), open(path, "rb")
    except OSError as exc:
        raise UsageError(f"{source}: cannot be read ({exc.strerror}): expected a readable log file") from None


def _short(text: str) -> str:
    return text if len(text) <= SHOWN else text[: SHOWN - 1] + "…"


def _findings(report: Optional[Report], checks: tuple[str, ...]) -> list[Finding]:
    if report is None:
        return []
    return [f for f in (report.finding(c) for c in checks) if f is not None]


def to_dict(explained: Explained) -> dict:
    from .model import plain  # one JSON shape for a remedy, the smoke result's

    return {
        "schema_version": SCHEMA_VERSION,
        "source": explained.source,
        "lines_read": explained.lines_read,
        "truncated": explained.truncated,
        "found": bool(explained.causes),
        "causes": [
            {
                "id": f.cause.id,
                "text": f.cause.text,
                "evidence": {"line": f.line, "text": _short(f.cause.evidence)},
                "remedy": plain(f.cause.remedy),
                "checks": list(f.checks),
                "doctor": [
                    {"id": d.id, "status": d.status.value, "found": d.found, "wanted": d.wanted}
                    for d in _findings(explained.doctor, f.checks)
                ],
            }
            for f in explained.causes
        ],
        "target": explained.doctor.target if explained.doctor else None,
    }


def render_text(explained: Explained) -> str:
    read = f"{explained.lines_read} lines" + (f", stopped at {MAX_BYTES >> 20} MiB" if explained.truncated else "")
    if not explained.causes:
        return f"explain  no known failure of the stack in {explained.source} ({read})\n"
    lines = [f"explain  {len(explained.causes)} known failure(s) in {explained.source} ({read}); the first explains it"]
    for index, found in enumerate(explained.causes):
        cause = found.cause
        lines.append("")
        lines.append(f"{'cause' if index == 0 else 'also':5}  {cause.id}: {cause.text}")
        lines.append(f"  seen      line {found.line}: {_short(cause.evidence)}")
        if cause.remedy is not None:
            lines.append(f"  fix       {cause.remedy.text}")
            lines.extend(f"            $ {shell.line(command)}" for command in cause.remedy.commands)
        if found.checks:
            target = explained.doctor.target if explained.doctor else "python3"  # the remedies' python, unknown
            doctor = shell.line(("envcheck", "doctor", "--python", target))
            lines.append(f"  check     $ {doctor}   # {', '.join(found.checks)}")
        for finding in _findings(explained.doctor, found.checks):
            lines.append(f"  doctor    {finding.id} {finding.status.value.upper()}: {_short(finding.found)}")
    return "\n".join(lines) + "\n"
