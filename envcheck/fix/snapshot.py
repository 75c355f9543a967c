"""snapshot: the target environment as it was before `envcheck fix` changed it (undo.py plans from it).

A snapshot holds every distribution's exact version and source (what `pip freeze --all` shows: name==version, an
editable path, or a direct URL), the CUTLASS checkout's state, and the folders the fixer created. Before a step
replaces or removes a distribution, its installed files are packed back into a wheel in the state folder, so that
undo needs no network and no wheelhouse for anything the fixer took away.

The state folder belongs to one target interpreter. A fix that was interrupted or failed leaves its snapshot marked
"in progress", so running fix again keeps the snapshot of the environment as it was before the first change.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping, Optional, Sequence, TextIO

from packaging.requirements import InvalidRequirement, Requirement

from .. import __version__, shell
from ..atomic import replace_text
from ..cutlass_fetch import CheckoutState
from ..errors import UsageError
from ..model import Distribution, Interpreter, canonical_name
from ..paths import cache_dir, read_own_file, usable_folder
from ..redact import without_credentials
from .pip import PipSources, requirement_names
from .steps import Plan
from .wheels import MAX_SAVED_BYTES, save_wheel

__all__ = [
    "Recorded",
    "Snapshot",
    "state_root",
    "state_dir",
    "record",
    "save",
    "load",
    "mark",
    "differences",
    "SAVED_WHEELS",
]

SCHEMA_VERSION = 1
SAVED_WHEELS = "saved-wheels"
_SNAPSHOT = "snapshot.json"
MAX_SNAPSHOT_BYTES = 64 * 1024 * 1024  # thousands of distributions take a few MiB


def state_root(env: Optional[Mapping[str, str]] = None) -> Path:
    """The top of envcheck's own folders that hold the fixer's state: ENVCHECK_STATE_DIR, else the cache folder."""
    env = os.environ if env is None else env
    return Path(env["ENVCHECK_STATE_DIR"]) if env.get("ENVCHECK_STATE_DIR") else cache_dir(env)


def state_dir(prefix: str, env: Optional[Mapping[str, str]] = None) -> Path:
    """The fixer's folder for one target environment (keyed by its sys.prefix)."""
    env = os.environ if env is None else env
    base = Path(env["ENVCHECK_STATE_DIR"]) if env.get("ENVCHECK_STATE_DIR") else cache_dir(env) / "fix"
    real = os.path.realpath(prefix)
    key = hashlib.sha256(real.encode()).hexdigest()[:16]
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", Path(real).name or "root")[:40]
    return base / f"{name}-{key}"


@dataclass(frozen=True)
class Recorded:
    """One distribution as pip freeze would show it."""

    name: str
    version: str
    editable: Optional[str] = None
    url: Optional[str] = None
    location: str = ""

    @property
    def line(self) -> str:
        if self.editable:
            return f"-e {self.editable}"
        if self.url:
            return f"{self.name} @ {self.url}"
        return f"{self.name}=={self.version}"

    @classmethod
    def of(cls, dist: Distribution) -> "Recorded":
        return cls(dist.name, dist.version, dist.editable, dist.url, dist.location)


