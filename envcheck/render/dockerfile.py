"""The Dockerfile and .dockerignore of a profile: the templates (shipped in envcheck.templates) for a profile.

The template is plain text with `{{ name }}` placeholders; every value comes from the profile (and envcheck's own
version, which the image installs). The image installs the stack from a pylock.toml in the build context, so the
rendered Dockerfile depends on the profile only: `docker/Dockerfile` is the one for the default profile.

No value can change what the Dockerfile does. The profile's values were checked for their meaning when it was read
(a path inside the repository, a one-line title, a commit id...); here, `fill` refuses any value that would start a
new line, and places each one by the template's word for it:
  `{{ name | word }}`  a word of a RUN line (bash), of ARG, ENV or LABEL (Docker's parser): envcheck.shell.word,
                       which both read back as the very text, with nothing expanded;
  `{{ name }}`         in a comment, any one-line text; elsewhere only a bare word (letters, digits, `._-+=:@%,/`),
                       which no quoting would change: anything else there is a template bug, refused.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Mapping, Optional

from .. import DISTRIBUTION, __version__
from ..errors import UsageError
from ..profile import Policy, driver_text, spec_text
from ..redact import Redactor, has_credentials, redact_url
from ..shell import describe, is_bare, unsafe_character, word

__all__ = ["TEMPLATE", "DOCKERIGNORE_TEMPLATE", "ImageTarget", "template_text", "values", "fill", "render_dockerfile",
           "render_dockerignore", "checked_image"]

TEMPLATE = "Dockerfile.in"
DOCKERIGNORE_TEMPLATE = "dockerignore.in"
CUTLASS_STEP_TEMPLATE = "cutlass-step.in"  # the CUTLASS fetch, for a profile with a [cutlass] table
NO_CUTLASS_STEP_TEMPLATE = "no-cutlass-step.in"  # for a profile that needs no checkout
RUNTIME_STAGE_TEMPLATE = "runtime-stage.in"  # the final stage, for a profile that needs no toolkit at run time
GATE_TEMPLATE = "gate.in"  # doctor without a GPU, in the stage that ships
COMPILE_TARGET_STEP_TEMPLATE = "compile-target-step.in"  # the compile target's ENV, for a GPU capability given
_PLACEHOLDER = re.compile(r"\{\{\s*([a-z_]+)\s*(?:\|\s*([a-z]+)\s*)?\}\}")
_FILTERS = {"word": word}

# The image reference grammar of the distribution project (github.com/distribution/reference, reference.go):
# [domain[:port]/]path-component[/path-component...][:tag][@digest]. (An IPv6 registry address is not taken.)
_ALNUM = r"[a-z0-9]+"
_PATH_COMPONENT = rf"{_ALNUM}(?:(?:[_.]|__|-+){_ALNUM})*"
_DOMAIN_COMPONENT = r"(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
_DOMAIN = rf"{_DOMAIN_COMPONENT}(?:\.{_DOMAIN_COMPONENT})*(?::[0-9]+)?"
_TAG = r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}"
_DIGEST = r"[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}"
_IMAGE = re.compile(rf"(?:{_DOMAIN}/)?{_PATH_COMPONENT}(?:/{_PATH_COMPONENT})*(?::{_TAG})?(?:@{_DIGEST})?")
_NAME_MAX = 255  # characters of the name (before the tag), as the grammar limits it


def template_text(name: str) -> str:
    """A template as shipped in the wheel (envcheck.templates), or from templates/ when run from a source tree."""
    try:
        folder = resources.files("envcheck.templates")
    except ModuleNotFoundError:  # a source checkout: templates/ sits beside the package, mapped only on install
        folder = Path(__file__).resolve().parent.parent.parent / "templates"
    try:
        return folder.joinpath(name).read_text(encoding="utf-8")
    except OSError as exc:
        raise RuntimeError(f"the template {name} is missing from {folder}: a broken install ({exc})") from None


def default_base_image(policy: Policy) -> str:
    """The nvidia/cuda devel image on Ubuntu 24.04 (Python 3.12) for the CUDA the profile names."""
    return f"nvidia/cuda:{policy.driver_cuda.major}.{policy.driver_cuda.minor}.0-devel-ubuntu24.04"


def needs_toolkit(policy: Policy) -> bool:
    """Whether the profile needs a CUDA toolkit (nvcc) at run time: its cuda.toolkit is required. Otherwise the image
    is built in the devel image and ships in the runtime one (env-doctor puts the difference at about 3 GB)."""
    return policy.toolkit_level == "required"


def runtime_image(image: str) -> str:
    """The runtime image of a devel one (nvidia/cuda:13.0.0-devel-ubuntu24.04 -> ...-runtime-...); another image is
    its own runtime image."""
    return image.replace("-devel-", "-runtime-") if "-devel-" in image else image


def checked_image(image: str, flag: str = "--base-image") -> str:
    """An image reference by Docker's grammar (name[:tag][@digest]); else a UsageError naming the flag."""
    name = image.split("@", 1)[0]
    if ":" in name.rsplit("/", 1)[-1]:
        name = name.rsplit(":", 1)[0]  # without its tag
    if not _IMAGE.fullmatch(image) or len(name) > _NAME_MAX:
        raise UsageError(f"{flag} {image!r}: expected an image reference (name[:tag][@digest], lower-case name) such as "
                         "nvidia/cuda:13.1.0-devel-ubuntu24.04")
    return image


