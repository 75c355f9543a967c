"""lock: a PEP 751 `pylock.toml` for the stack of a profile, and what can be done with one.

Where each part of a lock comes from:

- *which packages, at which versions*: the live target interpreter (`--python`). Its installed distributions are
  walked from the stack's roots (torch, the DSL, every package of the profile, cutlass_api with its extras) along
  their Requires-Dist, with the target's own markers, so the lock holds exactly what runs there and nothing else.
  No resolver guesses: lock what doctor approved. A root that misses the profile's versions refuses the lock.
- *files and hashes*: local wheel directories (`--find-links`, hashed here) first, then the package indexes
  through the simple API (PEP 691 JSON, PEP 503 HTML as a fallback): torch from the profile's `torch.index-url`,
  everything from `--index-url` (PyPI by default). A package version with no hashed file anywhere cannot be locked
  (PEP 751 needs a source for every package) and is named in the error.
- *cutlass_api*: a VCS package: the profile's repository URL, branch and commit, and its subdirectory.
- *what pip cannot express*: `[tool.envcheck]` holds the profile id, the CUDA toolkit, the driver floor, the
  compute capabilities the profile supports, and the CUTLASS source.

The lock is checked with `packaging.pylock` before it is written and again as read back from the written text.
`verify` compares a target with a lock; `requirements` turns a lock into a hash-pinned pip requirements file
(pip < 26.1 cannot read pylock.toml), which the Dockerfile installs with `--no-deps --require-hashes`.
"""

from __future__ import annotations

import datetime
import hashlib
import html.parser
import json
import re
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Optional, Sequence

from packaging.pylock import Package, Pylock, PylockValidationError
from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import InvalidSdistFilename, InvalidWheelFilename, parse_sdist_filename, parse_wheel_filename
from packaging.version import InvalidVersion, Version

from . import __version__
from .errors import UsageError
from .model import Distribution, Interpreter, canonical_name
from .policy import Policy, driver_text, spec_text

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

__all__ = [
    "PYPI",
    "FileRecord",
    "Wheelhouse",
    "Index",
    "LockResult",
    "Drift",
    "stack_roots",
    "walk",
    "build_lock",
    "to_toml",
    "write_lock",
    "read_lock",
    "verify",
    "render_drift",
    "requirements",
    "parse_simple_json",
    "parse_simple_html",
]

PYPI = "https://pypi.org/simple"
LOCK_VERSION = "1.0"
TIMEOUT = 20.0
_SIMPLE_ACCEPT = "application/vnd.pypi.simple.v1+json, application/vnd.pypi.simple.v1+html;q=0.2, text/html;q=0.1"


# --------------------------------------------------------------------------------------------------------------
# Where files and hashes come from


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
                if parsed and parsed[0] == name and _same_version(parsed[1], version):
                    found.append(
                        FileRecord(path.name, (("sha256", self._sha256(path)),), path=path.resolve(), size=path.stat().st_size)
                    )
        return found

    def _sha256(self, path: Path) -> str:
        if path not in self._hashes:
            digest = hashlib.sha256()
            with path.open("rb") as handle:
                for block in iter(lambda: handle.read(1 << 20), b""):
                    digest.update(block)
            self._hashes[path] = digest.hexdigest()
        return self._hashes[path]


Fetch = Callable[[str], tuple[str, bytes]]  # url -> (content type, body); raises LookupError for "not there"


def fetch_url(url: str, timeout: float = TIMEOUT) -> tuple[str, bytes]:
    """GET a simple-API page. A 404 is LookupError (the index has no such project); other failures are OSError."""
    parsed = urllib.parse.urlparse(url)
    if parsed.scheme == "file" and url.endswith("/"):
        url += "index.html"  # a simple index on disk, as pip reads one
    request = urllib.request.Request(url, headers={"Accept": _SIMPLE_ACCEPT, "User-Agent": f"envcheck/{__version__}"})
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


