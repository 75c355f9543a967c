"""fix's search for other interpreters (the advice for a target too old for the profile): real interpreters, placed
where pyenv and uv keep theirs, and a .pth that must not run while each is asked its version."""

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
