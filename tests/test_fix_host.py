"""The search for other interpreters (doctor's and fix's advice for a target too old for the profile): real
interpreters, placed where pyenv and uv keep theirs, a shim that is not run, and a .pth that must not run while each
is asked its version; then which pip drives a target without one."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from envcheck.gather.pythons import find_pythons as find_interpreters
from wheelfactory import make_venv


def _interpreter(folder: Path) -> Path:
    """A real interpreter under folder/NAME/bin/python3: a link to the one running the tests."""
    target = folder / "bin" / "python3"
    target.parent.mkdir(parents=True)
    target.symlink_to(os.path.realpath(sys.executable))
    return target


@pytest.mark.parametrize("variable, layout", [
    ("PYENV_ROOT", "versions/3.12.9"),
    ("UV_PYTHON_INSTALL_DIR", "cpython-3.12.9-linux-x86_64-gnu"),
])
def test_the_search_follows_pyenv_root_and_uv_python_install_dir(tmp_path, variable, layout):
    root = tmp_path / "elsewhere"
    found = _interpreter(root / layout)
    env = {"PATH": "", "HOME": str(tmp_path / "home"), variable: str(root)}
    paths = [path for path, _ in find_interpreters(env)]
    # the same interpreter may also be on /usr/bin; a link resolves to it, and only the first of both is kept
    assert str(found) in paths or os.path.realpath(found) in {os.path.realpath(p) for p in paths}
    assert all(not p.startswith(str(tmp_path / "home")) for p in paths)


def test_the_default_places_are_under_home(tmp_path):
    found = _interpreter(tmp_path / "home" / ".pyenv" / "versions" / "3.12.9")
    env = {"PATH": "", "HOME": str(tmp_path / "home")}
    assert any(os.path.realpath(p) == os.path.realpath(found) for p, _ in find_interpreters(env))


def test_asking_an_interpreter_its_version_runs_none_of_its_pth_lines(tmp_path):
    """The candidate's own site folder holds a .pth import line: -S keeps it from running. The candidate is a venv
    of its own, so that no other process (a parallel test worker) meets the line."""
    marker = tmp_path / "ran"
    python = make_venv(tmp_path / "venv")
    site = next((tmp_path / "venv" / "lib").glob("python3*/site-packages"))
    (site / "zz-envcheck-test-host.pth").write_text(f"import pathlib; pathlib.Path({str(marker)!r}).write_text('ran')\n")
    env = {"PATH": str(python.parent), "HOME": str(tmp_path)}
    assert any(path.startswith(str(python.parent)) for path, _ in find_interpreters(env))
    assert not marker.exists()


def test_a_pyenv_shim_is_not_run_and_the_interpreters_behind_it_are_found(tmp_path):
    """A shim runs pyenv's scripts to pick an interpreter (seconds each, issue 26): it is passed over; the interpreter
    it would pick is read from PYENV_ROOT/versions."""
    marker = tmp_path / "the-shim-ran"
    shim = tmp_path / "pyenv" / "shims" / "python3.12"
    shim.parent.mkdir(parents=True)
    shim.write_text(f"#!/bin/sh\ntouch {marker}\necho 3.12.9\n")
    shim.chmod(0o755)
    real = _interpreter(tmp_path / "pyenv" / "versions" / "3.12.9")
    env = {"PATH": str(shim.parent), "HOME": str(tmp_path / "home"), "PYENV_ROOT": str(tmp_path / "pyenv")}
    paths = [path for path, _ in find_interpreters(env)]
    assert not marker.exists() and str(shim) not in paths
    assert str(real) in paths or os.path.realpath(real) in {os.path.realpath(p) for p in paths}


# ---------------------------------------------------------------------------------------------------------------
# A target without pip: which pip drives it, or what to run instead


def _no_pip(prefix: str):
    from dataclasses import replace as replaced

    from factsbuilder import interpreter

    made = interpreter()
    return replaced(made, executable=f"{prefix}/bin/python", prefix=prefix,
                    distributions=tuple(d for d in made.distributions if d.name != "pip"))


@pytest.mark.parametrize("own_pip, environment, says, never", [
    # under uvx: the README's `uvx --with pip`, never a pip put into uv's cache, never "too old" for no pip at all
    (None, "uvx", ["has none either", "`uvx --with pip --from ./envcheck envcheck fix ...`", "or nvgemm-envcheck",
                   "`/work/target/bin/python -m ensurepip`"], ["too old", "uvcache"]),
    (None, "uv tool", ["`uv tool install --with pip nvgemm-envcheck`"], ["too old", "uvx"]),
    (None, "uv venv", [f"`uv pip install --python {sys.executable} pip`"], ["too old", "uvx"]),
    (None, "", [f"`{sys.executable} -m ensurepip`", "has none either"], ["too old", "uv"]),
    ("21.0", "", ["own pip 21.0 is too old", f"`{sys.executable} -m pip install --upgrade pip`"], ["has none", "uv"]),
])
def test_a_target_without_pip_is_told_what_brings_one(own_pip, environment, says, never):
    from envcheck.errors import UsageError
    from envcheck.fix.host import pip_for

    with pytest.raises(UsageError) as raised:
        pip_for(_no_pip("/work/target"), own_pip, environment)
    message = str(raised.value)
    assert message.startswith("--python /work/target/bin/python: this interpreter has no pip")
    assert all(words in message for words in says), message
    assert not any(words in message for words in never), message


def test_envchecks_own_uvx_environment_as_the_target_is_not_given_a_pip(tmp_path):
    """No --python under uvx: the target is uvx's environment in uv's cache; envcheck says to name the one to fix."""
    from envcheck.errors import UsageError
    from envcheck.fix.host import pip_for

    with pytest.raises(UsageError) as raised:
        pip_for(_no_pip(sys.prefix), None, "uvx")
    assert "uvx --with pip" in str(raised.value) and "--python naming the environment to fix" in str(raised.value)
    assert "ensurepip" not in str(raised.value)


def test_a_new_enough_own_pip_drives_the_target():
    from envcheck.fix.host import pip_for

    assert pip_for(_no_pip("/work/target"), "22.3", "uvx")[-1] == "--python=/work/target/bin/python"
