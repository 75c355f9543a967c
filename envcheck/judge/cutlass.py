"""cutlass.checkout and cutlass-api.install: the CUTLASS checkout at the pinned commit, and cutlass_api installed from it."""

from __future__ import annotations

import os

from ..model import Checkout, Failure, Finding, Remedy, Status, Step
from ..profile import spec_text
from ._common import Context, fix_command, interpreter_error

__all__ = ["cutlass_checkout", "cutlass_api_install", "fetch_remedy"]


def fetch_remedy(source, python: str, why: str, text: str = "") -> Remedy:
    """What to do when the CUTLASS checkout or the package from it is missing: `envcheck fix`, or by hand the very
    git commands fix runs (gitsafe.git_commands) and the editable install. doctor and smoke both say this."""
    from ..gitsafe import git_commands  # the one place the fetch commands are written

    extras = f"[{','.join(source.extras)}]" if source.extras else ""
    return Remedy(
        text=text or (
            f"Fetch branch {source.branch} of {source.url} at {source.commit[:9]} (shallow, sparse to {source.subdir}) "
            f"and install {source.distribution} from it; `envcheck fix` does both."
        ),
        commands=(
            fix_command(python),
            *git_commands("cutlass", source.url, source.branch, source.commit, source.subdir),
            (python, "-m", "pip", "install", "-e", f"cutlass/{source.subdir}{extras}"),
        ),
        steps=(Step("cutlass-fetch", (), why), Step("cutlass-install", (), f"{source.distribution} comes from the checkout")),
    )


def _fetch(ctx: Context, why: str) -> Remedy:
    return fetch_remedy(ctx.policy.cutlass, ctx.python, why)


def _describe(checkout: Checkout) -> str:
    state = [f"on branch {checkout.branch}" if checkout.branch else "detached"]
    state.append(f"{len(checkout.dirty_files)} changed files" if checkout.dirty else "clean")
    if checkout.shallow:
        state.append("shallow")
    if checkout.sparse:
        state.append("sparse")
    return f"{checkout.path} at {checkout.commit[:9] if checkout.commit else '?'} ({', '.join(state)})"


def not_needed(ctx: Context, check: str, title: str) -> Finding:
    """The finding of a checkout check under a profile that needs no CUTLASS checkout: a skip, not a failure."""
    return Finding(check, title, Status.SKIP, f"not needed by this profile ({ctx.policy.id} installs its kernel library from wheels)",
                   "", "Only a profile with a [cutlass] table installs a package from a CUTLASS checkout.")


def cutlass_checkout(ctx: Context) -> Finding:
    check, title = "cutlass.checkout", "CUTLASS checkout"
    source = ctx.policy.cutlass
    if source is None:
        return not_needed(ctx, check, title)
    wanted = f"a clean checkout of {source.url} at {source.commit[:9]} (branch {source.branch}) holding {source.subdir}"
    why = source.why
    checkout = ctx.facts.checkout
    if isinstance(checkout, Failure):
        return Finding(check, title, Status.ERROR, f"the checkout could not be read: {checkout.message}", wanted, why)
    if checkout is None:
        interpreter = ctx.interpreter
        installed = interpreter.dist(source.distribution) if interpreter else None
        if installed is not None and installed.commit == source.commit:
            return Finding(check, title, Status.SKIP, f"{source.distribution} is installed from {installed.url} at {installed.commit[:9]}; no checkout is needed", wanted, why)
        return Finding(check, title, Status.FAIL,
                       "no checkout found (looked at --cutlass-dir, ENVCHECK_CUTLASS_DIR, "
                       f"the source of an editable {source.distribution}, envcheck's cache)",
                       wanted, why, _fetch(ctx, "no CUTLASS checkout"))
    where = f"{checkout.path} (from {checkout.source})"
    if not checkout.exists:
        return Finding(check, title, Status.FAIL, f"{where} does not exist", wanted, why, _fetch(ctx, "the checkout is missing"))
    if checkout.error:
        return Finding(check, title, Status.FAIL, f"{where}: {checkout.error}", wanted, why, _fetch(ctx, checkout.error))
    if not checkout.is_repo:
        return Finding(check, title, Status.FAIL,
                       f"{where} is not a git repository" + (f" (it holds {source.subdir})" if checkout.has_package else ""),
                       wanted, why,
                       Remedy(f"Without git history its commit cannot be verified: point --cutlass-dir at a git checkout of {source.url}, or at an empty directory for `envcheck fix` to fetch into."))
    if not checkout.is_cutlass and checkout.commit != source.commit:
        remotes = f" (remotes: {', '.join(checkout.remotes)})" if checkout.remotes else ""
        return Finding(check, title, Status.FAIL,
                       f"{where} is a git repository, but not CUTLASS: its HEAD {checkout.commit[:9] if checkout.commit else ''} has no include/cutlass/cutlass.h{remotes}",
                       wanted, why,
                       Remedy(f"Point --cutlass-dir at a checkout of {source.url}, or at a new directory for `envcheck fix` to fetch into."))
    described = _describe(checkout)
    details = tuple(f"changed: {f}" for f in checkout.dirty_files[:20]) + ((f"remotes: {', '.join(checkout.remotes)}",) if checkout.remotes else ())
    if checkout.commit != source.commit:
        if checkout.dirty:
            remedy = Remedy("The checkout has local changes, so envcheck will not move it: commit or stash them, then run `envcheck fix` (or check out the pinned commit yourself).",
                            commands=(("git", "-C", checkout.path, "checkout", source.commit),))
        else:
            remedy = _fetch(ctx, f"the checkout is at {checkout.commit[:9] if checkout.commit else '?'}")
        return Finding(check, title, Status.FAIL, f"{described}: not the pinned commit", wanted, why, remedy, details)
    if not checkout.has_package:
        return Finding(check, title, Status.FAIL, f"{described}, but {source.subdir} is not in the work tree (sparse checkout without it?)", wanted, why,
                       Remedy("Add it to the sparse checkout.", commands=(("git", "-C", checkout.path, "sparse-checkout", "add", source.subdir),)), details)
    if checkout.dirty:
        return Finding(check, title, Status.WARN, f"{described}: the pinned commit, with local changes", wanted, why,
                       Remedy("Local changes run instead of the pinned code; git lists them.", commands=(("git", "-C", checkout.path, "status"),)), details)
    return Finding(check, title, Status.PASS, described, wanted, why, None, details)