@dataclass(frozen=True)
class Snapshot:
    target: str
    prefix: str
    taken_at: str
    distributions: tuple[Recorded, ...]
    checkout: Optional[CheckoutState]
    cutlass_branch: str
    created: tuple[str, ...] = ()  # folders that did not exist and that fix may create (toolkit prefix)
    sources: PipSources = PipSources()
    status: str = "in progress"  # "in progress" until a fix finished every step, then "done"
    cutlass_commit: str = ""  # where fix puts the checkout: undo moves it back only from there

    def to_json(self) -> dict:
        return {
            "schema_version": SCHEMA_VERSION,
            "envcheck": __version__,
            "target": self.target,
            "prefix": self.prefix,
            "taken_at": self.taken_at,
            "status": self.status,
            "distributions": [
                {"name": d.name, "version": d.version, "editable": d.editable, "url": d.url, "location": d.location}
                for d in self.distributions
            ],
            "checkout": self.checkout.to_json() if self.checkout else None,
            "cutlass_branch": self.cutlass_branch,
            "cutlass_commit": self.cutlass_commit,
            "created": list(self.created),
            "sources": {
                "find_links": list(self.sources.find_links),
                # Never a password on disk: undo from an index that needs one takes --index-url again.
                "index_url": without_credentials(self.sources.index_url),
                "no_index": self.sources.no_index,
            },
        }

    @classmethod
    def from_json(cls, data: object) -> "Snapshot":
        """A snapshot from its JSON, checked key by key: anything else raises NotASnapshot saying what is wrong."""
        top = _Fields(data, "")
        version = top.get("schema_version", int)
        if version != SCHEMA_VERSION:
            raise NotASnapshot(f"schema_version is {version!r}; this envcheck reads {SCHEMA_VERSION}"
                               + (" (a newer envcheck wrote it)" if version > SCHEMA_VERSION else ""))
        status = top.get("status", str, "in progress")
        if status not in ("in progress", "done"):
            raise NotASnapshot(f"status is {status!r}, expected 'in progress' or 'done'")
        distributions = []
        for index, item in enumerate(top.get("distributions", list)):
            d = _Fields(item, f"distributions[{index}].")
            recorded = Recorded(d.get("name", str), d.get("version", str), d.get("editable", _TEXT_OR_NULL, None),
                                d.get("url", _TEXT_OR_NULL, None), d.get("location", str, ""))
            try:  # undo names it to pip as name==version: it must be one
                Requirement(f"{recorded.name}=={recorded.version}")
            except InvalidRequirement:
                raise NotASnapshot(f"distributions[{index}] is not a distribution: {recorded.name[:80]!r} "
                                   f"{recorded.version[:80]!r}") from None
            distributions.append(recorded)
        checkout = None
        if top.get("checkout", (dict, type(None)), None) is not None:
            c = _Fields(data["checkout"], "checkout.")
            checkout = CheckoutState(
                path=c.get("path", str), exists=c.get("exists", bool), is_repo=c.get("is_repo", bool, False),
                commit=c.get("commit", _TEXT_OR_NULL, None), branch=c.get("branch", _TEXT_OR_NULL, None),
                branch_tip=c.get("branch_tip", _TEXT_OR_NULL, None), dirty_files=tuple(c.texts("dirty_files")),
            )
        sources = _Fields(top.get("sources", dict, {}), "sources.")
        return cls(
            target=top.get("target", str),
            prefix=top.get("prefix", str),
            taken_at=top.get("taken_at", str),
            status=status,
            distributions=tuple(distributions),
            checkout=checkout,
            cutlass_branch=top.get("cutlass_branch", str, ""),
            cutlass_commit=top.get("cutlass_commit", str, ""),
            created=tuple(top.texts("created")),
            sources=PipSources(tuple(sources.texts("find_links")), sources.get("index_url", str, ""),
                               sources.get("no_index", bool, False)),
        )


class NotASnapshot(ValueError):
    """The JSON is not a snapshot this envcheck wrote: the message says which key is missing or of the wrong type."""


_REQUIRED = object()
_TEXT_OR_NULL = (str, type(None))
_KINDS = {str: "text", bool: "true or false", int: "a whole number", list: "a list", dict: "an object",
          type(None): "null"}


class _Fields:
    """The keys of one JSON object of a snapshot, each read with the type it must have."""

    def __init__(self, data: object, where: str):
        if not isinstance(data, dict):
            raise NotASnapshot(f"{where.rstrip('.') or 'the document'} is {_kind(data)}, expected an object")
        self.data, self.where = data, where

    def get(self, key: str, types, default=_REQUIRED):
        types = types if isinstance(types, tuple) else (types,)
        if key not in self.data:
            if default is _REQUIRED:
                raise NotASnapshot(f"{self.where}{key} is missing")
            return default
        value = self.data[key]
        if isinstance(value, bool) and bool not in types or not isinstance(value, types):
            raise NotASnapshot(f"{self.where}{key} is {_kind(value)}, expected {' or '.join(_KINDS[t] for t in types)}")
        return value

    def texts(self, key: str) -> list:
        values = self.get(key, list, [])
        for index, value in enumerate(values):
            if not isinstance(value, str):
                raise NotASnapshot(f"{self.where}{key}[{index}] is {_kind(value)}, expected text")
        return values


def _kind(value: object) -> str:
    return next((name for kind, name in _KINDS.items() if type(value) is kind), type(value).__name__)


def _first_copies(distributions: Iterable) -> dict:
    """name -> the copy Python uses (the first on sys.path), as the probe lists them."""
    found: dict = {}
    for dist in distributions:
        found.setdefault(dist.name, dist)
    return found


def record(
    interpreter: Interpreter,
    checkout: Optional[CheckoutState],
    cutlass_branch: str,
    created: Sequence[str] = (),
    sources: PipSources = PipSources(),
    cutlass_commit: str = "",
) -> Snapshot:
    return Snapshot(
        target=interpreter.executable,
        prefix=interpreter.prefix,
        taken_at=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        distributions=tuple(Recorded.of(d) for d in _first_copies(interpreter.distributions).values()),
        checkout=checkout,
        cutlass_branch=cutlass_branch,
        cutlass_commit=cutlass_commit,
        created=tuple(p for p in created if p and not os.path.exists(p)),
        sources=sources,
    )


def save(snapshot: Snapshot, folder: Path) -> Path:
    path = Path(folder) / _SNAPSHOT
    # Readable by its owner only: the recorded sources may carry an index URL's password, which undo needs.
    replace_text(path, json.dumps(snapshot.to_json(), indent=2) + "\n", mode=0o600)
    return path


