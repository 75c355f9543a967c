"""Nothing secret leaves the machine: tokens in URLs, credential-like environment values and home paths are
masked in every output format. Applied to the final text, so no renderer can forget it.

A URL is redacted one way everywhere it is shown (redact_url): its user info (`user:password@`, a token as the user
name) and the value of every query parameter are masked, and so is a fragment parameter with a credential-like name
(`#access_token=`). What envcheck writes to disk for later use (a lock, a snapshot) holds URLs as
without_credentials leaves them: user info and the query taken out. And no secret goes into a child's argv,
which every user of the machine can read: an index URL that holds one reaches pip in a private file
(index_out_of_argv)."""

from __future__ import annotations

import dataclasses
import enum
import json
import os
import re
import shlex
from pathlib import Path
from typing import Any, Iterable, Mapping, Optional, Sequence, TextIO

__all__ = ["MASK", "Redactor", "RedactedStream", "credential_name", "has_credentials", "index_out_of_argv",
           "redact_argv", "redact_url", "url_parts", "url_secrets", "without_credentials"]

MASK = "***"
_SHORTEST_SECRET = 6  # a shorter value masked wherever it appears would mask ordinary words
_SECRET_NAME = re.compile(r"(TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|KEY|AUTH)", re.I)
# A name that says its value is a credential: a query parameter (`private_token`, `X-Amz-Security-Token`, `sig`,
# `X-Goog-Signature`, `access_key`), a profile key, an environment variable. Matching too much only masks more.
_CREDENTIAL_NAME = re.compile(
    r"token|secret|passw|pwd|auth|key|sig|credential|session|cookie|bearer|jwt|otp|ticket|code|^x-amz-|^x-goog-|^x-ms-",
    re.I,
)
_SCHEME = r"[a-zA-Z][a-zA-Z0-9+.-]{0,31}://"  # bounded: a long run of letters is not tried from every start
# A URL's start inside text, and how far its host and path go: to whitespace, a quote, a parenthesis, a brace or a
# backslash (an escape in JSON). Its user info is found by parsing (_url_in_text), not by these characters.
_URL_IN_TEXT = re.compile(r"(?<![a-zA-Z0-9+.-])" + _SCHEME)
_URL_TAIL = re.compile(r"[^\s\"'`<>(){}\\]*")
_URL_START = re.compile(_SCHEME)
# What may be left outside a URL: a query parameter with a credential-like name (`/simple?token=...` in an error).
_PARAMETER_IN_TEXT = re.compile(r"(?P<lead>[?&;#])(?P<name>[A-Za-z0-9_.\-]+)=(?P<value>[^&;#\s\"'`<>]+)")
_HOME = re.compile(r"(?P<root>/(?:home|Users))/(?P<user>[^/\s\"']+)")


def credential_name(name: str) -> bool:
    """Whether a name (of a query parameter, a key) says its value is a secret."""
    return bool(_CREDENTIAL_NAME.search(name))


def url_parts(url: str) -> tuple[str, str, str, Optional[str], Optional[str]]:
    """scheme://, user info, the rest of the authority and the path, query (after '?'), fragment (after '#'), by
    hand: urllib would normalise what it does not understand, and a shown URL must stay the one the user gave, less
    its secrets. User info ends at the last '@' before the query; a '?' or '#' typed into a password (so that the
    host seems to end there) still counts as user info."""
    scheme_end = url.index("://") + 3
    rest = url[scheme_end:]
    end = min((i for i in (rest.find("?"), rest.find("#")) if i >= 0), default=len(rest))
    at = rest.rfind("@", 0, end)
    if at < 0 and "@" in rest[end:] and "/" not in rest[:end]:
        at = rest.index("@", end)
    userinfo, rest = (rest[:at], rest[at + 1:]) if at >= 0 else ("", rest)
    rest, hash_, fragment = rest.partition("#")
    path, question, query = rest.partition("?")
    return url[:scheme_end], userinfo, path, query if question else None, fragment if hash_ else None


def _parameters(text: Optional[str]) -> list[str]:
    """A query's or a fragment's parameters, `a=1&b=2;c` -> ['a=1', 'b=2', 'c']."""
    return [p for p in re.split(r"[&;]", text or "") if p]


def _is_secret(parameter: str, bare: bool) -> bool:
    """A query or fragment parameter that holds a secret: a credential-like name, or (where `bare`) no name."""
    name, equals, _ = parameter.partition("=")
    return credential_name(name) if equals else bare


