"""Where a lock's files and hashes come from: local wheel directories (pip's --find-links, hashed here) and package
indexes read through the simple API (PEP 691 JSON, PEP 503 HTML as a fallback)."""

from __future__ import annotations

import base64
import datetime
import functools
import hashlib
import re
import html.parser
import json
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Optional, Sequence

from packaging.utils import InvalidSdistFilename, InvalidWheelFilename, parse_sdist_filename, parse_wheel_filename
from packaging.version import InvalidVersion, Version

from .. import __version__
from ..errors import UsageError
from ..model import canonical_name
from ..redact import without_credentials

PYPI = "https://pypi.org/simple"
TIMEOUT = 20.0
_HEX = re.compile(r"[0-9a-f]+")
_SIMPLE_ACCEPT = "application/vnd.pypi.simple.v1+json, application/vnd.pypi.simple.v1+html;q=0.2, text/html;q=0.1"


@dataclass(frozen=True)
class FileRecord:
    """One distribution file (wheel or sdist) of one package version, with at least one hash."""

    filename: str
    hashes: tuple[tuple[str, str], ...]  # (algorithm, hex digest), sorted
    url: Optional[str] = None
    path: Optional[Path] = None  # a local file (from --find-links)
    size: Optional[int] = None
    upload_time: Optional[datetime.datetime] = None

    @property
    def is_wheel(self) -> bool:
        return self.filename.endswith(".whl")


def _file_name_version(filename: str) -> Optional[tuple[str, Version]]:
    """(canonical name, version) of a wheel or sdist file name, or None for anything else."""
    try:
        if filename.endswith(".whl"):
            name, version, _, _ = parse_wheel_filename(filename)
        elif filename.endswith((".tar.gz", ".zip")):
            name, version = parse_sdist_filename(filename)
        else:
            return None
    except (InvalidWheelFilename, InvalidSdistFilename, InvalidVersion):
        return None
    return canonical_name(name), version


def _same_version(a: str | Version, b: str | Version) -> bool:
    try:
        return Version(str(a)) == Version(str(b))
    except InvalidVersion:
        return str(a) == str(b)


