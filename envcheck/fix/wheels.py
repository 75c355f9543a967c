"""wheels: an installed distribution packed back into a wheel, so that undo can reinstall what fix replaced with no
network and no wheelhouse. The files come from the distribution's RECORD, each hashed again into the new one.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import re
import zipfile
from pathlib import Path
from typing import Optional

from ..atomic import replacing
from ..model import Distribution, canonical_name

__all__ = ["MAX_SAVED_BYTES", "save_wheel", "wheel_prefix"]

# A distribution bigger than this is not packed (a CUDA build of torch is GBs): undo takes it from the sources.
MAX_SAVED_BYTES = 512 * 1024 * 1024


def _dist_info(dist: Distribution) -> Optional[Path]:
    location = Path(dist.location)
    if not location.is_dir():
        return None
    for candidate in location.glob("*.dist-info"):
        name, _, rest = candidate.name[: -len(".dist-info")].partition("-")
        if canonical_name(name) == dist.name and rest == dist.version.replace("-", "_"):
            return candidate
    for candidate in location.glob("*.dist-info"):  # names with odd spellings: read METADATA
        try:
            header = (candidate / "METADATA").read_text(encoding="utf-8", errors="replace").split("\n\n", 1)[0]
        except OSError:
            continue
        fields = dict(line.split(": ", 1) for line in header.splitlines() if ": " in line)
        if canonical_name(fields.get("Name", "")) == dist.name and fields.get("Version") == dist.version:
            return candidate
    return None


def _record_hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def save_wheel(dist: Distribution, folder: Path, max_bytes: int = MAX_SAVED_BYTES) -> Optional[Path]:
    """Pack the installed files of a distribution into a wheel in folder; None if it cannot be (editable, too big).

    Files outside the site directory (console scripts) are left out: pip writes scripts again from the entry points.
    """
    if dist.editable:
        return None
    info = _dist_info(dist)
    if info is None:
        return None
    try:
        rows = list(csv.reader(io.StringIO((info / "RECORD").read_text(encoding="utf-8"))))
        wheel_meta = (info / "WHEEL").read_text(encoding="utf-8")
    except OSError:
        return None
    tags = [line.split(":", 1)[1].strip() for line in wheel_meta.splitlines() if line.startswith("Tag:")]
    tag = tags[0] if tags else "py3-none-any"
    base = Path(dist.location).resolve()
    files: list[tuple[Path, str]] = []
    total = 0
    for row in rows:
        if not row or not row[0]:
            continue
        relative = row[0]
        path = (base / relative).resolve()
        if base not in path.parents or not path.is_file() or path.suffix == ".pyc":
            continue
        arcname = path.relative_to(base).as_posix()
        if arcname.startswith(f"{info.name}/") and arcname.rsplit("/", 1)[-1] in ("RECORD", "INSTALLER", "REQUESTED"):
            continue
        total += path.stat().st_size
        if total > max_bytes:
            return None
        files.append((path, arcname))
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / f"{wheel_prefix(dist.name, dist.version)}{tag}.whl"
    if target.exists():
        return target
    record_rows = []
    with replacing(target) as out, zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        for path, arcname in files:
            data = path.read_bytes()
            archive.writestr(arcname, data)
            record_rows.append((arcname, _record_hash(data), str(len(data))))
        record_name = f"{info.name}/RECORD"
        listing = io.StringIO()
        writer = csv.writer(listing, lineterminator="\n")
        writer.writerows(record_rows)
        writer.writerow((record_name, "", ""))
        archive.writestr(record_name, listing.getvalue())
    return target


def wheel_prefix(name: str, version: str) -> str:
    """How the name of the wheel save_wheel packs for name==version starts (`name-version-`), before its tag."""
    return re.sub(r"[^A-Za-z0-9.]+", "_", name) + "-" + re.sub(r"[^A-Za-z0-9.+]+", "_", version) + "-"
