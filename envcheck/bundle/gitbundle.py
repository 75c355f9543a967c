"""CUTLASS as a git bundle: the profile's shallow, sparse checkout packed into one file, and a local git source
made back from it, so that `envcheck fix --bundle` fetches the pinned commit with no remote at all.

The bundle carries one commit (the pinned one, shallow), every tree of it, and the blobs of the sparse cone only
(git's `sparse:oid` filter, the cone's patterns stored as a blob): about a megabyte instead of the 173 MiB history.
Made back into a repository, it is a shallow, partial one that serves the fixer's ordinary shallow, blob-filtered
fetch (envcheck/cutlass_fetch.py) over file://, exactly as a mirror would.

Every repository touched here is one envcheck makes; git still runs hardened (envcheck/gitsafe.py), without a shell,
and with the values checked (commit, branch and path shapes: the manifest's when it is read, fix's fetch again)
before they reach it.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Optional, TextIO

from ..gitsafe import init_repo, online, open_repo
from .manifest import BundleError, CutlassEntry

__all__ = ["cone_patterns", "make_git_bundle", "source_from_git_bundle"]

def cone_patterns(subdir: str) -> str:
    """The sparse-checkout patterns of cone mode for one folder: the root's files, and the folder with its parents."""
    lines = ["/*", "!/*/"]
    parts = [p for p in subdir.strip("/").split("/") if p]
    for depth in range(1, len(parts) + 1):
        prefix = "/" + "/".join(parts[:depth]) + "/"
        lines.append(prefix)
        if depth < len(parts):
            lines.append(f"!{prefix}*/")
    return "\n".join(lines) + "\n"


def make_git_bundle(entry: CutlassEntry, url: str, out: Path, log: Optional[TextIO] = None) -> Path:
    """Fetch entry's commit from url (shallow, sparse) into a scratch folder and pack it as the git bundle out."""
    from ..cutlass_fetch import fetch

    scratch = Path(tempfile.mkdtemp(prefix="envcheck-bundle-git-"))
    try:
        checkout = scratch / "cutlass"
        fetch(checkout, url, entry.branch, entry.commit, entry.subdir, log=log)
        repo = open_repo(checkout)
        spec = scratch / "cone"
        spec.write_text(cone_patterns(entry.subdir), encoding="utf-8")
        spec_id = repo.git.hash_object("-w", "--no-filters", "--", str(spec)).strip()
        repo.git.bundle("create", str(out), f"--filter=sparse:oid={spec_id}", f"refs/heads/{entry.branch}")
        repo.close()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return out


def source_from_git_bundle(bundle: Path, dest: Path, entry: CutlassEntry) -> Path:
    """A bare, shallow, partial repository at dest holding the bundle's commit on entry.branch. Idempotent."""
    import git

    if (dest / "shallow").is_file():
        try:
            if open_repo(dest).git.rev_parse("--verify", f"{entry.commit}^{{commit}}").strip() == entry.commit:
                return dest
        except git.GitCommandError:
            pass
        shutil.rmtree(dest)
    partial = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", dir=dest.parent))  # new: nothing planted is used
    repo = init_repo(partial, bare=True)
    # One shallow commit, blobs of the cone only: git must know both before it takes the bundle's objects in.
    (partial / "shallow").write_text(entry.commit + "\n", encoding="ascii")
    with repo.config_writer() as config:
        config.set_value("core", "repositoryformatversion", "1")
        config.set_value("extensions", "partialClone", "bundle")
        config.set_value('remote "bundle"', "url", str(bundle.absolute()))
        config.set_value('remote "bundle"', "promisor", "true")
        config.set_value('remote "bundle"', "partialclonefilter", "blob:none")
    try:
        with online(repo):  # from the bundle file: the one fetch here
            repo.git.fetch("--quiet", "--no-recurse-submodules", "--", "bundle",
                           f"+refs/heads/{entry.branch}:refs/heads/{entry.branch}")
        head = repo.git.rev_parse("--verify", f"refs/heads/{entry.branch}^{{commit}}").strip()
        repo.git.cat_file("-e", f"{entry.commit}:{entry.subdir}/pyproject.toml")
    except git.GitCommandError as exc:
        shutil.rmtree(partial, ignore_errors=True)
        raise BundleError(f"{bundle}: not a usable git bundle of {entry.branch}: {exc.stderr.strip() or exc}") from None
    finally:
        repo.close()
    if head != entry.commit:
        shutil.rmtree(partial, ignore_errors=True)
        raise BundleError(f"{bundle}: holds {entry.branch} at {head[:12]}, the manifest says {entry.commit[:12]}")
    os.replace(partial, dest)
    return dest