def values(policy: Policy, base_image: Optional[str] = None, target: Optional[ImageTarget] = None) -> dict[str, str]:
    image = checked_image(base_image) if base_image is not None else default_base_image(policy)
    if policy.cutlass is not None and has_credentials(policy.cutlass.url):
        # A build ARG is kept in the image's history for anyone who pulls it: a secret never goes there.
        raise UsageError(
            f"{policy.source}: key 'cutlass.url' = {Redactor(paths=False)(redact_url(policy.cutlass.url))!r}: carries credentials, "
            "which the Dockerfile would keep in the image's history; expected a URL without them (a public or "
            "ssh:// mirror)"
        )
    torch_cuda = spec_text(policy.torch_cuda, ",") or "any version"
    final = runtime_image(image)
    # the gate, in the stage that ships: the compile target's ENV (a GPU given) where the doctor that judges it runs
    doctor_gpu = "".join(f" --gpu-capability {cc}" for cc in target.capabilities) if target is not None else ""
    gate = fill(template_text(GATE_TEMPLATE), {"compile_target_step": _compile_target_step(target),
                                               "doctor_gpu": doctor_gpu}, GATE_TEMPLATE)
    if needs_toolkit(policy):
        note = f"This image brings nvcc {policy.driver_cuda} (the profile's cuda.toolkit is required)."
        stage = gate
    else:
        note = f"Built in {image}; it ships in {final}, no toolkit (no nvcc at run time)."
        stage = fill(template_text(RUNTIME_STAGE_TEMPLATE), {"runtime_image": final, "gate": gate},
                     RUNTIME_STAGE_TEMPLATE)
    return {
        "cutlass_step": _cutlass_step(policy),
        "final_stage": stage,
        "runtime_image": final,
        "toolkit_note": note,
        "cutlass_commit": policy.cutlass.commit if policy.cutlass else "none",
        "envcheck_version": __version__,
        "envcheck_distribution": DISTRIBUTION,
        "profile_id": policy.id,
        "profile_title": policy.title,
        "base_image": image,
        "backend": policy.backend,
        "python": str(policy.python),
        "driver_cuda": str(policy.driver_cuda),
        "driver_floor": driver_text(policy.driver_floor),
        "torch_cuda": torch_cuda,
        "capabilities": " ".join(f"{g.capability[0]}.{g.capability[1]}" for g in policy.gpus if g.status.value != "fail"),
    }


@dataclass(frozen=True)
class ImageTarget:
    """The GPUs an image is built for (--gpu-capability) and the variables their remedy sets (Remedy.environment)."""

    capabilities: tuple[str, ...]  # "9.0"
    environment: tuple[tuple[str, str], ...] = ()


def _compile_target_step(target: Optional[ImageTarget]) -> str:
    """The ENV of the compile target for the GPU given, or nothing."""
    if target is None or not target.environment:
        return ""
    ((variable, value),) = target.environment
    mapping = {"target_variable": variable, "target_value": value, "target_capability": ", ".join(target.capabilities)}
    return fill(template_text(COMPILE_TARGET_STEP_TEMPLATE), mapping, COMPILE_TARGET_STEP_TEMPLATE)


def _cutlass_step(policy: Policy) -> str:
    """The image's CUTLASS step: the fetch and editable install of the profile's package, or none at all."""
    source = policy.cutlass
    if source is None:
        return template_text(NO_CUTLASS_STEP_TEMPLATE)
    mapping = {"cutlass_url": source.url, "cutlass_branch": source.branch, "cutlass_commit": source.commit,
               "cutlass_subdir": source.subdir}
    return fill(template_text(CUTLASS_STEP_TEMPLATE), mapping, CUTLASS_STEP_TEMPLATE)


# Placeholders that stand for a whole filled template (or, doctor_gpu, flags made of checked capabilities), inserted
# as they are.
_BLOCKS = ("cutlass_step", "compile_target_step", "doctor_gpu", "final_stage", "gate")


def fill(template: str, mapping: Mapping[str, str], name: str = TEMPLATE) -> str:
    """Replace every {{ placeholder }} by its value, placed as the module docstring says. An unknown placeholder or
    filter, or a value that does not fit its place, is a bug (in the template or in a profile check), named with its
    line."""

    def one(match: re.Match) -> str:
        key, how = match.group(1), match.group(2)
        line = f"{name}:{template.count(chr(10), 0, match.start()) + 1}"
        if key not in mapping:
            raise KeyError(f"{line}: unknown placeholder {{{{ {key} }}}}")
        if how is not None and how not in _FILTERS:
            raise KeyError(f"{line}: unknown filter {{{{ {key} | {how} }}}} (known: {', '.join(_FILTERS)})")
        value = mapping[key]
        if key in _BLOCKS:
            return value
        bad = unsafe_character(value)
        if bad is not None:
            raise ValueError(f"{line}: {{{{ {key} }}}} holds {describe(bad)}, a line break or control character")
        if how is not None:
            return _FILTERS[how](value)
        in_comment = template[template.rfind("\n", 0, match.start()) + 1:match.start()].lstrip().startswith("#")
        if not in_comment and not is_bare(value):
            raise ValueError(f"{line}: {{{{ {key} }}}} = {value!r} is not a bare word: write {{{{ {key} | word }}}} there")
        return value

    return _PLACEHOLDER.sub(one, template)


def render_dockerfile(policy: Policy, base_image: Optional[str] = None, target: Optional[ImageTarget] = None) -> str:
    return fill(template_text(TEMPLATE), values(policy, base_image, target), TEMPLATE)


def render_dockerignore(policy: Policy) -> str:
    return fill(template_text(DOCKERIGNORE_TEMPLATE), values(policy), DOCKERIGNORE_TEMPLATE)
