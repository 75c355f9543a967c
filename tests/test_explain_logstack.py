"""explain without --python (issue 29 item 3, issue 31 item 5): the stack a log belongs to and the interpreter its
remedies name, from the log's own paths and frames. Tables over each kind of evidence, evidence that disagrees, and
none; the interpreter from each kind of site directory; --python wins; nothing a log names is ever run."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from envcheck.causes.logstack import StackReader, interpreter_of
from envcheck.model import LogStack
from envcheck.profile import candidates

DATA = Path(__file__).parent / "data" / "torch-2.15.0"
RECIPE, OPERATORS = "torch-2.11-nvgemm", "torch-2.14-operators"
# Inductor's frames of each read torch release (the profiles' [[torch.frames]])
F2130 = "torch/_inductor/graph.py:1518 call_function"
F2141 = "torch/_inductor/select_algorithm.py:4063 __call__"
F2150 = "torch/_inductor/graph.py:1595 call_function"


def read(text: str, libraries=("cutlass_api", "cutlass.operators")) -> LogStack:
    reader = StackReader(libraries)
    reader.read(text)
    return reader.stack()


# --------------------------------------------------------------------------------------------------------------
# The interpreter a site directory belongs to


@pytest.mark.parametrize("prefix, version, kind, python", [
    ("/home/u/.venv", "3.12", "site", "/home/u/.venv/bin/python"),  # a venv
    ("/opt/conda/envs/train", "3.11", "site", "/opt/conda/envs/train/bin/python"),  # a conda env
    ("/opt/conda", "3.12", "site", "/opt/conda/bin/python"),  # conda's base
    ("/home/u/.local/share/uv/tools/vllm", "3.12", "site", "/home/u/.local/share/uv/tools/vllm/bin/python"),  # uv tool
    ("/usr", "3", "dist", "/usr/bin/python3"),  # Debian's own packages
    ("/usr/local", "3.12", "dist", "/usr/bin/python3.12"),  # Debian: pip's installs for the system python
    ("/usr", "3.12", "site", "/usr/bin/python3.12"),  # Fedora, Arch
    ("/usr/local", "3.12", "site", "/usr/local/bin/python3.12"),  # python.org's build, the python Docker images
    ("/home/u/.local", "3.12", "site", "python3.12"),  # a user site: whichever python3.12 that is
    ("/opt/app", "3.12", "dist", None),  # a dist-packages outside /usr: not said
    ("/opt/app", "3", "site", None),
])
def test_the_interpreter_of_each_kind_of_site_directory(prefix, version, kind, python):
    assert interpreter_of(prefix, version, kind) == python


def test_the_site_that_holds_torch_wins_over_the_first():
    stack = read('  File "/srv/tools/lib/python3.11/site-packages/hydra/main.py", line 90, in run\n'
                 '  File "/home/u/.venv/lib/python3.12/site-packages/torch/_inductor/graph.py", line 1595, in '
                 'call_function\n')
    assert stack.interpreter == "/home/u/.venv/bin/python" and stack.python == "3.12"
    assert stack.site == "/home/u/.venv/lib/python3.12/site-packages"
    assert stack.inductor and stack.frames == (F2150,)


@pytest.mark.parametrize("text, python", [
    ("/tmp/v15/lib/python3.12/site-packages/triton/knobs.py:504: UserWarning: TRITON_DEFAULT_FP_FUSION is unset",
     "/tmp/v15/bin/python"),  # the H200's own first line (d3-ops.log): no torch path, the first site
    ('  File "venv/lib/python3.12/site-packages/torch/x.py"', None),  # a relative path names no interpreter
    ("pip install torch", None),
    ("E   /usr/lib/python3/dist-packages/torch/__init__.py:1: x", "/usr/bin/python3"),
])
def test_an_interpreter_only_where_a_path_names_one(text, python):
    assert read(text).interpreter == python


def test_what_is_kept_is_capped():
    frames = "".join(f'  File "/v/lib/python3.12/site-packages/torch/_inductor/f{i}.py", line {i}, in g\n'
                     for i in range(500))
    stack = read(frames)
    assert len(stack.frames) == 64 and stack.frames[0] == "torch/_inductor/f0.py:0 g"
    sites = "".join(f"/a{i}/lib/python3.12/site-packages/x.py\n" for i in range(200)) + \
        "/late/lib/python3.12/site-packages/torch/x.py\n"
    assert read(sites).interpreter == "/a0/bin/python"  # the torch site after the cap is not looked for


# --------------------------------------------------------------------------------------------------------------
# The profile, from each kind of evidence; disagreeing evidence named; none: what `pip install torch` gives on the
# log's Python (the choice every command makes without torch, issue 31 item 1)


CHOICES = [
    # (the log's stack, the profile, words of the reason)
    (LogStack(), OPERATORS, "names no torch and shows no one stack: `pip install torch` gives torch 2.15.0"),
    (LogStack(torch="2.15.0"), OPERATORS, "the log names torch 2.15.0"),
    (LogStack(torch="2.13.0"), RECIPE, "the log names torch 2.13.0"),
    (LogStack(frames=(F2150,)), OPERATORS, "its Inductor frames are torch 2.15.0's (torch/_inductor/graph.py:1595 in "
     "call_function)"),
    (LogStack(frames=(F2141,)), OPERATORS, "torch 2.14.1's"),
    (LogStack(frames=(F2130,)), RECIPE, "torch 2.13.0's"),
    (LogStack(frames=("torch/_inductor/graph.py:9 call_function",)), OPERATORS, "shows no one stack"),  # unknown lines
    (LogStack(libraries=("cutlass.operators",)), OPERATORS, "goes through cutlass.operators"),
    (LogStack(libraries=("cutlass_api",)), RECIPE, "goes through cutlass_api"),
    (LogStack(dsl_folders=("dsl_packages",)), OPERATORS, "nvidia_cutlass_dsl/dsl_packages"),
    (LogStack(dsl_folders=("python_packages",)), RECIPE, "nvidia_cutlass_dsl/python_packages"),
    (LogStack(python="3.11", site="/v/lib/python3.11/site-packages"), OPERATORS, "Python 3.11"),
    (LogStack(python="3.10"), OPERATORS, "Python 3.10"),
    (LogStack(python="3.12"), OPERATORS, "shows no one stack, and on Python 3.12 `pip install torch` gives torch "
     "2.15.0"),  # both profiles take 3.12: what pip gives there
    (LogStack(inductor=True, python="3.12"), OPERATORS, "goes through Inductor (torch/_inductor)"),
    (LogStack(nvgemm=True), OPERATORS, "Inductor's NVGEMM code (nv_universal_gemm)"),
    # disagreeing: the stronger wins, the weaker is named
    (LogStack(torch="2.15.0", libraries=("cutlass_api",)), OPERATORS, "; though it goes through cutlass_api"),
    (LogStack(frames=(F2130,), dsl_folders=("dsl_packages",)), RECIPE, "torch 2.13.0's (torch/_inductor/graph.py:1518 "
     "in call_function); though its DSL's `cutlass` is in nvidia_cutlass_dsl/dsl_packages"),
    (LogStack(libraries=("cutlass_api",), dsl_folders=("dsl_packages",)), RECIPE, "goes through cutlass_api"),
    (LogStack(dsl_folders=("python_packages",), python="3.11"), RECIPE, "though its interpreter is Python 3.11"),
    (LogStack(libraries=("cutlass_api", "cutlass.operators"), nvgemm=True), OPERATORS, "shows no one stack"),
    (LogStack(dsl_folders=("dsl_packages", "python_packages")), OPERATORS, "shows no one stack"),
]


@pytest.mark.parametrize("stack, profile, words", CHOICES)
def test_the_profile_from_what_the_log_shows(stack, profile, words):
    policy, choice = candidates().from_log(stack)
    assert policy.id == profile and choice.id == profile, choice
    assert words in choice.reason, choice.reason


def test_frames_of_two_profiles_decide_nothing_by_frames():
    stack = LogStack(frames=(F2130, F2150), python="3.11")  # a log of two environments: the Python decides
    policy, choice = candidates().from_log(stack)
    assert policy.id == OPERATORS and "Python 3.11" in choice.reason and "frames" not in choice.reason.split(";")[0]


def test_a_named_profile_wins_over_every_clue():
    policy, choice = candidates("torch-2.11-nvgemm").from_log(LogStack(torch="2.15.0", frames=(F2150,)))
    assert policy.id == RECIPE and "named with --profile" in choice.reason


# --------------------------------------------------------------------------------------------------------------
# Through the command: the remedies' interpreter, where it came from, --python wins, nothing run


def envcheck(*args: str, home: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "envcheck", "explain", *args], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "HOME": str(home), "COLUMNS": "200"})


NO_CUTLASS = ('Traceback (most recent call last):\n  File "{site}/torch/_inductor/utils.py", line 2187, in '
              "ensure_cute_available\n    import cutlass\nModuleNotFoundError: No module named 'cutlass'\n")


def test_the_remedy_names_the_log_s_interpreter_and_says_where_it_came_from(tmp_path):
    """The issue's case: Python 3.12 paths, no cutlass_api: the operators stack's DSL into that venv's python, not
    the recipe's DSL into an unqualified python3."""
    home = tmp_path / "home"
    site = f"{home}/.venv/lib/python3.12/site-packages"
    log = tmp_path / "run.log"
    log.write_text(NO_CUTLASS.format(site=site), encoding="utf-8")
    done = envcheck(str(log), home=home)
    assert done.returncode == 1, done.stderr
    assert "$ ~/.venv/bin/python -m pip install 'nvidia-cutlass-dsl[cu13]>=4.8.0'" in done.stdout
    assert "python  ~/.venv/bin/python, read from the log's paths (~/.venv/lib/python3.12/site-packages" in done.stdout
    assert "python3 -m pip" not in done.stdout and "4.3.5" not in done.stdout
    data = json.loads(envcheck(str(log), "--json", home=home).stdout)
    assert data["python"] == {"path": "~/.venv/bin/python", "from": "~/.venv/lib/python3.12/site-packages"}
    assert data["profile"]["id"] == OPERATORS
    assert data["causes"][0]["remedy"]["commands"][0][:3] == ["~/.venv/bin/python", "-m", "pip"]