def _hashes_of(mapping: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    return tuple(sorted((str(k).lower(), str(v).lower()) for k, v in mapping.items() if isinstance(v, str) and v))


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
        if algorithm and digest and algorithm.lower() in hashlib.algorithms_guaranteed:
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


# --------------------------------------------------------------------------------------------------------------
# Which packages: the stack's roots and everything they pull in, as installed in the target


@dataclass(frozen=True)
class Root:
    name: str  # canonical
    extras: tuple[str, ...]
    specifier: str  # what the profile asks for ("" = any version)
    required: bool
    what: str  # the profile key it comes from, for messages


def stack_roots(policy: Policy) -> tuple[Root, ...]:
    """The packages a profile names: torch, the DSL, cutlass_api with its extras, then every [[packages]] entry."""
    torch_name = canonical_name(policy.torch_requirement.name)
    torch_spec = policy.torch & policy.torch_requirement.specifier
    roots = [
        Root(torch_name, tuple(sorted(policy.torch_requirement.extras)), str(torch_spec), True, "torch.version"),
        Root(policy.cutedsl.name, (), str(policy.cutedsl.specifier), True, "cutedsl.version"),
        Root(canonical_name(policy.cutlass.distribution), policy.cutlass.extras, "", True, "cutlass"),
    ]
    for rule in policy.packages:
        roots.append(Root(rule.name, (), str(rule.specifier), rule.level == "required", f"packages.{rule.name}"))
    seen: dict[str, Root] = {}
    for root in roots:
        seen.setdefault(root.name, root)
    return tuple(seen.values())


@dataclass(frozen=True)
class Walked:
    """A distribution of the target that the stack needs, and what needs it."""

    dist: Distribution
    extras: tuple[str, ...]
    dependencies: tuple[str, ...]  # canonical names of the installed distributions it requires


@dataclass(frozen=True)
class Walk:
    packages: tuple[Walked, ...]  # in the order found: roots first
    missing: tuple[tuple[str, str], ...]  # (requirement, needed by) that the target does not have


def walk(interpreter: Interpreter, roots: Iterable[tuple[str, Sequence[str]]]) -> Walk:
    """Follow Requires-Dist from the roots through the target's installed distributions, with its markers."""
    environment = dict(interpreter.markers)
    extras: dict[str, set[str]] = {}
    order: list[str] = []
    deps: dict[str, list[str]] = {}
    missing: list[tuple[str, str]] = []
    queue: list[tuple[str, tuple[str, ...], str]] = [(canonical_name(n), tuple(e), "") for n, e in roots]
    while queue:
        name, wanted, needed_by = queue.pop(0)
        dist = interpreter.dist(name)
        if dist is None:
            if needed_by:
                missing.append((name, needed_by))
            continue
        known = extras.get(name)
        new = set(wanted) - (known or set())
        if known is not None and not new:
            continue
        if known is None:
            order.append(name)
            extras[name] = set()
            deps[name] = []
        extras[name] |= set(wanted)
        for text in dist.requires:
            try:
                requirement = Requirement(text)
            except InvalidRequirement:
                continue
            if requirement.marker is not None:
                active = ("",) + tuple(sorted(extras[name]))
                if not any(requirement.marker.evaluate({**environment, "extra": extra}) for extra in active):
                    continue
            child = canonical_name(requirement.name)
            if interpreter.dist(child) is None:
                missing.append((str(requirement), f"{name} {dist.version}"))
                continue
            if child not in deps[name]:
                deps[name].append(child)
            queue.append((child, tuple(canonical_name(e) for e in requirement.extras), name))
    packages = tuple(
        Walked(interpreter.dist(n), tuple(sorted(extras[n])), tuple(deps[n])) for n in order  # type: ignore[arg-type]
    )
    unique_missing = tuple(dict.fromkeys(missing))
    return Walk(packages, unique_missing)


# --------------------------------------------------------------------------------------------------------------
# Building the lock


@dataclass(frozen=True)
class LockResult:
    data: dict  # the TOML document, as packaging.pylock reads it
    pylock: Pylock
    notes: tuple[str, ...]  # things worth saying that did not stop the lock


def git_head(path: str, timeout: float = 10.0) -> Optional[str]:
    """The commit checked out in the repository holding path, or None."""
    try:
        done = subprocess.run(
            ["git", "-C", path, "rev-parse", "HEAD"], capture_output=True, text=True, timeout=timeout, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    head = done.stdout.strip()
    return head if done.returncode == 0 and re.fullmatch(r"[0-9a-f]{40}", head) else None


def installed_commit(dist: Distribution) -> Optional[str]:
    """The commit of a VCS or editable install: direct_url.json's, else the checkout's HEAD."""
    if dist.commit:
        return dist.commit
    if dist.editable and Path(dist.editable).is_dir():
        return git_head(dist.editable)
    return None


def environment_marker(interpreter: Interpreter) -> str:
    """The environment a lock walked with the target's markers is good for."""
    markers = dict(interpreter.markers)
    keys = ("sys_platform", "platform_machine", "implementation_name", "python_version")
    return " and ".join(f'{key} == "{markers[key]}"' for key in keys if markers.get(key))


def _tool_table(policy: Policy, interpreter: Interpreter) -> dict:
    torch = interpreter.torch
    supported = [f"{g.capability[0]}.{g.capability[1]}" for g in policy.gpus if g.status.value != "fail"]
    return {
        "profile": policy.id,
        "profile-title": policy.title,
        "backend": policy.backend,
        "cuda": {
            "toolkit": spec_text(policy.toolkit, ","),
            "toolkit-requirement": str(policy.toolkit_requirement),
            "driver-cuda": str(policy.driver_cuda),
            "driver-floor": driver_text(policy.driver_floor),
            "torch-cuda": (torch.cuda if torch and torch.cuda else ""),
        },
        "compute-capabilities": supported,
        "compute-capability-floor": f"{policy.gpu_below.capability[0]}.{policy.gpu_below.capability[1]}",
        "cutlass": {
            "url": policy.cutlass.url,
            "branch": policy.cutlass.branch,
            "commit": policy.cutlass.commit,
            "subdirectory": policy.cutlass.subdir,
            "distribution": canonical_name(policy.cutlass.distribution),
            "extras": list(policy.cutlass.extras),
        },
        "torch-index": policy.torch_index_url,
        "python": interpreter.version_text,
    }


def public_url(url: str) -> str:
    """A URL without user:password@ — an index token must never be written into a lock."""
    parsed = urllib.parse.urlsplit(url)
    if parsed.username is None and parsed.password is None:
        return url
    host = parsed.hostname or ""
    netloc = host + (f":{parsed.port}" if parsed.port else "")
    return urllib.parse.urlunsplit(parsed._replace(netloc=netloc))


def _file_entry(record: FileRecord, lock_dir: Path) -> dict:
    entry: dict[str, Any] = {"name": record.filename}
    if record.path is not None:
        try:
            entry["path"] = record.path.relative_to(lock_dir.resolve()).as_posix()
        except ValueError:
            entry["path"] = str(record.path)
    else:
        entry["url"] = public_url(record.url or "")
    if record.size is not None:
        entry["size"] = record.size
    if record.upload_time is not None:
        entry["upload-time"] = record.upload_time
    entry["hashes"] = dict(record.hashes)
    return entry


def build_lock(
    interpreter: Interpreter,
    policy: Policy,
    *,
    wheelhouse: Optional[Wheelhouse] = None,
    indexes: Sequence[Index] = (),
    torch_index: Optional[Index] = None,
    lock_dir: Path = Path("."),
) -> LockResult:
    """The lock for the stack as the target has it. Raises UsageError when the target's stack cannot be locked."""
    roots = stack_roots(policy)
    notes: list[str] = []
    problems: list[str] = []
    for root in roots:
        dist = interpreter.dist(root.name)
        if dist is None:
            if root.required:
                problems.append(f"{root.name} is not installed (profile key {root.what})")
            else:
                notes.append(f"{root.name} is recommended by the profile but not installed: left out of the lock")
            continue
        if root.specifier and not _satisfies(dist.version, root.specifier):
            problems.append(f"{root.name} {dist.version} is installed; the profile asks for {root.specifier} ({root.what})")
    cutlass_name = canonical_name(policy.cutlass.distribution)
    cutlass_dist = interpreter.dist(cutlass_name)
    if cutlass_dist is not None:
        commit = installed_commit(cutlass_dist)
        if commit is not None and commit != policy.cutlass.commit:
            problems.append(f"{cutlass_name} is installed from commit {commit[:12]}; the profile pins {policy.cutlass.commit[:12]}")
    if problems:
        raise UsageError(
            f"{interpreter.executable}: its stack does not match profile {policy.id}, so it cannot be locked: "
            + "; ".join(problems)
            + ". Run `envcheck doctor` (and `envcheck fix`) first."
        )

    walked = walk(interpreter, [(r.name, r.extras) for r in roots if interpreter.dist(r.name) is not None])
    for requirement, needed_by in walked.missing:
        notes.append(f"{needed_by} requires {requirement}, which the target does not have: not in the lock either")

    packages: list[dict] = []
    unlocatable: list[str] = []
    for item in walked.packages:
        dist = item.dist
        entry: dict[str, Any] = {"name": dist.name, "version": dist.version}
        if dist.name == cutlass_name:
            entry["vcs"] = {
                "type": "git",
                "url": policy.cutlass.url,
                "requested-revision": policy.cutlass.branch,
                "commit-id": policy.cutlass.commit,
                "subdirectory": policy.cutlass.subdir,
            }
        elif dist.editable:
            entry.pop("version")  # a source tree: its version is not guaranteed by the lock (PEP 751)
            entry["directory"] = {"path": dist.editable, "editable": True}
            notes.append(f"{dist.name} is an editable install from {dist.editable}: locked as that directory")
        else:
            files, index_url = _locate(dist, wheelhouse, indexes, torch_index if dist.name == roots[0].name else None)
            if not files:
                unlocatable.append(f"{dist.name}=={dist.version}")
                continue
            if index_url:
                entry["index"] = public_url(index_url)
            sdists = [f for f in files if not f.is_wheel]
            wheels = [f for f in files if f.is_wheel]
            if sdists:
                entry["sdist"] = _file_entry(sdists[0], lock_dir)
            if wheels:
                entry["wheels"] = [_file_entry(w, lock_dir) for w in wheels]
        if item.dependencies:
            entry["dependencies"] = [{"name": d} for d in item.dependencies]
        if item.extras:
            entry.setdefault("tool", {})["envcheck"] = {"extras": list(item.extras)}
        packages.append(entry)
    if torch_index is not None:
        notes.extend(torch_index.problems)
    if unlocatable:
        where = [str(d) for d in (wheelhouse.dirs if wheelhouse else ())] + [i.url for i in ([torch_index] if torch_index else []) + list(indexes)]
        raise UsageError(
            "no wheel or sdist with a hash found for "
            + ", ".join(unlocatable)
            + f" (looked in: {', '.join(where) or 'nothing: pass --find-links DIR or drop --no-index'})"
        )

    data: dict[str, Any] = {
        "lock-version": LOCK_VERSION,
        "environments": [environment_marker(interpreter)],
        "requires-python": str(policy.python),
        "created-by": f"envcheck {__version__}",
        "packages": packages,
        "tool": {"envcheck": _tool_table(policy, interpreter)},
    }
    return LockResult(data, validate(data, "the new lock"), tuple(notes))


def _satisfies(version: str, specifier: str) -> bool:
    from packaging.specifiers import SpecifierSet

    try:
        return SpecifierSet(specifier).contains(Version(version), prereleases=True)
    except InvalidVersion:
        return False


def _locate(
    dist: Distribution, wheelhouse: Optional[Wheelhouse], indexes: Sequence[Index], torch_index: Optional[Index]
) -> tuple[list[FileRecord], Optional[str]]:
    """The files of dist's version: local ones first, then the first index that has any."""
    if wheelhouse is not None:
        files = wheelhouse.files(dist.name, dist.version)
        if files:
            return files, None
    for index in ([torch_index] if torch_index else []) + list(indexes):
        files = index.files(dist.name, dist.version)
        if files:
            return files, index.url
    return [], None


def validate(data: Mapping[str, Any], what: str) -> Pylock:
    try:
        return Pylock.from_dict(data)
    except PylockValidationError as exc:
        raise UsageError(f"{what} is not a valid PEP 751 lock: {exc}") from None


# --------------------------------------------------------------------------------------------------------------
# TOML out (the standard library reads TOML but does not write it)


_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def _key(key: str) -> str:
    return key if _BARE_KEY.match(key) else json.dumps(key)


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, datetime.datetime):
        return value.isoformat().replace("+00:00", "Z")
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)  # a JSON string is a valid TOML basic string
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_scalar(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_key(k)} = {_scalar(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"cannot write {type(value).__name__} to TOML")


def _is_table_list(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(v, dict) for v in value)


def _small(value: Any) -> bool:
    """Written inline: dicts of scalars such as hashes, dependencies' {name = ...}."""
    return isinstance(value, dict) and all(not isinstance(v, (dict, list)) for v in value.values()) and len(value) <= 2


def _table(lines: list[str], path: list[str], table: Mapping[str, Any]) -> None:
    later = []
    for key, value in table.items():
        if value is None:
            continue
        if isinstance(value, dict) and not _small(value):
            later.append((key, value, False))
        elif _is_table_list(value) and not all(_small(v) for v in value):
            later.append((key, value, True))
        else:
            lines.append(f"{_key(key)} = {_scalar(value)}")
    for key, value, many in later:
        sub = path + [_key(key)]
        if many:
            for item in value:
                lines.extend(["", f"[[{'.'.join(sub)}]]"])
                _table(lines, sub, item)
        else:
            if not all(isinstance(v, dict) and not _small(v) for v in value.values()):
                lines.extend(["", f"[{'.'.join(sub)}]"])  # a table of tables needs no header of its own
            _table(lines, sub, value)


def to_toml(data: Mapping[str, Any], header: str = "") -> str:
    lines = [f"# {line}" if line else "#" for line in header.splitlines()]
    _table(lines, [], data)
    return "\n".join(lines).lstrip("\n") + "\n"


HEADER = """\
PEP 751 lock for profile {profile}, written by envcheck {version} from the target interpreter's installed stack.
Install (pip 26.1 and later):  pip install --no-deps -r pylock.toml
Install (any pip):             envcheck lock --from pylock.toml --format requirements -o requirements.txt
                               pip install --no-deps --require-hashes -r requirements.txt
                               ({cutlass} is a VCS package: fetch the commit and `pip install --no-deps -e` it.)
Check an environment:          envcheck verify --lock pylock.toml --python PATH"""


def write_lock(result: LockResult, path: Path) -> str:
    """Write the lock and read it back through packaging.pylock; returns the text written."""
    profile = result.data["tool"]["envcheck"]["profile"]
    cutlass = result.data["tool"]["envcheck"]["cutlass"]["distribution"]
    text = to_toml(result.data, HEADER.format(profile=profile, version=__version__, cutlass=cutlass))
    again = validate(tomllib.loads(text), f"{path} (as written)")
    if again != result.pylock:  # pragma: no cover - a bug in the TOML writer
        raise RuntimeError(f"{path}: the written lock does not read back as the lock that was built")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"-o {path}: cannot write the lock: {exc.strerror or exc}") from None
    return text


