"""`envcheck dockerfile`: the Dockerfile of a profile (render/dockerfile.py fills the template), to standard output or
-o FILE with a .dockerignore beside it, unless one is there already."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path
from typing import Callable, Optional

from ..errors import UsageError
from ..render.dockerfile import render_dockerfile, render_dockerignore
from ..userfile import read_text, write_text

__all__ = ["run_dockerfile"]


def run_dockerfile(
    output: Optional[Path],
    *,
    profile: Optional[str] = None,
    base_image: Optional[str] = None,
    out: Optional[Callable[[str], object]] = None,
    err: Callable[[str], None] = lambda text: print(text, file=sys.stderr),
) -> int:
    """`envcheck dockerfile`: write the Dockerfile (and a .dockerignore beside it, unless one is there already)."""
    from ..profile import choose
    from ..render.text import profile_line

    policy, choice = choose(profile, target=False)  # an image to build: no interpreter to read torch from
    err(f"envcheck dockerfile: {profile_line(choice)}")
    text = render_dockerfile(policy, base_image)
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
