"""The first screen of a new user's first runs (issue 31 items 2 and 4): doctor says first when it judged envcheck's own
environment without torch, and how to point it at the job's; and it closes with what `envcheck fix` would do there,
or, where fix would stop before any change, why. Pure where it can be (a Report rendered), then the real command in
a real process, on envcheck's own interpreter and on another one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from factsbuilder import facts, interpreter
from wheelfactory import make_venv

from envcheck.commands.doctor import DoctorOptions, _fixable
from envcheck.judge import judge
from envcheck.model import Report, TorchBuild
from envcheck.own import is_own_environment
from envcheck.profile import choose, load_builtin
from envcheck.render import render

NOTICE = "This is envcheck's own environment, and it holds no torch"
OPERATORS = "torch-2.14-operators"


def envcheck(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**{k: v for k, v in os.environ.items() if k != "COLUMNS"}, "COLUMNS": "100"}
    return subprocess.run([sys.executable, "-m", "envcheck", *args], capture_output=True, text=True, timeout=300,
                          env=env, cwd=cwd)


# ---------------------------------------------------------------------------------------------------------------
# The notice


def test_own_environment_is_the_prefix_envcheck_runs_in(tmp_path):
    (tmp_path / "link").symlink_to(sys.prefix)
    assert is_own_environment(sys.prefix) and is_own_environment(str(tmp_path / "link"))
    other = make_venv(tmp_path / "venv").parent.parent
    assert not is_own_environment(str(other)) and not is_own_environment("") and not is_own_environment(str(tmp_path / "none"))


def _report(own: bool, torch: bool) -> Report:
    dists = {"torch": "2.15.0+cu132"} if torch else {}
    target = interpreter(version=(3, 12, 3), dists=dists,
                         torch=TorchBuild("2.15.0+cu132", "13.2", "x", "/v/torch/version.py") if torch else None)
    policy, choice = choose(OPERATORS, "2.15.0+cu132" if torch else None)
    found = facts(interpreter=target)
    return Report(choice, target.executable, judge(found, policy, no_gpu=True), found, envcheck_environment=own)


@pytest.mark.parametrize("own, torch, said", [(True, False, True), (True, True, False), (False, False, False),
                                              (False, True, False)])
def test_the_notice_comes_first_where_envcheck_judged_its_own_environment_without_torch(own, torch, said):
    report = _report(own, torch)
    table = render(report, "table").splitlines()
    profile = next(i for i, line in enumerate(table) if line.startswith("  profile "))
    before = " ".join(" ".join(table[1:profile]).split())  # between the title and the profile: the notice or nothing
    assert (before != "") is said and (NOTICE in render(report, "table")) is said, table[:5]
    if said:  # first: before the profile and before the checks, and the way to the job's environment
        assert table[1].startswith("  " + NOTICE) and "`envcheck doctor --python PATH`" in before
        assert "pip install" not in before and "envcheck fix" not in before
    markdown = render(report, "markdown")
    assert (NOTICE in markdown) is said
    assert json.loads(render(report, "json"))["envcheck_environment"] is own


def test_doctor_says_it_of_its_own_interpreter_and_not_of_another(tmp_path):
    """The real command: without --python the target is envcheck's own interpreter (no torch in the tests' one);
    --python another venv (no torch either) is another environment, which nothing is said of."""
    import importlib.util

    if importlib.util.find_spec("torch") is not None:
        pytest.skip("the tests' environment holds torch: envcheck's own environment is one that runs torch here")
    own = envcheck("doctor", "--no-gpu", cwd=tmp_path)
    assert own.returncode == 1 and own.stdout.splitlines()[1].startswith("  " + NOTICE), own.stdout[:400]
    assert json.loads(envcheck("doctor", "--no-gpu", "--json", cwd=tmp_path).stdout)["envcheck_environment"] is True
    other = make_venv(tmp_path / "venv")
    done = envcheck("doctor", "--no-gpu", "--python", str(other), cwd=tmp_path)
    assert done.returncode == 1 and NOTICE not in done.stdout and "  profile " in done.stdout.splitlines()[1]
    data = json.loads(envcheck("doctor", "--no-gpu", "--python", str(other), "--json", cwd=tmp_path).stdout)
    assert data["envcheck_environment"] is False


# ---------------------------------------------------------------------------------------------------------------
# The closing line


@pytest.mark.parametrize("version, line", [
    # the README's first run: envcheck's own Python 3.11 without torch, judged for torch 2.15.0 (it was missing:
    # judged by the recipe, Python 3.11 stopped fix's plan and doctor said nothing of fix)
    ((3, 11, 7), "`envcheck fix --python /opt/venv/bin/python --no-gpu` can fix: torch.version, cutedsl.version, "
                 "nvgemm.deps (it shows its plan first)."),
    ((3, 12, 3), "`envcheck fix --python /opt/venv/bin/python --no-gpu` can fix: torch.version, cutedsl.version, "
                 "nvgemm.deps (it shows its plan first)."),
    # a Python no stack takes: fix would stop, and says why where the promise was
    ((3, 9, 18), "`envcheck fix --python /opt/venv/bin/python --no-gpu` would stop before any change: "
                 "/opt/venv/bin/python is Python 3.9.18; the stack needs Python >=3.10 (python.version says what to "
                 "do)."),
])
def test_doctor_closes_with_what_fix_would_do_there(version, line):
    target = interpreter(version=version, dists={}, torch=None)
    policy, choice = choose(None, None, python=".".join(map(str, version)))
    found = facts(interpreter=target)
    report = Report(choice, target.executable, judge(found, policy, no_gpu=True), found)
    fixable, command, blocked = _fixable(report, policy, DoctorOptions(python=target.executable, no_gpu=True))
    table = render(report, "table", fixable=fixable, fix_command=command, blocked=blocked).splitlines()
    assert policy.id == OPERATORS and table[-2] == line, table[-3:]
    assert table[-1] == "Run with -v for why each check matters and every detail."


def test_the_recipe_named_on_python_3_11_still_says_why_fix_would_stop():
    """--profile torch-2.11-nvgemm on Python 3.11: the recipe needs 3.12 (cutlass_api): one remedy, the venv, and
    the closing line says fix would stop before any change."""
    target = interpreter(version=(3, 11, 7), dists={}, torch=None)
    policy = load_builtin("torch-2.11-nvgemm")
    found = facts(interpreter=target)
    report = Report(choose("torch-2.11-nvgemm")[1], target.executable, judge(found, policy, no_gpu=True), found)
    fixable, command, blocked = _fixable(report, policy, DoctorOptions(python=target.executable, no_gpu=True,
                                                                       profile="torch-2.11-nvgemm"))
    assert fixable == () and blocked
    closing = render(report, "table", fixable=fixable, fix_command=command, blocked=blocked).splitlines()[-2]
    assert closing.startswith("`envcheck fix --python /opt/venv/bin/python --profile torch-2.11-nvgemm --no-gpu` would "
                              "stop before any change: /opt/venv/bin/python is Python 3.11.7; the stack needs Python "
                              ">=3.12"), closing