def read_lock(path: Path, flag: str = "--lock") -> Pylock:
    """A lock file, validated. Every way it can be unusable is a UsageError naming the file."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"{flag} {path}: cannot read the lock: {exc.strerror or exc}") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"{flag} {path}: not valid TOML: {exc}") from None
    return validate(data, f"{flag} {path}")


# --------------------------------------------------------------------------------------------------------------
# Verify: a live environment against a lock


@dataclass(frozen=True)
class Drift:
    """How one package of the target differs from the lock. kind: missing, version, source, unlocked."""

    name: str
    kind: str
    locked: str
    installed: str

    @property
    def fails(self) -> bool:
        """Everything but a package the lock does not know fails verify (pip and friends live in every venv)."""
        return self.kind != "unlocked"


def _applies(package: Package, environment: Mapping[str, str]) -> bool:
    return package.marker is None or package.marker.evaluate(dict(environment, extra=""))


def _locked_text(package: Package) -> str:
    if package.vcs is not None:
        return f"{package.version or '?'} from {package.vcs.type} commit {package.vcs.commit_id[:12]}"
    if package.directory is not None:
        return f"the directory {package.directory.path}"
    return str(package.version)


def verify(lock: Pylock, interpreter: Interpreter, commit_of: Callable[[Distribution], Optional[str]] = installed_commit) -> tuple[Drift, ...]:
    """Every difference between the target and the lock, locked packages first (in lock order)."""
    environment = dict(interpreter.markers)
    drift: list[Drift] = []
    locked_names = set()
    for package in lock.packages:
        if not _applies(package, environment):
            continue
        locked_names.add(package.name)
        dist = interpreter.dist(package.name)
        if dist is None:
            drift.append(Drift(package.name, "missing", _locked_text(package), "not installed"))
            continue
        if package.version is not None and not _same_version(package.version, dist.version):
            drift.append(Drift(package.name, "version", str(package.version), dist.version))
            continue
        if package.vcs is not None:
            commit = commit_of(dist)
            if commit != package.vcs.commit_id:
                drift.append(
                    Drift(package.name, "source", _locked_text(package), f"{dist.version} from commit {commit[:12] if commit else 'unknown'}")
                )
    for dist in interpreter.distributions:
        if dist.name not in locked_names:
            locked_names.add(dist.name)
            drift.append(Drift(dist.name, "unlocked", "not in the lock", dist.version))
    return tuple(drift)


def render_drift(drift: Sequence[Drift], lock_path: str, target: str, locked_count: int) -> str:
    failing = [d for d in drift if d.fails]
    extra = [d for d in drift if not d.fails]
    lines = []
    if failing:
        lines.append(f"{target} drifted from {lock_path}: {len(failing)} of {locked_count} locked packages differ")
        width = max(len(d.name) for d in failing)
        for d in failing:
            lines.append(f"  {d.name:<{width}}  {d.kind:<7}  locked {d.locked}, installed {d.installed}")
    else:
        lines.append(f"{target} matches {lock_path}: all {locked_count} locked packages at their locked versions")
    if extra:
        lines.append("not in the lock (not counted as drift): " + ", ".join(f"{d.name} {d.installed}" for d in extra))
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------------------------------------------
# Export: a hash-pinned requirements file for any pip


def requirements(lock: Pylock, lock_dir: Path, environment: Optional[Mapping[str, str]] = None) -> str:
    """The lock's index packages as `name==version --hash=...` lines, for `pip install --no-deps --require-hashes`.

    VCS and directory packages cannot be hash-checked by pip: they are listed as comments and installed by their own
    step (the Dockerfile fetches the CUTLASS commit and installs cutlass_api editable). Wheels recorded by path
    (a --find-links lock) add their directories as --find-links, relative to the lock file as PEP 751 says.
    """
    lines = [f"# Generated by envcheck {__version__} from a PEP 751 lock. Install with:",
             "#   pip install --no-deps --require-hashes -r THIS_FILE"]
    options: list[str] = []
    body: list[str] = []
    for package in lock.packages:
        if environment is not None and not _applies(package, environment):
            continue
        if package.vcs is not None or package.directory is not None or package.archive is not None:
            source = package.vcs or package.directory or package.archive
            where = getattr(source, "url", None) or getattr(source, "path", None)
            commit = getattr(source, "commit_id", None)
            lines.append(f"# {package.name}: not installed from this file (source {where}" + (f" at {commit})" if commit else ")"))
            continue
        files = list(package.wheels or []) + ([package.sdist] if package.sdist else [])
        hashes = sorted({f"{algo}:{digest}" for f in files for algo, digest in f.hashes.items() if algo == "sha256"}
                        or {f"{algo}:{digest}" for f in files for algo, digest in f.hashes.items()})
        for f in files:
            if f.path is not None:
                folder = (lock_dir / f.path).parent.resolve().as_posix()
                option = f"--find-links {folder}"
                if option not in options:
                    options.append(option)
        if package.index and package.index.rstrip("/") != PYPI:
            option = f"--extra-index-url {package.index}"
            if option not in options:
                options.append(option)
        marker = f" ; {package.marker}" if package.marker is not None else ""
        body.append(f"{package.name}=={package.version}{marker} \\")
        body.extend(f"    --hash={h} \\" for h in hashes[:-1])
        body.append(f"    --hash={hashes[-1]}")
    return "\n".join(lines + options + body) + "\n"


# --------------------------------------------------------------------------------------------------------------
# The commands


FORMATS = ("pylock", "requirements")


def run_lock(
    output: Path,
    *,
    python: Optional[str] = None,
    policy_file: Optional[Path] = None,
    find_links: Sequence[Path] = (),
    index_url: str = PYPI,
    no_index: bool = False,
    from_lock: Optional[Path] = None,
    output_format: str = "pylock",
    err: Callable[[str], None] = lambda text: print(text, file=sys.stderr),
) -> int:
    """`envcheck lock`: lock the target's stack (or re-read --from LOCK) and write it as pylock.toml or requirements."""
    if output_format not in FORMATS:
        raise UsageError(f"--format {output_format!r}: expected one of {', '.join(FORMATS)}")
    if from_lock is not None:
        lock = read_lock(from_lock, "--from")
        if output_format == "pylock":
            raise UsageError("--from LOCK re-reads a lock: pass --format requirements to export it")
        return _write_text(output, requirements(lock, Path(from_lock).parent), "requirements")
    if not index_url.startswith(("https://", "http://", "file://")):
        raise UsageError(f"--index-url {index_url!r}: expected an https, http or file URL of a simple index")
    from .gather.interpreter import gather_interpreter
    from .policy import resolve

    policy = resolve(policy_file)
    target = python or sys.executable
    try:
        interpreter = gather_interpreter(target)
    except RuntimeError as exc:
        raise UsageError(f"--python {target}: {exc}") from None
    wheelhouse = Wheelhouse([Path(p) for p in find_links]) if find_links else None
    indexes = [] if no_index else [Index(index_url)]
    torch_index = Index(policy.torch_index_url, optional=True) if policy.torch_index_url and not no_index else None
    if no_index and wheelhouse is None:
        raise UsageError("--no-index leaves nowhere to find files and hashes: add --find-links DIR")
    result = build_lock(
        interpreter, policy, wheelhouse=wheelhouse, indexes=indexes, torch_index=torch_index, lock_dir=Path(output).parent
    )
    from .redact import Redactor

    redact = Redactor()
    for note in result.notes:
        err(redact(f"envcheck lock: note: {note}"))
    if output_format == "requirements":
        return _write_text(output, requirements(result.pylock, Path(output).parent), "requirements")
    write_lock(result, Path(output))
    err(f"envcheck lock: wrote {output}: {len(result.pylock.packages)} packages for profile {policy.id}")
    return 0


def _write_text(path: Path, text: str, what: str) -> int:
    try:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"-o {path}: cannot write the {what}: {exc.strerror or exc}") from None
    return 0


def run_verify(lock_path: Path, python: Optional[str] = None, out: Optional[Callable[[str], object]] = None) -> int:
    """`envcheck verify --lock FILE`: 0 when the target matches the lock, 1 with the drift per package otherwise."""
    from .gather.interpreter import gather_interpreter

    lock = read_lock(lock_path)
    target = python or sys.executable
    try:
        interpreter = gather_interpreter(target)
    except RuntimeError as exc:
        raise UsageError(f"--python {target}: {exc}") from None
    drift = verify(lock, interpreter)
    locked = sum(1 for p in lock.packages if _applies(p, dict(interpreter.markers)))
    from .redact import Redactor

    (out or sys.stdout.write)(Redactor()(render_drift(drift, str(lock_path), interpreter.executable, locked)))
    return 1 if any(d.fails for d in drift) else 0
