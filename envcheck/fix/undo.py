"""undo: what gives back the environment a snapshot recorded: the plan (undo_plan: remove what changed, reinstall the
recorded copies, put the checkout back, remove the folders fix made), and putting the CUTLASS checkout back
(restore), which never loses work.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Optional, Sequence, TextIO

from packaging.requirements import Requirement

from ..cutlass_fetch import (CheckoutRefused, CheckoutState, install_byproduct, log_git, partial_folder, read_state,
                             remove_partial, shown_paths)
from ..gather.checkout import status_entries
from ..gitsafe import is_commit_id, is_plain_name, open_repo
from ..model import Interpreter
from ..words import counted
from .byproducts import unrecorded_byproducts
from .pip import PipSources, install_argv, uninstall_argv
from .snapshot import Snapshot, differences
from .steps import Plan, PlannedStep
from .wheels import wheel_prefix

__all__ = ["undo_plan", "restore", "untouched_since_fetch"]


def undo_plan(
    snapshot: Snapshot,
    interpreter: Interpreter,
    saved: Path,
    sources: PipSources = PipSources(),
    current_checkout: Optional[CheckoutState] = None,
    pip: Sequence[str] = (),
) -> Plan:
    """The steps that give back the recorded environment: remove what changed, then reinstall the recorded copies.

    Reinstalls use --no-deps, so pip puts back exactly the recorded set and resolves nothing: the recorded
    environment is consistent or not exactly as it was before.
    """
    python = interpreter.executable
    pip = tuple(pip) or (python, "-m", "pip")
    before = {d.name: d for d in snapshot.distributions}
    changed = differences(snapshot, interpreter)
    steps: list[PlannedStep] = []
    remove = [name for name, _, now in changed if now is not None]
    if remove:
        steps.append(PlannedStep(
            "pip-uninstall", f"uninstall {', '.join(remove)}", "added or changed since the snapshot",
            (uninstall_argv(pip, remove, PipSources(break_system_packages=sources.break_system_packages)),),
        ))
    wanted = [before[name] for name, was, _ in changed if was is not None]
    plain = [d for d in wanted if not d.editable]
    saved_names = {p.name for p in saved.glob("*.whl")} if saved.is_dir() else set()
    links = tuple(dict.fromkeys(((str(saved),) if saved_names else ()) + snapshot.sources.find_links + sources.find_links))
    undo_sources = PipSources(
        find_links=links,
        index_url=sources.index_url or snapshot.sources.index_url,
        no_index=sources.no_index or snapshot.sources.no_index,
        break_system_packages=sources.break_system_packages,
    )
    if plain:
        requirements = []
        for d in plain:
            stem = wheel_prefix(d.name, d.version)
            if d.url and not any(n.startswith(stem) for n in saved_names) and d.url.startswith(("file:", "https:")):
                requirements.append(Requirement(f"{d.name} @ {d.url}"))
            else:
                requirements.append(Requirement(f"{d.name}=={d.version}"))
        steps.append(PlannedStep(
            "pip-install", f"reinstall {', '.join(d.line for d in plain)}", "as recorded before envcheck fix",
            (install_argv(pip, requirements, sources=undo_sources, no_deps=True),),
        ))
    for d in wanted:
        if d.editable:
            steps.append(PlannedStep(
                "pip-install", f"reinstall {d.name} editable from {d.editable}", "as recorded before envcheck fix",
                (install_argv(pip, (), sources=undo_sources, editable=d.editable, no_deps=True),),
            ))
    checkout = snapshot.checkout
    if checkout is not None and current_checkout is not None:
        state_now = (current_checkout.exists, current_checkout.commit, current_checkout.branch, current_checkout.branch_tip)
        state_then = (checkout.exists, checkout.commit, checkout.branch, checkout.branch_tip)
        # A fix killed during its fetch leaves the half-made checkout beside the folder: undo removes it too.
        stopped_fetch = not checkout.exists and os.path.lexists(partial_folder(checkout.path))
        changed_checkout = state_now != state_then and (checkout.is_repo or not checkout.exists)
        if changed_checkout or stopped_fetch:
            steps.append(PlannedStep(
                "checkout-restore",
                f"put the CUTLASS checkout {checkout.path} back "
                + (f"at {checkout.commit[:12]}" if checkout.commit else "(remove it: envcheck fetched it)")
                if changed_checkout else f"remove {partial_folder(checkout.path)}, left by a fetch that was stopped",
                "as recorded before envcheck fix",
                params=(("path", checkout.path), ("state", json.dumps(checkout.to_json())),
                        ("branch", snapshot.cutlass_branch), ("commit", snapshot.cutlass_commit)),
            ))
    for path in snapshot.created:
        if os.path.exists(path):
            steps.append(PlannedStep("remove-path", f"remove {path} unless something in it changed since",
                                     "envcheck fix created it", params=(("path", path),)))
    return Plan(python, tuple(steps))


def restore(state: CheckoutState, branch: str, log: Optional[TextIO] = None, commit: str = "") -> str:
    """Put the checkout back as the snapshot found it, and say what was done.

    Undo never loses work. A checkout fix fetched is removed only if nothing touched it since (`untouched_since_fetch`);
    a checkout fix moved is moved back only if it is still where fix put it (`commit`, when known) and clean.
    Otherwise it stays as it is and the text says why. Raises nothing for a checkout it keeps."""
    folder = Path(state.path)
    now = read_state(folder, branch)
    if not state.exists:
        try:  # a fetch of fix's that was stopped: the snapshot says fix was to make this checkout
            partial = remove_partial(folder)
        except CheckoutRefused as exc:
            partial = str(exc)
        if not now.exists:
            return partial or f"{folder}: already absent"
        reason = untouched_since_fetch(folder, branch) if now.is_repo else "it is no longer a git checkout"
        if reason is None:
            shutil.rmtree(folder)
            return f"{folder}: removed (envcheck had fetched it, and nothing changed it since)"
        return f"{folder}: kept, because {reason} (envcheck fetched it, but will not delete work)"
    if not state.is_repo or not now.is_repo:
        return f"{folder}: not a checkout envcheck changed"
    if (now.commit, now.branch, now.branch_tip) == (state.commit, state.branch, state.branch_tip):
        return f"{folder}: already at {state.commit[:12] if state.commit else 'its recorded state'}"
    if now.dirty_files:
        return (f"{folder}: kept as it is, because it has changes that are not committed "
                f"({shown_paths(now.dirty_files)})")
    if commit and now.commit != commit:
        return (f"{folder}: kept as it is, because HEAD moved to {str(now.commit)[:12]} after envcheck put it at "
                f"{commit[:12]}")
    if not all(map(is_commit_id, filter(None, (state.commit, state.branch_tip)))) or not all(
            map(is_plain_name, filter(None, (state.branch, branch)))):
        return f"{folder}: kept as it is, because its recorded commit or branch is not one envcheck gives to git"
    repo = open_repo(folder)
    if state.commit:
        log_git(log, repo.git.checkout("--quiet", "--no-recurse-submodules", "--detach", state.commit, "--"))
    if state.branch_tip:
        log_git(log, repo.git.branch("--force", "--", branch, state.branch_tip))
    elif any(head.name == branch for head in repo.heads) and state.branch != branch:
        log_git(log, repo.git.branch("-D", "--", branch))
    if state.branch:
        log_git(log, repo.git.checkout("--quiet", "--no-recurse-submodules", state.branch, "--"))
    return f"{folder}: back at {state.commit[:12] if state.commit else '?'}" + (f" on {state.branch}" if state.branch else "")


def untouched_since_fetch(folder: Path, branch: str) -> Optional[str]:
    """None if the checkout is exactly what `fetch` made; else what changed, in words.

    What fetch makes: the refs `refs/heads/<branch>` and `refs/remotes/origin/<branch>` at one commit, HEAD on that
    branch, no other commit reachable from any ref or reflog, no other worktree, and no file beyond the tracked ones
    except the files fix's editable install wrote, as they were then (cutlass_fetch.record_byproducts): a file someone
    put in build/ or *.egg-info/, or one changed since, is work like any other, and keeps the checkout."""
    repo = open_repo(folder)
    try:
        refs = dict(
            line.split(" ", 1)[::-1]
            for line in repo.git.for_each_ref("--format=%(objectname) %(refname)").splitlines() if line.strip()
        )
        expected = {f"refs/heads/{branch}", f"refs/remotes/origin/{branch}"}
        if set(refs) != expected:
            extra = sorted(set(refs) - expected) or sorted(expected - set(refs))
            return f"its refs are not the ones envcheck made ({', '.join(extra[:3])})"
        if len(set(refs.values())) != 1:
            return f"branch {branch} no longer points at the commit envcheck fetched"
        if repo.head.is_detached or repo.head.ref.name != branch:
            return f"HEAD is no longer on branch {branch}"
        reachable = set(repo.git.rev_list("--all", "--reflog").split())
        if reachable != set(refs.values()):
            return f"it holds {counted(len(reachable) - 1, 'commit')} beyond the one envcheck fetched (new commits or a stash)"
        if (Path(repo.git_dir) / "worktrees").is_dir() and any((Path(repo.git_dir) / "worktrees").iterdir()):
            return "it has other worktrees"
        status = repo.git.status("--porcelain", "-z", "--untracked-files=all", "--ignored=traditional",
                                 "--ignore-submodules=dirty")
    finally:
        repo.close()
    entries = status_entries(status)
    changed = [path for code, path in entries if not install_byproduct(code, path)] + unrecorded_byproducts(folder, entries)
    if changed:
        return f"it has files that envcheck did not put there ({shown_paths(changed)})"
    return None