def test_another_user_s_home_is_redacted(tmp_path):
    log = tmp_path / "run.log"
    log.write_text(NO_CUTLASS.format(site="/home/alice/.venv/lib/python3.12/site-packages"), encoding="utf-8")
    done = envcheck(str(log), "--json", home=tmp_path)
    assert "alice" not in done.stdout
    assert json.loads(done.stdout)["python"]["path"] == "/home/<user>/.venv/bin/python"


def test_python_given_wins_over_the_log_s_paths(tmp_path):
    log = tmp_path / "run.log"
    log.write_text(NO_CUTLASS.format(site="/srv/other/lib/python3.12/site-packages"), encoding="utf-8")
    done = envcheck(str(log), "--json", "--python", sys.executable, home=tmp_path)
    data = json.loads(done.stdout)
    assert "python" not in data and data["target"] == sys.executable
    assert "/srv/other" not in json.dumps(data["causes"])


def test_nothing_the_log_names_is_run(tmp_path):
    """An interpreter the log's paths name, which would leave a mark if anything ran it: explain names it only."""
    prefix = tmp_path / "evil"
    (prefix / "bin").mkdir(parents=True)
    mark = tmp_path / "ran"
    python = prefix / "bin" / "python"
    python.write_text(f"#!/bin/sh\ntouch {mark}\n")
    python.chmod(python.stat().st_mode | stat.S_IXUSR)
    log = tmp_path / "run.log"
    log.write_text(NO_CUTLASS.format(site=f"{prefix}/lib/python3.12/site-packages"), encoding="utf-8")
    done = envcheck(str(log), "--json", home=tmp_path / "home")
    assert json.loads(done.stdout)["python"]["path"] == str(python)
    assert not mark.exists()


def test_the_h200_s_log_is_judged_by_its_own_stack(tmp_path):
    """issue 29 item 3: the torch 2.15.0 traceback (no torch version, no kernel library in it) is not the recipe's."""
    done = envcheck(str(DATA / "linear3d.log"), home=tmp_path)
    assert "profile torch-2.14-operators chosen because its Inductor frames are torch 2.15.0's" in done.stdout
    assert "cause  nvgemm-no-kernel-for-op" in done.stdout and "cutlass_api" not in done.stdout.split("also")[0]
