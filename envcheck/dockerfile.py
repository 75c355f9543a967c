"""dockerfile: render the Dockerfile template (shipped in envcheck.templates) for a profile.

The template is plain text with `{{ name }}` placeholders; every value comes from the profile (and envcheck's own
version, which the image installs). The image installs the stack from a pylock.toml in the build context, so the
rendered Dockerfile depends on the profile only: `docker/Dockerfile` is the one for the default profile.
"""

from __future__ import annotations

import re
import sys
from importlib import resources
from pathlib import Path
from typing import Callable, Mapping, Optional

from . import __version__
from .errors import UsageError
from .policy import Policy, driver_text, spec_text
from .redact import Redactor, has_credentials
from .userfile import write_text

__all__ = ["TEMPLATE", "DOCKERIGNORE_TEMPLATE", "template_text", "values", "fill", "render_dockerfile", "render_dockerignore", "run_dockerfile"]

TEMPLATE = "Dockerfile.in"
DOCKERIGNORE_TEMPLATE = "dockerignore.in"
CUTLASS_STEP_TEMPLATE = "cutlass-step.in"  # the CUTLASS fetch, for a profile with a [cutlass] table
NO_CUTLASS_STEP_TEMPLATE = "no-cutlass-step.in"  # for a profile that needs no checkout
_PLACEHOLDER = re.compile(r"\{\{\s*([a-z_]+)\s*\}\}")
_IMAGE = re.compile(r"^[a-z0-9][a-z0-9._/-]*(:[A-Za-z0-9._-]+)?(@sha256:[0-9a-f]{64})?$")


def template_text(name: str) -> str:
    """A template as shipped in the wheel (envcheck.templates), or from templates/ when run from a source tree."""
    try:
        folder = resources.files("envcheck.templates")
    except ModuleNotFoundError:  # a source checkout: templates/ sits beside the package, mapped only on install
        folder = Path(__file__).resolve().parent.parent / "templates"
    try:
        return folder.joinpath(name).read_text(encoding="utf-8")
    except OSError as exc:
        raise RuntimeError(f"the template {name} is missing from {folder}: a broken install ({exc})") from None


def default_base_image(policy: Policy) -> str:
    """The nvidia/cuda devel image on Ubuntu 24.04 (Python 3.12) for the CUDA the profile names."""
    return f"nvidia/cuda:{policy.driver_cuda.major}.{policy.driver_cuda.minor}.0-devel-ubuntu24.04"


def values(policy: Policy, base_image: Optional[str] = None) -> dict[str, str]:
    image = base_image or default_base_image(policy)
    if not _IMAGE.match(image):
        raise UsageError(f"--base-image {image!r}: expected an image reference such as nvidia/cuda:13.1.0-devel-ubuntu24.04")
    if policy.cutlass is not None and has_credentials(policy.cutlass.url):
        # A build ARG is kept in the image's history for anyone who pulls it: a secret never goes there.
        raise UsageError(
            f"{policy.source}: key 'cutlass.url' = {Redactor(paths=False)(policy.cutlass.url)!r}: carries credentials, "
            "which the Dockerfile would keep in the image's history; expected a URL without them (a public or "
            "ssh:// mirror)"
        )
    torch_cuda = spec_text(policy.torch_cuda, ",") or "any version"
    return {
        "cutlass_step": _cutlass_step(policy),
        "cutlass_commit": policy.cutlass.commit if policy.cutlass else "none",
        "envcheck_version": __version__,
        "profile_id": policy.id,
        "profile_title": policy.title.replace('"', "'"),
        "base_image": image,
        "backend": policy.backend,
        "python": str(policy.python),
        "driver_cuda": str(policy.driver_cuda),
        "driver_floor": driver_text(policy.driver_floor),
        "torch_cuda": torch_cuda,
        "capabilities": " ".join(f"{g.capability[0]}.{g.capability[1]}" for g in policy.gpus if g.status.value != "fail"),
    }


def _cutlass_step(policy: Policy) -> str:
    """The image's CUTLASS step: the fetch and editable install of the profile's package, or none at all."""
    source = policy.cutlass
    if source is None:
        return template_text(NO_CUTLASS_STEP_TEMPLATE)
    mapping = {"cutlass_url": source.url, "cutlass_branch": source.branch, "cutlass_commit": source.commit,
               "cutlass_subdir": source.subdir}
    return fill(template_text(CUTLASS_STEP_TEMPLATE), mapping, CUTLASS_STEP_TEMPLATE)


def fill(template: str, mapping: Mapping[str, str], name: str = TEMPLATE) -> str:
    """Replace every {{ placeholder }}; an unknown one is a bug in the template, named with its line."""

    def one(match: re.Match) -> str:
        key = match.group(1)
        if key not in mapping:
            line = template.count("\n", 0, match.start()) + 1
            raise KeyError(f"{name}:{line}: unknown placeholder {{{{ {key} }}}}")
        return mapping[key]

    return _PLACEHOLDER.sub(one, template)


def render_dockerfile(policy: Policy, base_image: Optional[str] = None) -> str:
    return fill(template_text(TEMPLATE), values(policy, base_image), TEMPLATE)


def render_dockerignore(policy: Policy) -> str:
    return fill(template_text(DOCKERIGNORE_TEMPLATE), values(policy), DOCKERIGNORE_TEMPLATE)


def run_dockerfile(
    output: Optional[Path],
    *,
    policy_file: Optional[Path] = None,
    profile: Optional[str] = None,
    base_image: Optional[str] = None,
    out: Optional[Callable[[str], object]] = None,
    err: Callable[[str], None] = lambda text: print(text, file=sys.stderr),
) -> int:
    """`envcheck dockerfile`: write the Dockerfile (and a .dockerignore beside it, unless one is there already)."""
    from .policy import resolve

    policy = resolve(policy_file, profile=profile)
    text = render_dockerfile(policy, base_image)
    if output is None:
        (out or sys.stdout.write)(text)
        return 0
    output = Path(output)
    ignore = output.parent / ".dockerignore"
    ignore_text = render_dockerignore(policy)
    write_text(output, text, f"-o {output}")
    try:
        if not ignore.exists():
            ignore.write_text(ignore_text, encoding="utf-8")
        elif ignore.read_text(encoding="utf-8") != ignore_text:
            err(f"envcheck dockerfile: note: left {ignore} as it is; the build context needs only pylock.toml and wheels/")
    except OSError as exc:
        raise UsageError(f"-o {output}: cannot write {ignore}: {exc.strerror or exc}") from None
    err(f"envcheck dockerfile: wrote {output} for profile {policy.id}; put pylock.toml and wheels/ beside it and run docker build")
    return 0