def load(folder: Path, prefix: Optional[str] = None) -> Optional[Snapshot]:
    """The snapshot in folder, None when there is none. One that cannot be read, is not a snapshot, or (given prefix)
    records another environment is a UsageError naming the file and what to do: fix and undo cannot tell from it
    what to give back, and guessing could install what nobody had."""
    path = Path(folder) / _SNAPSHOT
    what = f"the snapshot {path}"
    try:
        text = read_own_file(path, what, MAX_SNAPSHOT_BYTES)
        if text is None:
            return None
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise NotASnapshot(f"not JSON (truncated?): {exc}") from None
        snapshot = Snapshot.from_json(data)
        if prefix is not None and os.path.realpath(snapshot.prefix) != os.path.realpath(prefix):
            raise NotASnapshot(f"it records another environment ({snapshot.prefix[:200]!r}), not {prefix}")
    except (UsageError, NotASnapshot, RecursionError) as exc:
        problem = str(exc).removeprefix(f"{what}: ") if not isinstance(exc, RecursionError) else "nested too deeply"
        raise UsageError(
            f"{what}: {problem}. envcheck cannot tell from it what the environment was before fix. Move it away to "
            f"start over ({shell.line(('mv', str(path), f'{path}.broken'))}): fix then records the environment as it "
            "is now, and undo has nothing to go back to until then"
        ) from None
    return snapshot


def mark(folder: Path, status: str) -> None:
    snapshot = load(folder)
    if snapshot is not None and snapshot.status != status:
        save(Snapshot(**{**snapshot.__dict__, "status": status}), folder)


def retire(folder: Path) -> Optional[Path]:
    """After an undo: keep the snapshot for the record, under a name that is no longer the current one."""
    path = Path(folder) / _SNAPSHOT
    if not path.exists():
        return None
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    done = path.with_name(f"snapshot-undone-{stamp}.json")
    os.replace(path, done)
    return done


# --------------------------------------------------------------------------------------------------------------
# What changed since


def differences(snapshot: Snapshot, interpreter: Interpreter) -> tuple[tuple[str, Optional[str], Optional[str]], ...]:
    """(name, recorded freeze line or None, current line or None) for each distribution that is not as recorded."""
    before = {d.name: d for d in snapshot.distributions}
    now = {name: Recorded.of(d) for name, d in _first_copies(interpreter.distributions).items()}
    out = []
    for name in sorted(set(before) | set(now)):
        a, b = before.get(name), now.get(name)
        if (a.line if a else None) != (b.line if b else None):
            out.append((name, a.line if a else None, b.line if b else None))
    return tuple(out)


# --------------------------------------------------------------------------------------------------------------
# Before the first change


SMALL = 64 * 1024 * 1024  # every distribution up to this size is packed before the first change


def save_originals(interpreter: Interpreter, plan: Plan, saved: Path, log: TextIO) -> None:
    """Pack the installed distributions into wheels before the first change, so undo needs no network.

    Every distribution up to SMALL bytes is packed (pip may upgrade any dependency); bigger ones only when a step
    names them (up to MAX_SAVED_BYTES): a CUDA build of torch is left to the package sources.
    """
    named = {canonical_name(n) for step in plan.steps for argv in step.commands for n in requirement_names(argv)}
    usable_folder(saved, "envcheck fix's saved wheels", create=True, root=saved.parent)
    for dist in _first_copies(interpreter.distributions).values():
        if dist.editable or dist.name in ("pip",):
            continue
        limit = MAX_SAVED_BYTES if dist.name in named else SMALL
        wheel = save_wheel(dist, saved, max_bytes=limit)
        log.write(f"# saved {dist.name} {dist.version}: {wheel or 'not packed (too big: undo takes it from the sources)'}\n")


def plan_prefix(plan: Plan) -> str:
    """The folder a plan's toolkit step creates, recorded so that undo removes it ("" when there is none)."""
    return next((s.param("prefix") for s in plan.steps if s.kind == "toolkit-install"), "")


def before_changes(
    state: Path, interpreter: Interpreter, plan: Plan, checkout: Optional[CheckoutState], branch: str, commit: str,
    sources: PipSources, log: TextIO,
) -> str:
    """Record the environment before fix's first change (the snapshot, and wheels of what may be replaced), unless
    an earlier fix did not finish: its snapshot is the one to go back to. Returns what was done, for the console."""
    existing = load(state, interpreter.prefix)
    if existing is not None and existing.status != "done":
        return f"Keeping the snapshot of {existing.taken_at} (an earlier fix did not finish)"
    prefix = plan_prefix(plan)
    taken = record(interpreter, checkout, branch, created=(prefix,) if prefix else (), sources=sources, cutlass_commit=commit)
    save_originals(interpreter, plan, state / SAVED_WHEELS, log)
    return f"Recorded the environment before any change: {save(taken, state)}"
