"""How the other Pythons on this machine are found (envcheck/gather/pythons.py): from real folder trees laid out as
pyenv and uv lay out their installs, with interpreters that leave a mark when run, so that a test sees which were
read and which were run; pyenv's shims on PATH are never run."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from envcheck.gather.pythons import find_pythons, stated_version

HEADER = '/* Python version identification scheme. */\n#define PY_MAJOR_VERSION 3\n#define PY_VERSION "{}"\n'


def _marking(path: Path, mark: Path, prints: str = "") -> Path:
    """An executable script at `path` that leaves `mark` when run (and prints `prints`)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\necho ran >> '{mark}'\n" + (f"echo {prints}\n" if prints else ""))
    path.chmod(0o755)
    return path


def _install(prefix: Path, version: str, mark: Path, header: str | None = "same", name: str = "") -> Path:
    """A CPython install as pyenv and uv leave one: PREFIX/bin/pythonX.Y (which marks `mark` when run, printing its
    version), bin/python3 a link to it, and include/pythonX.Y/patchlevel.h stating `header` ("same": `version`)."""
    minor = name or "python" + ".".join(version.split(".")[:2])
    _marking(prefix / "bin" / minor, mark, prints=version)
    (prefix / "bin" / "python3").symlink_to(minor)
    if header is not None:
        (prefix / "include" / minor).mkdir(parents=True)
        (prefix / "include" / minor / "patchlevel.h").write_text(HEADER.format(version if header == "same" else header))
    return prefix / "bin" / "python3"


def _env(tmp_path: Path, path: str = "", **more: str) -> dict:
    return {"PATH": path, "HOME": str(tmp_path / "home"), **more}


def _found(tmp_path: Path, env: dict, **how) -> tuple:
    """What find_pythons finds under tmp_path (the system's /usr/bin/python3 is always among what it finds)."""
    return tuple((path, version) for path, version in find_pythons(env, **how) if path.startswith(str(tmp_path)))


def test_pyenvs_versions_are_read_from_their_folders_and_its_shims_never_run(tmp_path):
    """As on this machine: pyenv with 3.10, 3.12 and 3.13, its shims first on PATH."""
    root, ran, shim_ran = tmp_path / "pyenv", tmp_path / "ran", tmp_path / "shim-ran"
    installed = {version: _install(root / "versions" / version, version, ran) for version in ("3.10.13", "3.12.1", "3.13.0")}
    for minor in ("3.13", "3.12", "3.11", "3.10"):
        _marking(root / "shims" / f"python{minor}", shim_ran)
    found = _found(tmp_path, _env(tmp_path, str(root / "shims"), PYENV_ROOT=str(root)))
    assert found == tuple((str(installed[v]), v) for v in ("3.13.0", "3.12.1", "3.10.13"))
    assert not ran.exists() and not shim_ran.exists()


def test_uvs_installs_are_read_from_their_folders(tmp_path):
    root, ran = tmp_path / "uv", tmp_path / "ran"
    python = _install(root / "cpython-3.12.7-linux-x86_64-gnu", "3.12.7", ran)
    free = _install(root / "cpython-3.13.1+freethreaded-linux-x86_64-gnu", "3.13.1", ran, name="python3.13t")
    found = _found(tmp_path, _env(tmp_path, UV_PYTHON_INSTALL_DIR=str(root)))
    assert found == ((str(free), "3.13.1"), (str(python), "3.12.7")) and not ran.exists()


@pytest.mark.parametrize("header, why", [
    (None, "no headers"),
    ("3.11.4", "headers of another Python"),
    ("three", "no version in them"),
])
def test_an_install_that_states_no_version_of_its_own_is_asked(tmp_path, header, why):
    root, ran = tmp_path / "pyenv", tmp_path / "ran"
    python = _install(root / "versions" / "3.12.4", "3.12.4", ran, header=header)
    found = find_pythons(_env(tmp_path, PYENV_ROOT=str(root)))
    assert (str(python), "3.12.4") in found, why
    assert ran.read_text() == "ran\n"  # asked once


