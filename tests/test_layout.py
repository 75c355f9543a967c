"""The layout of envcheck/ (README "How envcheck is built"), read from its own imports by tests/layout.py: no import
cycle, no module over 400 lines (300 in profile/), no arrow to a higher floor or across rooms of one floor (no
command imports another), every module on a declared floor, only the standard library at the top of inside/."""

from __future__ import annotations

from pathlib import Path

import pytest

from layout import FLOORS, analyse

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def tree() -> dict:
    return analyse(ROOT)


def test_no_import_cycle(tree):
    assert tree["cycles"] == [], "\n".join(
        f"{a['importer']}:{a['line']} -> {a['imported']}" for a in tree["cycle_arrows"])


def test_no_module_over_its_limit(tree):
    assert tree["over"] == []


def test_every_import_goes_down_or_stays_in_its_room(tree):
    assert [f"{a['importer']}:{a['line']} [{a['importer_floor']}] -> {a['imported']} [{a['imported_floor']}]"
            for a in tree["against"]] == []


def test_every_module_stands_on_a_declared_floor(tree):
    assert tree["unplaced"] == []


def test_what_runs_in_the_target_imports_only_the_standard_library(tree):
    assert tree["inside"] == []


def test_every_floor_holds_a_module(tree):
    """A floor no module stands on is a rule about nothing (a folder that was moved or renamed)."""
    from layout import declared_floor

    used = {declared_floor(module)[1] for module in tree["sizes"] if declared_floor(module)}
    assert [name for name, _ in FLOORS if name not in used] == []


# The checker itself, on a small package made here: each rule finds what it is for.


def _package(root: Path, files: dict[str, str]) -> Path:
    for name, text in {"envcheck/__init__.py": "", **files}.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def test_the_checker_finds_a_cycle(tmp_path):
    found = analyse(_package(tmp_path, {
        "envcheck/model/__init__.py": "", "envcheck/model/a.py": "from .b import x\n",
        "envcheck/model/b.py": "def f():\n    from .a import y\n"}))
    assert found["cycles"] == [["envcheck.model.a", "envcheck.model.b"]]


def test_the_checker_finds_an_arrow_up_and_one_between_commands(tmp_path):
    found = analyse(_package(tmp_path, {
        "envcheck/errors.py": "from .cli import app\n",
        "envcheck/cli.py": "from .commands import fix\n",
        "envcheck/commands/__init__.py": "", "envcheck/commands/fix.py": "",
        "envcheck/commands/doctor.py": "def f():\n    from .fix import run_fix\n",
        "envcheck/render/__init__.py": "", "envcheck/render/text.py": "from ..fleet.merge import Fleet\n",
        "envcheck/fleet/__init__.py": "", "envcheck/fleet/merge.py": "from ..smoke.run import x\n",
        "envcheck/smoke/__init__.py": "", "envcheck/smoke/run.py": ""}))
    against = {(a["importer"], a["imported"]) for a in found["against"]}
    assert against == {("envcheck.errors", "envcheck.cli"), ("envcheck.commands.doctor", "envcheck.commands.fix"),
                       ("envcheck.fleet.merge", "envcheck.smoke.run")}  # render -> fleet and cli -> commands go down


def test_the_checker_finds_size_placement_and_what_inside_may_not_import(tmp_path):
    found = analyse(_package(tmp_path, {
        "envcheck/profile/__init__.py": "", "envcheck/profile/big.py": "x = 1\n" * 301,
        "envcheck/gather/__init__.py": "", "envcheck/gather/fine.py": "x = 1\n" * 400,
        "envcheck/stray.py": "",
        "envcheck/inside/__init__.py": "", "envcheck/inside/child.py": "import json\nimport torch\nfrom .. import model\n",
        "envcheck/model.py": ""}))
    assert found["over"] == [("envcheck.profile.big", 301, 300)]
    assert found["unplaced"] == ["envcheck.stray"]
    assert sorted(found["inside"]) == ["envcheck.inside.child:2 imports torch at module level (not the standard library)",
                                       "envcheck.inside.child:3 imports envcheck.model"]