def _masked(text: str, every: bool) -> str:
    """Query or fragment parameters `a=1&b=2` with their values masked: every one, or only the secret ones."""
    out = []
    for part in re.split(r"([&;])", text):
        if part and part not in "&;" and (every or _is_secret(part, bare=True)):
            name, equals, _ = part.partition("=")
            part = f"{name}={MASK}" if equals else MASK
        out.append(part)
    return "".join(out)


def redact_url(url: str) -> str:
    """A URL as envcheck shows it: user info masked (`https://***@host/...`), every query value masked
    (`?private_token=***&x=***`), credential-like fragment parameters masked; the rest as given."""
    if not _URL_START.match(url):
        return url
    scheme, userinfo, rest, query, fragment = url_parts(url)
    shown = scheme + (f"{MASK}@" if userinfo else "") + rest
    if query is not None:
        shown += "?" + _masked(query, every=True)
    if fragment is not None:
        shown += "#" + _masked(fragment, every=False)
    return shown


def redact_argv(argv: Sequence[str]) -> tuple[str, ...]:
    """A command line as envcheck shows it (the plan, its JSON, the log): in each argument, everything from a
    `scheme://` to the argument's end is one URL, redacted (`--index-url=https://***@host/simple`)."""
    out = []
    for arg in argv:
        found = _URL_START.search(arg)
        out.append(arg[:found.start()] + redact_url(arg[found.start():]) if found else arg)
    return tuple(out)


def url_secrets(*urls: Optional[str]) -> tuple[str, ...]:
    """The secret parts of URLs as they may show up anywhere in a child's output, not only inside the URL (pip
    prints an index's path with its query, git a decoded user name): the user info's password, a token given as
    the user name, every query value; as given and percent-decoded; those of at least 6 characters."""
    from urllib.parse import unquote

    found: set[str] = set()
    for url in urls:
        if not url or not _URL_START.match(url):
            continue
        scheme, userinfo, _, query, fragment = url_parts(url)
        user, colon, password = userinfo.partition(":")
        parts = [password] if colon else [user] if user and scheme.lower().startswith("http") else []
        parts += [p.partition("=")[2] or p for p in _parameters(query)]
        parts += [p.partition("=")[2] for p in _parameters(fragment) if _is_secret(p, bare=False)]
        found |= {text for part in parts for text in (part, unquote(part)) if len(text) >= _SHORTEST_SECRET}
    return tuple(sorted(found))


def _redact_text_urls(text: str) -> str:
    out, done = [], 0
    for start in _URL_IN_TEXT.finditer(text):
        if start.start() < done:  # inside the URL before it (its user info held another scheme://)
            continue
        shown, done_at = _url_in_text(text, start.start(), start.end())
        out.append(text[done:start.start()] + shown)
        done = done_at
    text = "".join(out) + text[done:]
    return _PARAMETER_IN_TEXT.sub(
        lambda m: f"{m['lead']}{m['name']}={MASK}" if credential_name(m["name"]) else m.group(0), text)


def _url_in_text(text: str, start: int, authority: int) -> tuple[str, int]:
    """The URL at text[start:] (its scheme ends at `authority`) as shown, and where it ends in text.

    Where its user info ends is parsed, as a URL parser reads it: at the last '@' before the path's first '/' on
    the same line. A password may hold anything up to there, a space, a quote or a parenthesis included, so the
    '@' can lie beyond where a URL would seem to stop; all of it is masked. The host and path after it end at
    whitespace or a quote; the punctuation that ends a sentence (", steps 1, 2") stays outside the URL."""
    line_end = text.find("\n", authority)
    line_end = len(text) if line_end < 0 else line_end
    slash = text.find("/", authority, line_end)
    at = text.rfind("@", authority, line_end if slash < 0 else slash)
    seems = _URL_TAIL.match(text, authority).end()  # where the URL would end, read by its characters
    if at >= seems:  # the user info holds a character a URL would stop at
        tail = _URL_TAIL.match(text, at + 1).end()
        rest = text[at + 1:tail]
        url = rest.rstrip(",.;:!?")
        scheme = text[start:authority]
        return scheme + f"{MASK}@" + redact_url(scheme + url)[len(scheme):] + rest[len(url):], tail
    found = text[start:seems]
    url = found.rstrip(",.;:!?")
    return redact_url(url) + found[len(url):], seems


