"""envcheck's extras lead somewhere good: each built-in profile has one, equal to the profile's own stack (what `lock`
resolves), none pairs a torch that admits 2.14 with a DSL capped at 4.3.x (the dead end of the old [stack]), and every
install hint names the distribution nvgemm-envcheck (`envcheck` on the package index is another project)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name

from envcheck.lock.resolve import requirements_for
from envcheck.profile import builtin_profiles, load_builtin

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
EXTRAS = PYPROJECT["project"]["optional-dependencies"]
# Each built-in profile's extra. A new profile needs its own here and in pyproject.toml.
PROFILE_EXTRAS = {"torch-2.11-nvgemm": "recipe", "torch-2.14-operators": "operators"}
# The extras that are not a stack.
TOOL_EXTRAS = {"lock", "plot", "test"}


def requirement_set(texts) -> set[tuple]:
    """Requirements as comparable values: the name, extras, the specifier (as a set of clauses) and the marker."""
    found = set()
    for text in texts:
        requirement = Requirement(text)
        found.add((canonicalize_name(requirement.name), frozenset(requirement.extras),
                   frozenset(str(s) for s in requirement.specifier), str(requirement.marker or "")))
    return found


def test_every_built_in_profile_has_an_extra_and_every_stack_extra_a_profile():
    assert set(PROFILE_EXTRAS) == set(builtin_profiles()), "a built-in profile without an extra (or a stale one)"
    assert set(EXTRAS) == set(PROFILE_EXTRAS.values()) | TOOL_EXTRAS


@pytest.mark.parametrize("profile, extra", sorted(PROFILE_EXTRAS.items()))
def test_each_extra_is_its_profiles_stack(profile, extra):
    """What `envcheck lock --profile` resolves (torch in range, the DSL with its extras, every package rule, required
    and recommended), less the CUTLASS checkout no index has (cutlass_api: `envcheck fix` installs it)."""
    assert requirement_set(EXTRAS[extra]) == requirement_set(requirements_for(load_builtin(profile)))


def test_the_comparison_sees_a_bound_that_differs():
    assert requirement_set(["torch>=2.11,<2.14"]) == requirement_set(["torch<2.14, >=2.11"])
    assert requirement_set(["torch>=2.11"]) != requirement_set(["torch>=2.11,<2.14"])
    assert requirement_set(["nvidia-cutlass-dsl>=4.8"]) != requirement_set(["nvidia-cutlass-dsl[cu13]>=4.8"])


# Versions to probe a specifier with: whether a torch admits 2.14 or later, whether a DSL is capped at 4.3.x.
TORCH_FROM_2_14 = ("2.14.0", "2.14.1", "2.15.0", "2.16.0", "2.20.0", "3.0.0")
DSL_FROM_4_4 = ("4.4.0", "4.5.0", "4.8.0", "4.8.1", "5.0.0")


def dead_end(requirements) -> bool:
    """A torch that admits 2.14 or later beside a DSL that admits nothing from 4.4 on: torch 2.14 looks for
    cutlass.operators, which needs the DSL >= 4.8 (profile torch-2.14-operators)."""
    specs: dict[str, SpecifierSet] = {}
    for text in requirements:
        requirement = Requirement(text)
        specs[canonicalize_name(requirement.name)] = requirement.specifier
    torch, dsl = specs.get("torch"), specs.get("nvidia-cutlass-dsl")
    if torch is None or dsl is None:
        return False
    admits_new_torch = any(torch.contains(v, prereleases=True) for v in TORCH_FROM_2_14)
    capped_dsl = not any(dsl.contains(v, prereleases=True) for v in DSL_FROM_4_4)
    return admits_new_torch and capped_dsl


@pytest.mark.parametrize("extra", sorted(EXTRAS))
def test_no_extra_pairs_a_torch_that_admits_2_14_with_a_dsl_capped_at_4_3(extra):
    assert not dead_end(EXTRAS[extra])


@pytest.mark.parametrize("requirements, found", [
    (["torch>=2.11", "nvidia-cutlass-dsl>=4.3.0,<=4.3.5"], True),  # the old [stack]
    (["torch>=2.11,<2.14", "nvidia-cutlass-dsl>=4.3.0,<=4.3.5"], False),
    (["torch>=2.14", "nvidia-cutlass-dsl[cu13]>=4.8.0"], False),
    (["torch>=2.14", "nvidia-cutlass-dsl<4.4"], True),
    (["torch", "nvidia-cutlass-dsl==4.3.5"], True),
    (["nvidia-cutlass-dsl<=4.3.5"], False),
])
def test_the_dead_end_rule(requirements, found):
    assert dead_end(requirements) is found


# --------------------------------------------------------------------------------------------------------------
# Hints name the distribution

# `envcheck[plot]` not preceded by `nvgemm-`: a hint that would install the unrelated project `envcheck`.
WRONG_HINT = re.compile(r"(?<![\w-])envcheck\[")


def shipped_text_files() -> list[Path]:
    """Every file of the source tree git tracks, the README among them (tests say how users must not write it)."""
    names = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    files = [ROOT / name for name in names.split("\0") if name and not name.startswith("tests/")]
    return [f for f in files if f.is_file() and f.suffix not in (".png", ".whl", ".tar", ".gz")]


def test_every_install_hint_names_nvgemm_envcheck():
    found = []
    for path in shipped_text_files():
        text = path.read_text(encoding="utf-8", errors="replace")
        found += [f"{path.relative_to(ROOT)}: {line.strip()}" for line in text.splitlines() if WRONG_HINT.search(line)]
    assert found == []


@pytest.mark.parametrize("line, wrong", [
    ("pip install 'envcheck[plot]'", True),
    ("pip install envcheck[lock]", True),
    ("pip install 'nvgemm-envcheck[plot]'", False),
    ("python3 -m pip install -e '.[test]'", False),
])
def test_the_hint_rule(line, wrong):
    assert bool(WRONG_HINT.search(line)) is wrong
