"""Nothing secret leaves the machine: tokens in URLs, credential-like environment values and home paths are
masked in every output format. Applied to the final text, so no renderer can forget it."""

from __future__ import annotations

import dataclasses
import enum
import json
import os
import re
from typing import Any, Mapping, Optional, TextIO

__all__ = ["Redactor", "RedactedStream", "has_credentials", "without_credentials"]

_SECRET_NAME = re.compile(r"(TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|KEY|AUTH)", re.I)
_URL_USERINFO = re.compile(r"(?P<scheme>[a-zA-Z][a-zA-Z0-9+.-]*://)(?P<userinfo>[^/@\s\"']+)@")
_URL_QUERY_SECRET = re.compile(r"(?P<key>[?&](?:token|access_token|auth|key|password|sig|signature)=)[^&\s\"']+", re.I)
_HOME = re.compile(r"(?P<root>/(?:home|Users))/(?P<user>[^/\s\"']+)")
MASK = "***"


class Redactor:
    """Masks secrets in text. Built once from the environment, then applied to each output."""

    def __init__(self, env: Optional[Mapping[str, str]] = None, home: Optional[str] = None, paths: bool = True):
        """paths=False masks secrets only: home paths stay as they are (a log, an error naming the user's file)."""
        env = os.environ if env is None else env
        self.paths = paths
        self.home = (home if home is not None else os.path.expanduser("~")).rstrip("/")
        values = {v for k, v in env.items() if _SECRET_NAME.search(k) and len(v) >= 6}
        # In JSON output a secret may appear escaped: mask that spelling too.
        self.secrets = sorted(values | {json.dumps(v)[1:-1] for v in values}, key=len, reverse=True)

    def __call__(self, text: str) -> str:
        for secret in self.secrets:
            text = text.replace(secret, MASK)
        text = _URL_USERINFO.sub(lambda m: f"{m['scheme']}{MASK}@", text)
        text = _URL_QUERY_SECRET.sub(lambda m: f"{m['key']}{MASK}", text)
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
    """The URL without its `user:password@` part (taken out, not masked: what is left still works without them).
    What envcheck writes to disk (a lock, a snapshot) holds URLs only this way."""
    from urllib.parse import urlsplit, urlunsplit

    parsed = urlsplit(url)
    if "@" not in parsed.netloc:
        return url
    return urlunsplit(parsed._replace(netloc=parsed.netloc.rpartition("@")[2]))


def has_credentials(url: str) -> bool:
    """Whether a URL carries a secret: a password (`user:password@`), a token as an http(s) user name
    (`https://TOKEN@host`), or a token in its query. ssh's plain `git@host` is a user name, not a secret."""
    found = _URL_USERINFO.match(url)
    if found and (":" in found["userinfo"] or found["scheme"].lower().startswith("http")):
        return True
    return bool(_URL_QUERY_SECRET.search(url))
