"""failure: why a pip or git step failed, read from what the tool printed, as a table of signs.

Each Sign names the tool, the texts that show it (any one of them, in any line the tool printed), what it is
(`kind`) and the words a user is shown. The first sign that matches wins, so the order is the priority: what pip
ends with (a constraint, a resolver conflict, PEP 668, a full disk) before a network retry it may have recovered
from; pip says "No matching distribution" after its retries failed to reach the index, which is the network, not
the version; a resolver conflict caused by a constraint is the constraint. What matches no sign is shown as the tool's last
meaningful lines, unclassified. Nothing here runs or reads anything: the lines come from the step's own output.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

from ..redact import redact_url

__all__ = ["Sign", "SIGNS", "Cause", "read", "tool_of"]


@dataclass(frozen=True)
class Sign:
    tool: str  # "pip" or "git"
    kind: str
    texts: tuple[str, ...]
    words: str


SIGNS: tuple[Sign, ...] = (
    Sign("pip", "certificate", ("CERTIFICATE_VERIFY_FAILED", "SSLCertVerificationError"),
         "pip did not accept the index's TLS certificate"),
    Sign("pip", "constraint", ("The user requested (constraint)",),
         "a constraint pip was given conflicts with what this step installs"),
    Sign("pip", "conflict", ("ResolutionImpossible", "conflicting dependencies"),
         "pip's resolver found no versions that satisfy every requirement at once (conflicting dependencies)"),
    Sign("pip", "externally-managed", ("externally-managed-environment",),
         "pip refuses to change an interpreter its distribution manages (PEP 668)"),
    Sign("pip", "disk-full", ("No space left on device",), "the disk is full"),
    Sign("pip", "network", ("Failed to establish a new connection", "Temporary failure in name resolution",
                            "Name or service not known", "Connection refused", "Network is unreachable",
                            "ConnectTimeoutError", "Read timed out", "Connection reset by peer"),
         "pip could not reach the package index: no network, no DNS, or the server refused the connection"),
    Sign("pip", "no-version", ("No matching distribution found for", "Could not find a version that satisfies"),
         "no version that satisfies the requirement is on the indexes pip looked in"),
    Sign("git", "certificate", ("SSL certificate problem", "server certificate verification failed"),
         "git did not accept the server's TLS certificate"),
    Sign("git", "no-repository", ("does not appear to be a git repository", "' not found", "Repository not found"),
         "there is no repository at that URL"),
    Sign("git", "network", ("Could not resolve host", "unable to access", "Failed to connect", "Connection refused",
                            "Connection timed out", "Network is unreachable"),
         "git could not reach the repository: no network, no DNS, or the server refused the connection"),
    Sign("git", "no-commit", ("couldn't find remote ref", "not our ref", "unadvertised object"),
         "the repository does not have the pinned commit"),
    Sign("git", "disk-full", ("No space left on device",), "the disk is full"),
)

# Lines that say nothing about a failure: pip's progress and advice, envcheck's own lines in the log.
_NOISE = ("[notice]", "Looking in ", "Collecting ", "Processing ", "Downloading ", "Using cached ", "Obtaining ",
          "INFO: pip is looking", "To fix this you could try", "1. loosen the range", "2. remove package versions",
          "$ ", "(exit ", "hint: ", "Please make sure you have the correct access rights", "and the repository exists.")
_ERROR = ("ERROR:", "error:", "fatal:")
_SHOWN = 6  # lines shown at most
_WIDTH = 240  # characters per line shown at most


@dataclass(frozen=True)
class Cause:
    """What a failed step's tool said: its kind ("" when no sign matched), the words shown, the tool's lines that
    show it, and the files it names (for a constraint: the constraints files given, the configuration file that set
    one)."""

    tool: str
    kind: str
    words: str
    lines: tuple[str, ...]
    files: tuple[str, ...] = ()

    def text(self) -> str:
        """One line: the words and the files, or the tool's last line when nothing matched."""
        if not self.kind:
            return f"{self.tool} said: {self.lines[-1]}" if self.lines else ""
        return self.words

    def to_json(self) -> dict:
        return {"tool": self.tool, "kind": self.kind or None, "words": self.words, "lines": list(self.lines),
                "files": list(self.files)}


def tool_of(argv: Sequence[str]) -> str:
    """"pip" for `PY -m pip ...`, else the program's own name."""
    if "pip" in argv[1:3]:
        return "pip"
    return argv[0].rsplit("/", 1)[-1] if argv else ""


def read(tool: str, output: Iterable[str], constraints: Sequence[str] = (),
         configured: Sequence[tuple[str, str]] = ()) -> Cause:
    """The cause of a failure from the tool's output lines (git's may carry the log's `git: ` prefix).
    constraints: the constraint files the step gave pip; configured: (file, value) of the `constraint` a pip
    configuration file pip read set. Both are named when a constraint conflicts."""
    lines = [_clean(line) for line in output]
    lines = [line for line in lines if line and not line.startswith(_NOISE)]
    for sign in SIGNS:
        if sign.tool != tool:
            continue
        matched = [i for i, line in enumerate(lines) if any(text in line for text in sign.texts)]
        if matched:
            return _cause(tool, sign, matched[-1], lines, constraints, configured)
    return Cause(tool, "", "", tuple(_short(line) for line in lines[-_SHOWN:]))


def _cause(tool: str, sign: Sign, evidence: int, lines: list[str], constraints: Sequence[str],
           configured: Sequence[tuple[str, str]]) -> Cause:
    """The evidence (the last line that matched) and the tool's error lines, in the tool's order, at most _SHOWN."""
    picked = [i for i, line in enumerate(lines) if i == evidence or line.startswith(_ERROR)][-_SHOWN:]
    if evidence not in picked:
        picked = [evidence, *picked[1:]]
    shown = tuple(dict.fromkeys(_around(lines[i], sign.texts) if i == evidence else _short(lines[i]) for i in picked))
    files: tuple[str, ...] = ()
    words = sign.words
    if sign.kind == "constraint":
        wanted = lines[evidence].split("(constraint)", 1)[1].strip()
        files = (*constraints, *(path for path, _ in configured))
        given = [f"the constraints file envcheck gives pip ({', '.join(constraints)})"] if constraints else []
        given += [f"a constraint from {path} (constraint = {' '.join(map(redact_url, value.split()))})"
                  for path, value in configured]
        words = f"{sign.words}: {wanted}, from " + (" or ".join(given) or "pip's configuration")
    return Cause(tool, sign.kind, words, shown, files)


def _clean(line: str) -> str:
    text = line.strip()
    return text[len("git: "):].strip() if text.startswith("git: ") else text


def _around(line: str, texts: Sequence[str]) -> str:
    """A long line from the text that matched (pip's retry lines start with 150 characters of urllib3's internals)."""
    if len(line) <= _WIDTH:
        return line
    at = min(i for i in (line.find(text) for text in texts) if i >= 0)
    return _short(line if at < 40 else "..." + line[at:])


def _short(line: str) -> str:
    return line if len(line) <= _WIDTH else line[: _WIDTH - 3] + "..."
