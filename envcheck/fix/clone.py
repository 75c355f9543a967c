"""The git commands of a fresh CUTLASS fetch, written once: fix.cutlass runs the same ones (through GitPython, no shell),
plans show them, and doctor's remedy prints them for doing it by hand. Light on purpose: doctor imports it."""

from __future__ import annotations

from ..gitsafe import FILE_UPLOAD_PACK, upload_pack

__all__ = ["PARTIAL", "git_commands"]

PARTIAL = ".envcheck-partial"  # the sibling folder a fetch builds in, renamed into place when complete


def git_commands(dest: str, url: str, branch: str, commit: str, subdir: str) -> tuple[tuple[str, ...], ...]:
    """The git commands a fresh fetch runs, for the plan (GitPython runs the same ones, without a shell)."""
    partial = f"{dest}{PARTIAL}"
    commands = [
        ("git", "init", "--quiet", "--template=", partial),  # no hooks or config copied from a template
        ("git", "-C", partial, "remote", "add", "origin", url),
        ("git", "-C", partial, "config", "remote.origin.promisor", "true"),
        ("git", "-C", partial, "config", "remote.origin.partialclonefilter", "blob:none"),
    ]
    if url.startswith("file:"):
        commands.append(("git", "-C", partial, "config", "remote.origin.uploadpack", FILE_UPLOAD_PACK))
    commands += [
        ("git", "-C", partial, "fetch", "--depth=1", "--filter=blob:none", "--no-tags", "--no-recurse-submodules",
         f"--upload-pack={upload_pack(url)}", "--progress", "--", "origin", f"+{commit}:refs/remotes/origin/{branch}"),
        ("git", "-C", partial, "sparse-checkout", "set", "--cone", subdir),
        ("git", "-C", partial, "checkout", "--quiet", "--no-recurse-submodules", "-B", branch, commit, "--"),
        ("mv", partial, dest),
    ]
    return tuple(commands)
