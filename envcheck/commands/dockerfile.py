"""`envcheck dockerfile`: the Dockerfile of a profile (render/dockerfile.py fills the template), to standard output or
-o FILE with a .dockerignore beside it, unless one is there already."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path
from typing import Callable, Optional

from packaging.version import Version

from ..errors import UsageError
from ..render.dockerfile import ImageTarget, render_dockerfile, render_dockerignore
from ..userfile import read_text, write_text

__all__ = ["run_dockerfile"]


def run_dockerfile(
    output: Optional[Path],
    *,
    profile: Optional[str] = None,
    base_image: Optional[str] = None,
    gpu_capabilities: tuple[tuple[int, int], ...] = (),
    torch: Optional[str] = None,
    out: Optional[Callable[[str], object]] = None,
    err: Callable[[str], None] = lambda text: print(text, file=sys.stderr),
) -> int:
    """`envcheck dockerfile`: write the Dockerfile (and a .dockerignore beside it, unless one is there already).
    torch: the version the image installs (--torch), which picks the profile where none is named and decides whether
    its GPUs need the compile target's ENV; None: not known."""
    from ..profile import choose, torch_release
    from ..render.text import profile_line

    release = torch_release(torch) if torch is not None else None
    if torch is not None and release is None:
        raise UsageError(f"--torch {torch!r}: expected a torch version such as 2.15.0")
    # an image to build: no interpreter to read torch from, only the version given
    policy, choice = choose(profile, torch, target=torch is not None)
    err(f"envcheck dockerfile: {profile_line(choice)}")
    target = image_target(policy, tuple(dict.fromkeys(gpu_capabilities)), err, release)
    text = render_dockerfile(policy, base_image, target)
    if output is None:
        (out or sys.stdout.write)(text)
        return 0
    output = Path(output)
    ignore = output.parent / ".dockerignore"
    ignore_text = render_dockerignore(policy)
    write_text(output, text, f"-o {output}")
    kept = _keep_or_create(ignore, ignore_text, f"-o {output}: {ignore}")
    if kept:
        err(f"envcheck dockerfile: note: left {ignore} as it is ({kept}); the build context needs only pylock.toml "
            "and wheels/")
    err(f"envcheck dockerfile: wrote {output} for profile {policy.id}; put pylock.toml and wheels/ beside it and run docker build")
    return 0


def image_target(policy, capabilities: tuple[tuple[int, int], ...], err: Callable[[str], None],
                 torch: Optional[Version] = None) -> Optional[ImageTarget]:
    """The GPUs given and the compile target their image sets: cutedsl.arch's remedy where its verdict for the image's
    torch (None: not known) without the variable is not a pass, on any of them. One value per image, so GPUs of two
    targets are refused (exit 2) where one needs it; a profile with no target for them sets none, and says so."""
    from ..judge.target import target_remedy, unset_verdict
    from ..model import Status, capability_text
    from ..profile import spec_text

    if not capabilities:
        return None
    texts = tuple(capability_text(cc) for cc in capabilities)
    rule = policy.compile_target
    targets = {cc: rule.target_for(cc) for cc in capabilities} if rule is not None else {}
    found = next(iter(targets.values()), None)
    if found is None:
        err(f"envcheck dockerfile: note: profile {policy.id} names no compile target for compute capability "
            f"{', '.join(texts)}: the image sets none")
        return ImageTarget(texts)
    # the image's torch, judged without its source (not installed yet) or a job's settings: the profile's numbers
    verdicts = {cc: unset_verdict(rule, cc, torch, None, {}) for cc in capabilities}
    if all(v.status is Status.PASS for v in verdicts.values()):
        settings = ", ".join(m.variable for m in rule.more_choices) if rule.choices_for(torch) is not None else ""
        err(f"envcheck dockerfile: note: cutedsl.arch passes without {rule.variable} on compute capability "
            f"{', '.join(texts)} with torch {torch if torch is not None else spec_text(rule.torch)}: the image sets "
            "none" + (f" (a job that sets {settings} may need it: doctor where it runs says so)" if settings else ""))
        return ImageTarget(texts)
    if len(set(targets.values())) > 1:
        raise UsageError("--gpu-capability: an image sets one " + rule.variable + ", and these GPUs have different targets ("
                         + ", ".join(f"{capability_text(cc)}: {t}" for cc, t in targets.items()) + "): build one image per target")
    return ImageTarget(texts, target_remedy(rule.variable, found).environment)


def _keep_or_create(path: Path, text: str, what: str) -> str:
    """Create path with text unless something is there already; returns why it was kept ("" when written or equal).

    Whatever is at that name stays: a file the user wrote, and a symbolic link, which is never followed (a link
    that points nowhere would otherwise create its target, anywhere). A new file is written beside and renamed
    into place (atomic.replace_text), so that a link made meanwhile is replaced, never followed."""
    from ..atomic import replace_text

    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        try:
            replace_text(path, text)
        except OSError as exc:
            raise UsageError(f"{what}: cannot write it: {exc.strerror or exc}") from None
        return ""
    except OSError as exc:
        raise UsageError(f"{what}: cannot read it: {exc.strerror or exc}") from None
    if stat.S_ISLNK(mode):
        return f"a symbolic link to {os.readlink(path)}, not followed"
    if not stat.S_ISREG(mode):
        return "not a regular file"
    return "" if read_text(path, what) == text else "it differs from envcheck's"