def test_an_interpreter_on_path_is_asked_and_a_script_on_path_is_not(tmp_path):
    """A real interpreter (a link to the one running the tests) beside a shim of another version."""
    bin_folder, shim_ran = tmp_path / "bin", tmp_path / "shim-ran"
    real = bin_folder / f"python3.{sys.version_info[1]}"
    bin_folder.mkdir()
    real.symlink_to(os.path.realpath(sys.executable))
    _marking(bin_folder / "python3.19", shim_ran, prints="3.19.0")
    found = dict(find_pythons(_env(tmp_path, str(bin_folder))))
    assert found.get(str(real)) == "%d.%d.%d" % sys.version_info[:3]
    assert str(bin_folder / "python3.19") not in found and not shim_ran.exists()


def test_one_that_hangs_or_fails_is_left_out_and_the_others_are_found(tmp_path):
    root, ran = tmp_path / "pyenv", tmp_path / "ran"
    good = _install(root / "versions" / "3.12.1", "3.12.1", ran)
    hangs = root / "versions" / "3.13.0" / "bin"
    hangs.mkdir(parents=True)
    (hangs / "python3").write_text("#!/bin/sh\nsleep 60\n")
    (hangs / "python3").chmod(0o755)
    fails = root / "versions" / "3.14.0" / "bin"
    fails.mkdir(parents=True)
    (fails / "python3").write_text("#!/bin/sh\nexit 1\n")
    (fails / "python3").chmod(0o755)
    assert _found(tmp_path, _env(tmp_path, PYENV_ROOT=str(root)), timeout=1.0) == ((str(good), "3.12.1"),)


@pytest.mark.parametrize("name, header, stated", [
    ("python3.12", "3.12.1", "3.12.1"),
    ("python3.13", "3.13.0rc1", "3.13.0"),  # the X.Y.Z of a pre-release, as sys.version_info[:3] gives it
    ("python3.14", "3.14.0a1+", "3.14.0"),
    ("python3.13t", "3.13.2", "3.13.2"),  # free-threaded: include/python3.13t
    ("python3.12", "3.11.9", None),  # not this interpreter's headers
    ("python3.12", "3.1", None),
    ("python3.12", None, None),
    ("python3", "3.12.1", None),  # no X.Y in the name: which headers are its own is not known
    ("pypy3.10", "3.10.14", None),
])
def test_the_stated_version_is_the_one_of_the_interpreters_own_headers(tmp_path, name, header, stated):
    prefix = tmp_path / "prefix"
    (prefix / "bin").mkdir(parents=True)
    executable = prefix / "bin" / name
    executable.write_text("")
    if header is not None:
        (prefix / "include" / name).mkdir(parents=True)
        (prefix / "include" / name / "patchlevel.h").write_text(HEADER.format(header))
    assert stated_version(str(executable)) == stated


def test_an_old_pythons_headers_are_found_under_its_abi_flag(tmp_path):
    """Python 3.7 and before keep them in include/python3.7m (pyenv's 3.6 and 3.7 on this machine)."""
    prefix = tmp_path / "prefix"
    (prefix / "bin").mkdir(parents=True)
    (prefix / "bin" / "python3.7").write_text("")
    (prefix / "include" / "python3.7m").mkdir(parents=True)
    (prefix / "include" / "python3.7m" / "patchlevel.h").write_text(HEADER.format("3.7.16"))
    assert stated_version(str(prefix / "bin" / "python3.7")) == "3.7.16"


def test_a_header_that_is_not_a_small_regular_file_is_not_read(tmp_path):
    prefix = tmp_path / "prefix"
    (prefix / "bin").mkdir(parents=True)
    (prefix / "bin" / "python3.12").write_text("")
    (prefix / "include" / "python3.12").mkdir(parents=True)
    os.mkfifo(prefix / "include" / "python3.12" / "patchlevel.h")  # a FIFO: opening it must not wait for a writer
    assert stated_version(str(prefix / "bin" / "python3.12")) is None
    (prefix / "include" / "python3.12" / "patchlevel.h").unlink()
    (prefix / "include" / "python3.12" / "patchlevel.h").write_text(HEADER.format("3.12.1") + " " * (1 << 17))
    assert stated_version(str(prefix / "bin" / "python3.12")) is None