class Redactor:
    """Masks secrets in text. Built once from the environment, then applied to each output."""

    def __init__(self, env: Optional[Mapping[str, str]] = None, home: Optional[str] = None, paths: bool = True,
                 also: Iterable[str] = ()):
        """paths=False masks secrets only: home paths stay as they are (a log, an error naming the user's file).
        also: more secret values to mask wherever they appear (url_secrets of the URLs a command was given)."""
        env = os.environ if env is None else env
        self.paths = paths
        self.home = (home if home is not None else os.path.expanduser("~")).rstrip("/")
        values = {v for k, v in env.items() if _SECRET_NAME.search(k) and len(v) >= _SHORTEST_SECRET} | set(also)
        # In JSON output a secret may appear escaped: mask that spelling too.
        self.secrets = sorted(values | {json.dumps(v)[1:-1] for v in values}, key=len, reverse=True)

    def __call__(self, text: str) -> str:
        for secret in self.secrets:
            text = text.replace(secret, MASK)
        text = _redact_text_urls(text)
        if not self.paths:
            return text
        if self.home and self.home not in ("", "/"):
            text = re.sub(re.escape(self.home) + r"(?=/|\b|$)", "~", text)
        return _HOME.sub(lambda m: f"{m['root']}/<user>", text)

    def deep(self, value: Any) -> Any:
        """The same value with every string in it redacted: dataclasses, tuples, lists and dicts included.

        Reports are redacted before they are rendered, so that wrapping a long line cannot split a secret."""
        if isinstance(value, enum.Enum):
            return value
        if isinstance(value, str):
            return self(value)
        if isinstance(value, tuple):
            return tuple(self.deep(v) for v in value)
        if isinstance(value, list):
            return [self.deep(v) for v in value]
        if isinstance(value, dict):
            return {k: self.deep(v) for k, v in value.items()}
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            changes = {f.name: self.deep(getattr(value, f.name)) for f in dataclasses.fields(value) if f.init}
            return dataclasses.replace(value, **changes)
        return value


class RedactedStream:
    """A text stream that masks secrets in everything written to it: fix's output, its log."""

    def __init__(self, stream: TextIO, redact: Optional[Redactor] = None):
        self.stream = stream
        self.redact = redact or Redactor(paths=False)

    def write(self, text: str) -> int:
        return self.stream.write(self.redact(text))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)

    def __enter__(self) -> "RedactedStream":
        return self

    def __exit__(self, *exc: object) -> None:
        self.stream.close()


def without_credentials(url: str) -> str:
    """The URL without its secrets, taken out rather than masked, so that what is left still works without them:
    no user info, no query (every query value is shown masked, so none is kept either), no credential-like
    fragment parameter. What envcheck writes to disk (a lock, a snapshot) holds URLs only this way."""
    if not _URL_START.match(url):
        return url
    scheme, _, rest, _, fragment = url_parts(url)
    fragment = "&".join(p for p in _parameters(fragment) if not _is_secret(p, bare=False))
    return scheme + rest + (f"#{fragment}" if fragment else "")


def has_credentials(url: str) -> bool:
    """Whether a URL may carry a secret: a password (`user:password@`), a token as an http(s) user name
    (`https://TOKEN@host`), a query (every query value is taken for a secret, as redact_url shows it), or a
    credential-like fragment parameter. ssh's plain `git@host` is a user name, not a secret."""
    if not _URL_START.match(url):
        return False
    scheme, userinfo, _, query, fragment = url_parts(url)
    if userinfo and (":" in userinfo or scheme.lower().startswith("http")):
        return True
    return bool(query) or any(_is_secret(p, bare=False) for p in _parameters(fragment))


INDEX_FILE = "index-url.txt"  # in the private folder a pip child runs in


def index_out_of_argv(argv: Sequence[str], folder: Path) -> tuple[str, ...]:
    """argv with an `--index-url=URL` that carries a secret (user info, a query) moved into a requirements file in
    `folder`, a folder envcheck made for this one child and only its owner can enter (0700): the file is 0600.

    Every user can read a process's argv (`ps`, /proc/PID/cmdline); the child's argv then names the file, not the
    password. pip reads the options in a requirements file as if they were given on its command line, under
    envcheck's rule too (piprun: --isolated, no PIP_CONFIG_FILE), and `pip --python` passes
    the file on to the target's pip. The URL is written so that pip's parser of those files gives it back exactly:
    one shell word (shlex.quote), and `${` (which pip would expand from the environment) percent-encoded, which
    pip decodes in user info and a server decodes elsewhere. Arguments after `--` are requirements, never options."""
    out = list(argv)
    end = out.index("--") if "--" in out else len(out)
    for at, arg in enumerate(out[:end]):
        url = arg[len("--index-url="):] if arg.startswith("--index-url=") else None
        if url is None or redact_url(url) == url:
            continue
        path = folder / INDEX_FILE
        line = "--index-url=" + shlex.quote(url.replace("${", "%24{")) + "\n"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(line)
        out[at] = f"--requirement={path}"
    return tuple(out)