def _same_dir(a: str, b: str) -> bool:
    return os.path.realpath(a) == os.path.realpath(b)


def cutlass_api_install(ctx: Context) -> Finding:
    source = ctx.policy.cutlass
    if source is None:
        return not_needed(ctx, "cutlass-api.install", "package installed from the CUTLASS checkout")
    check, title = "cutlass-api.install", f"{source.module} installed from the checkout"
    error = interpreter_error(ctx, check, title)
    if error:
        return error
    interpreter = ctx.interpreter
    wanted = f"{source.distribution} installed editable from {source.subdir} of the pinned checkout, importable as {source.module}"
    why = source.why
    dist = interpreter.dist(source.distribution)
    module = interpreter.module(source.module)
    origin = module.origin if module else None
    checkout = ctx.facts.checkout if isinstance(ctx.facts.checkout, Checkout) else None
    install_step = Step("cutlass-install", (), f"{source.distribution} is not installed from the checkout")
    install = Remedy(
        "Install it editable from the checkout (`envcheck fix` does this).",
        commands=(fix_command(ctx.python), (ctx.python, "-m", "pip", "install", "-e", f"<checkout>/{source.subdir}[{','.join(source.extras)}]" if source.extras else f"<checkout>/{source.subdir}")),
        steps=(() if checkout and checkout.has_package else (Step("cutlass-fetch", (), "no checkout to install from"),)) + (install_step,),
    )
    if dist is None:
        if origin:
            return Finding(check, title, Status.WARN, f"`import {source.module}` loads {origin}, but no {source.distribution} distribution is installed (a path hack?)", wanted, why, install)
        blocked = ""
        if not _python_ok(ctx):
            blocked = f"; it needs Python {spec_text(ctx.policy.python)} (see python.version)"
        return Finding(check, title, Status.FAIL, f"not installed{blocked}", wanted, why, install)
    found = f"{source.distribution} {dist.version}"
    if origin is None:
        return Finding(check, title, Status.FAIL, f"{found} is installed but `import {source.module}` finds nothing" + (f" (editable source {dist.editable} is gone?)" if dist.editable else ""), wanted, why, install)
    if dist.editable:
        found += f", editable from {dist.editable}"
        if checkout is not None and checkout.exists and not _same_dir(dist.editable, os.path.join(checkout.path, source.subdir)):
            return Finding(check, title, Status.WARN, f"{found}, not from the checkout checked ({checkout.path})", wanted, why,
                           Remedy(f"Check the checkout it runs from (below), or reinstall it from {checkout.path}.", steps=(install_step,),
                                  commands=(("envcheck", "doctor", "--python", ctx.python, "--cutlass-dir", os.path.dirname(os.path.dirname(dist.editable))),)))
        if checkout is not None and checkout.commit and checkout.commit != source.commit:
            return Finding(check, title, Status.FAIL, f"{found}, at {checkout.commit[:9]}, not the pinned {source.commit[:9]}", wanted, why, _fetch(ctx, "the installed source is not at the pinned commit"))
        return Finding(check, title, Status.PASS, f"{found}; `import {source.module}` loads {origin}", wanted, why)
    if dist.commit:
        found += f" from {dist.url} at {dist.commit[:9]}"
        if dist.commit == source.commit:
            return Finding(check, title, Status.PASS, found, wanted, why)
        return Finding(check, title, Status.FAIL, f"{found}, not the pinned {source.commit[:9]}", wanted, why, install)
    return Finding(check, title, Status.WARN, f"{found}, installed without a record of its source (not editable, no VCS commit): its commit cannot be verified", wanted, why, install)


def _python_ok(ctx: Context) -> bool:
    from ._common import satisfies

    return satisfies(ctx.interpreter.version_text, ctx.policy.python)