def sha256_of(path: Path) -> str:
    """The sha256 of a file, read a MiB at a time (wheels are GBs)."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@dataclass
class Wheelhouse:
    """Local directories of wheels and sdists (pip's --find-links): files are hashed here."""

    dirs: Sequence[Path]
    _hashes: dict = field(default_factory=dict)

    def files(self, name: str, version: str) -> list[FileRecord]:
        found = []
        for folder in self.dirs:
            if not folder.is_dir():
                raise UsageError(f"--find-links {folder}: no such directory")
            for path in sorted(folder.iterdir()):
                parsed = _file_name_version(path.name)
                if parsed and parsed[0] == name and _same_version(parsed[1], version) and path.is_file():
                    found.append(
                        FileRecord(path.name, (("sha256", self._sha256(path)),), path=path.resolve(), size=path.stat().st_size)
                    )
        return found

    def _sha256(self, path: Path) -> str:
        if path not in self._hashes:
            self._hashes[path] = sha256_of(path)
        return self._hashes[path]


Fetch = Callable[[str], tuple[str, bytes]]  # url -> (content type, body); raises LookupError for "not there"


def fetch_url(url: str, timeout: float = TIMEOUT, authorization: Optional[str] = None) -> tuple[str, bytes]:
    """GET a simple-API page. A 404 is LookupError (the index has no such project); other failures are OSError.

    `authorization` (an Authorization header value) goes to this URL's host only, never along a redirect."""
    parsed = urllib.parse.urlparse(url)
    if parsed.scheme == "file" and url.endswith("/"):
        url += "index.html"  # a simple index on disk, as pip reads one
    request = urllib.request.Request(url, headers={"Accept": _SIMPLE_ACCEPT, "User-Agent": f"envcheck/{__version__}"})
    if authorization:
        request.add_unredirected_header("Authorization", authorization)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310 - http(s)/file index URLs only
            return response.headers.get("Content-Type", ""), response.read()
    except urllib.error.HTTPError as exc:
        if exc.code in (404, 410):
            raise LookupError(url) from None
        raise OSError(f"{url}: HTTP {exc.code}") from None
    except urllib.error.URLError as exc:
        if isinstance(exc.reason, FileNotFoundError):
            raise LookupError(url) from None
        raise OSError(f"{url}: {exc.reason}") from None


def split_credentials(url: str) -> tuple[str, Optional[str]]:
    """(the URL without `user:password@`, the HTTP Basic Authorization header for them, or None).

    urllib would take `user:password@host` for a host name; pip's index URLs carry credentials that way."""
    parsed = urllib.parse.urlsplit(url)
    if "@" not in parsed.netloc:
        return url, None
    user, _, password = parsed.netloc.rpartition("@")[0].partition(":")
    token = base64.b64encode(f"{urllib.parse.unquote(user)}:{urllib.parse.unquote(password)}".encode()).decode("ascii")
    return without_credentials(url), f"Basic {token}"


def hash_problem(algorithm: str, digest: Any) -> Optional[str]:
    """Why a file hash cannot be checked (None when it can): a fixed-length hashlib algorithm, a hex digest of its size."""
    if algorithm not in hashlib.algorithms_guaranteed or algorithm.startswith("shake"):
        return "expected a fixed-length hashlib algorithm such as sha256"
    size = hashlib.new(algorithm).digest_size * 2
    if not isinstance(digest, str) or len(digest) != size or not _HEX.fullmatch(digest):
        return f"expected {size} lowercase hex digits"
    return None


def _hashes_of(mapping: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    """The usable hashes of an index's file entry (one an installer cannot check is left out)."""
    pairs = ((str(k).lower(), v.lower()) for k, v in mapping.items() if isinstance(v, str))
    return tuple(sorted((k, v) for k, v in pairs if hash_problem(k, v) is None))


def _datetime(text: Any) -> Optional[datetime.datetime]:
    if not isinstance(text, str):
        return None
    try:
        value = datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return value.astimezone(datetime.timezone.utc).replace(microsecond=0)


def parse_simple_json(body: bytes, page_url: str) -> list[FileRecord]:
    """The files of a PEP 691 JSON project page (sizes and upload times per PEP 700 where given)."""
    data = json.loads(body)
    records = []
    for item in data.get("files", []):
        hashes = _hashes_of(item.get("hashes") or {})
        if not hashes or not item.get("filename"):
            continue
        size = item.get("size")
        records.append(
            FileRecord(
                filename=item["filename"],
                hashes=hashes,
                url=urllib.parse.urljoin(page_url, item["url"]),
                size=size if isinstance(size, int) and not isinstance(size, bool) else None,
                upload_time=_datetime(item.get("upload-time")),
            )
        )
    return records


class _Anchors(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[tuple[str, str]] = []
        self._href: Optional[str] = None
        self._text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list) -> None:
        if tag == "a":
            self._href = dict(attrs).get("href")
            self._text = []

    def handle_data(self, data: str) -> None:
        if self._href is not None:
            self._text.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "a" and self._href is not None:
            self.links.append((self._href, "".join(self._text).strip()))
            self._href = None


def parse_simple_html(body: bytes, page_url: str) -> list[FileRecord]:
    """The files of a PEP 503 HTML project page that carry a hash in their URL fragment (#sha256=...)."""
    parser = _Anchors()
    parser.feed(body.decode("utf-8", errors="replace"))
    records = []
    for href, text in parser.links:
        url, _, fragment = urllib.parse.urljoin(page_url, href).partition("#")
        algorithm, _, digest = fragment.partition("=")
        filename = urllib.parse.unquote(url.rsplit("/", 1)[-1]) or text
        if hash_problem(algorithm.lower(), digest.lower()) is None:
            records.append(FileRecord(filename, ((algorithm.lower(), digest.lower()),), url=url))
    return records


@dataclass
class Index:
    """A package index read through the simple API. Pages are fetched once per project."""

    url: str
    fetch: Fetch = fetch_url
    optional: bool = False  # unreachable: a note, not an error (the profile's torch index: PyPI may have the same files)
    problems: list = field(default_factory=list)
    _pages: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        # Credentials in the URL travel in a header only: never into a file URL of the lock, an error or a note.
        self.url, authorization = split_credentials(self.url)
        if authorization:
            self.fetch = functools.partial(self.fetch, authorization=authorization)

    def files(self, name: str, version: str) -> list[FileRecord]:
        return [
            record
            for record in self._project(name)
            if (parsed := _file_name_version(record.filename)) and parsed[0] == name and _same_version(parsed[1], version)
        ]

    def _project(self, name: str) -> list[FileRecord]:
        if name not in self._pages:
            page = f"{self.url.rstrip('/')}/{name}/"
            try:
                content_type, body = self.fetch(page)
            except LookupError:
                self._pages[name] = []
                return []
            except OSError as exc:
                if self.optional:
                    self.problems.append(f"{self.url} could not be read ({exc}): looked elsewhere for {name}")
                    self._pages[name] = []
                    return []
                raise UsageError(f"--index-url {self.url}: cannot read {page}: {exc} (use --no-index with --find-links DIR offline)") from None
            try:
                if "json" in content_type:
                    self._pages[name] = parse_simple_json(body, page)
                else:
                    self._pages[name] = parse_simple_html(body, page)
            except (ValueError, TypeError, AttributeError) as exc:
                raise UsageError(f"--index-url {self.url}: {page} is not a simple-API page: {exc}") from None
        return self._pages[name]
