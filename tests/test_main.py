"""The entry point (envcheck/__main__.py): `doctor` gets a head start, NVML and nvcc started before typer is
imported, which doctor takes for the very interpreter it resolves, once; the target interpreter runs only once the
command line and its profiles are read (a refused run has not run it); any other command line starts nothing
early, and the outcome is the same either way."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from envcheck.__main__ import doctor_target
from envcheck.gather import head_start, started
from envcheck.redact import Redactor

# A report shows the interpreter as it shows every path: a venv under the home folder (the usual case) as `~/...`.
SHOWN = Redactor()(sys.executable)


@pytest.mark.parametrize("args, target", [
    (["doctor"], ""),  # the running interpreter
    (["doctor", "--json", "--no-gpu"], ""),
    (["doctor", "--python", "/v/bin/python"], "/v/bin/python"),
    (["doctor", "--python=/v/bin/python", "--json"], "/v/bin/python"),
    (["doctor", "--python", "/a/python", "--python", "/b/python"], "/b/python"),  # the last counts, as for typer
    (["doctor", "--python", "python3"], "python3"),  # resolved later, as doctor resolves it
    (["doctor", "--python"], None),  # no value: typer says so
    (["doctor", "--python="], None),
    (["doctor", "--python", "--json"], None),
    (["doctor", "-h"], None),
    (["doctor", "--python", "/v/bin/python", "--help"], None),
    (["doctor", "--", "--python", "/v/bin/python"], None),
    (["fix", "--python", "/v/bin/python"], None),  # another command
    (["--version"], None),
    ([], None),
])
def test_which_command_lines_get_a_head_start(args, target):
    assert doctor_target(args) == target


def test_started_takes_the_head_start_once_and_only_for_its_target(tmp_path):
    from envcheck import gather

    python = sys.executable
    head_start(python)
    early = gather._HEAD_START[python]
    started(python, env={"PATH": "/usr/bin"})  # another environment: a start of its own
    assert gather._HEAD_START[python] is early
    first = started(python)
    assert python not in gather._HEAD_START  # taken once
    other = tmp_path / "python"
    other.symlink_to(python)
    head_start(python)
    elsewhere = started(str(other))
    assert gather._HEAD_START.pop(python) is not early  # a head start for another path is not taken
    for gatherers in (first, elsewhere):  # each one a real probe that answers
        assert gatherers.interpreter(python, 30.0, None).executable


# Run envcheck as `python -m envcheck` does, recording each start of the probe (its `-I -S` interpreter, running the
# probe's source: where the target's Python is too old, other interpreters are asked their version the same way) and
# whether typer had been imported by then.
WATCH = """
import runpy, sys
starts = []
def hook(event, args):
    if event != "subprocess.Popen":
        return
    argv = list(args[1])
    if "-I" in argv and "-S" in argv and any("class SearchPath" in a for a in argv):
        starts.append("typer" in sys.modules)
sys.addaudithook(hook)
sys.argv = ["envcheck", *sys.argv[1:]]
try:
    runpy.run_module("envcheck", run_name="__main__")
finally:
    sys.stderr.write(f"PROBE-STARTS {starts}\\n")
"""


def _watched(*args: str) -> tuple[subprocess.CompletedProcess, list[bool]]:
    done = subprocess.run([sys.executable, "-c", WATCH, *args], capture_output=True, text=True, timeout=120)
    line = next(ln for ln in done.stderr.splitlines() if ln.startswith("PROBE-STARTS "))
    return done, eval(line.split(" ", 1)[1])  # noqa: S307 - our own list of booleans


def test_doctor_starts_its_probe_once_after_the_command_line_is_parsed():
    done, starts = _watched("doctor", "--json", "--no-gpu", "--python", sys.executable)
    assert json.loads(done.stdout)["target"] == SHOWN
    assert starts == [True]  # one probe, started once typer had parsed the command line


@pytest.mark.parametrize("argv, words", [
    (["--profile", "no-such-profile"], "--profile"),
    (["--profile", "bad.toml"], "bad.toml"),
    (["--format", "yaml"], "--format 'yaml'"),
    (["--bogus"], "No such option"),
])
def test_a_refused_doctor_has_not_run_the_target_interpreter(tmp_path, argv, words):
    """A refused command line, or a profile that cannot be used, is said before the target runs: the head start
    starts nothing of it (an interpreter that is a script would otherwise have run)."""
    (tmp_path / "bad.toml").write_text("x = " + "9" * 5000 + "\n")
    marker = tmp_path / "the-target-ran"
    target = tmp_path / "python"
    target.write_text(f"#!/bin/sh\ntouch {marker}\nexec {sys.executable} \"$@\"\n")
    target.chmod(0o755)
    done = subprocess.run([sys.executable, "-m", "envcheck", "doctor", "--no-gpu", "--python", str(target), *argv],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 2 and words in done.stderr, done.stderr[-1000:]
    assert not marker.exists(), "the target interpreter ran before the command line was refused"


def test_the_last_python_gets_the_head_start_and_nothing_else_starts_early():
    done, starts = _watched("doctor", "--json", "--no-gpu", "--python", "/no/such/python", "--python", sys.executable)
    assert json.loads(done.stdout)["target"] == SHOWN and starts == [True]
    done, starts = _watched("doctor", "--json", "--no-gpu", "--python", sys.executable, "--")
    assert json.loads(done.stdout)["target"] == SHOWN
    assert starts == [True]  # no head start: doctor starts the probe itself, once typer has parsed
    done, starts = _watched("doctor", "--python", "/no/such/python")
    assert done.returncode == 2 and "--python /no/such/python: no executable interpreter there" in done.stderr
    assert starts == []  # nothing to start: typer's parse and doctor say it, as without a head start


@pytest.mark.parametrize("project, refused", [
    ("[tool.envcheck]\nschema = 'nine'\n", True),  # a profile that cannot be used
    ("[tool.envcheck\n", True),  # a project file that is no TOML
    ("[project]\nname = 'mine'\n", False),  # a project with no profile: envcheck's own are read
    (None, False),
])
def test_a_refused_project_profile_has_not_run_the_target_interpreter(tmp_path, project, refused):
    """The project's [tool.envcheck] (a profile the user wrote) is read before the target runs, as --profile FILE is;
    only envcheck's own profiles are read while it runs (profile.builtin_only)."""
    (tmp_path / ".git").mkdir()
    if project is not None:
        (tmp_path / "pyproject.toml").write_text(project)
    marker = tmp_path / "the-target-ran"
    target = tmp_path / "python"
    target.write_text(f"#!/bin/sh\ntouch {marker}\nexec {sys.executable} \"$@\"\n")
    target.chmod(0o755)
    done = subprocess.run([sys.executable, "-m", "envcheck", "doctor", "--no-gpu", "--python", str(target)],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)
    if refused:
        assert done.returncode == 2 and "pyproject.toml" in done.stderr, done.stderr[-1000:]
        assert not marker.exists(), "the target interpreter ran before the project's profile was refused"
    else:
        assert done.returncode in (0, 1) and marker.exists(), done.stderr[-1000:]
