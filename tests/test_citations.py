"""Every source envcheck cites is one a user can open: a URL, a file in the installed package, or a wheel's (or a
pinned commit's) file and line. The citations are the profiles' `source` keys (each verdict's basis: `source`,
`verified-source`, `newest-source`, a runtime floor's), the evidence runs doctor names, and bench's peaks and model
shapes; none may name a file the wheel does not ship (STACK.md, the repository's tests/data, ../shared, a bare log)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from envcheck.profile import load_builtin
from envcheck.profile.runs import EVIDENCE, builtin_runs
from envcheck.model import Evidence

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

PACKAGE = Path(__file__).resolve().parent.parent / "envcheck"
BUILTIN = PACKAGE / "profile" / "builtin"
PROFILES = sorted(p.stem for p in BUILTIN.glob("*.toml"))

URL = re.compile(r"https?://[^\s,;()]+[^\s,;().]")
WHEEL = re.compile(r" · ")  # `dist-version · path:line`, `cutlass_api e594def95 · path:line`
METADATA = re.compile(r"\bMETADATA\b|\bfile lists\b")
PACKAGE_FILE = re.compile(r"\benvcheck/[\w./-]+\.\w+")
# What a user cannot open: files of the project that are not shipped, and logs named without their place.
UNOPENABLE = re.compile(r"STACK\.md|DESIGN\.md|STYLE\.md|\.\./|\bshared/|\btests/|\be\.log\b|\bsection \d|"
                        r"\b[\w-]+/[\w.-]+#\d+")
# A part that cites no file but says what anyone can run to see it (a listing, a call, the hardware caveat).
RUNNABLE = re.compile(r"pip index versions|get_operators\(|cutlass_api\.get_kernels|run here|run without a GPU|"
                      r"not run on hardware|compiled for \w+ here|datasheet")


def _citations(value, key: str = "") -> list[tuple[str, str]]:
    """(key, text) of every string under a key ending in `source`, however deep."""
    if isinstance(value, dict):
        return [found for k, v in value.items() for found in _citations(v, k)]
    if isinstance(value, list):
        return [found for item in value for found in _citations(item, key)]
    return [(key, value)] if isinstance(value, str) and key.endswith("source") else []


def _all() -> list[tuple[str, str]]:
    cited = []
    for path in [*BUILTIN.glob("*.toml"), *(PACKAGE / "bench").glob("*.toml")]:
        cited += [(f"{path.name} {key}", text) for key, text in _citations(tomllib.loads(path.read_text()))]
    for profile in PROFILES:  # the runs as doctor names them (Evidence.said)
        for run in builtin_runs(profile):
            cited.append((f"{profile} run", Evidence((), (run,)).said.split("): ", 1)[1]))
    return cited


CITED = _all()


def test_the_scan_reads_every_kind_of_citation():
    keys = {key.split(" ", 1)[1] for key, _ in CITED}
    assert {"source", "verified-source", "newest-source", "run"} <= keys, keys
    assert len(CITED) > 60


@pytest.mark.parametrize("where, text", CITED, ids=[f"{w}:{t[:40]}" for w, t in CITED])
def test_every_citation_is_one_a_user_can_open(where, text):
    bad = UNOPENABLE.search(text)
    assert bad is None, f"{where} cites {bad.group()!r}, which a user of the wheel cannot open: {text}"
    for path in PACKAGE_FILE.findall(text):
        assert (PACKAGE.parent / path).is_file(), f"{where} cites {path}, which the package does not hold"
    opened = URL.search(text) or WHEEL.search(text) or METADATA.search(text) or PACKAGE_FILE.search(text)
    assert opened or RUNNABLE.search(text), f"{where}: {text!r} names nothing a user can open or run"


def test_a_builtin_run_is_cited_by_its_record_in_the_package():
    for profile in PROFILES:
        for index, run in enumerate(builtin_runs(profile)):
            assert run.recorded_in == f"envcheck/profile/evidence/{profile}.toml runs[{index}]"
            assert (PACKAGE.parent / run.recorded_in.split(" ")[0]).is_file()
    assert EVIDENCE == PACKAGE / "profile" / "evidence"


@pytest.mark.parametrize("profile", PROFILES)
def test_what_doctor_prints_cites_nothing_unopenable(profile):
    """The details doctor -v prints, for every finding of a machine that has nothing (so every remedy and source
    shows): no STACK.md, no repository file."""
    from factsbuilder import facts

    from envcheck.judge import judge

    policy = load_builtin(profile)
    for finding in judge(facts(), policy):
        for text in (finding.found, finding.why, *finding.details, finding.remedy.text if finding.remedy else ""):
            bad = UNOPENABLE.search(text)
            assert bad is None, f"{finding.id}: {bad.group()!r} in {text}"


def test_no_text_in_the_code_or_the_templates_names_a_file_the_wheel_does_not_ship():
    """Every string envcheck's code can print (its literals, docstrings aside) and every shipped template."""
    import ast

    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text())
        documents = {id(node.body[0].value) for node in ast.walk(tree)
                     if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                     and node.body and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
        found += [f"{path.relative_to(PACKAGE)}:{node.lineno}: {node.value[:80]!r}" for node in ast.walk(tree)
                  if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in documents
                  and UNOPENABLE.search(node.value)]
    for path in sorted((PACKAGE.parent / "templates").iterdir()):
        if path.is_file() and UNOPENABLE.search(path.read_text()):
            found.append(str(path))
    assert found == []
