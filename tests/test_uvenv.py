"""envcheck/uvenv.py against uv's real layouts: a `uv venv`, a uvx (`uv tool run`) environment in uv's cache and a
`uv tool install`, each running uvenv.py (a wheel of it, installed by uv offline), and a venv Python's venv module made."""

from __future__ import annotations

import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest
from wheelfactory import build_wheel

from envcheck.uvenv import UV_TOOL, UV_VENV, UVX, uv_environment

ROOT = Path(__file__).resolve().parent.parent
SAYS = "from envcheck.uvenv import uv_environment; print(uv_environment() or 'none')"


def _uv() -> str:
    try:
        from uv import find_uv_bin
    except ImportError:
        pytest.skip("uv is not installed (it is in the test extras)")
    return find_uv_bin()


@pytest.fixture
def uv_run(tmp_path):
    """Run uv offline with its cache, tools and binaries in tmp_path, and a wheel of envcheck's uvenv.py to install."""
    uv = _uv()
    own = {name: (ROOT / "envcheck" / name).read_text() for name in ("__init__.py", "uvenv.py")}
    wheels = tmp_path / "wheels"
    files = {f"envcheck/{name}": text for name, text in own.items()}
    files["own_probe-1.0.dist-info/entry_points.txt"] = "[console_scripts]\nown-probe = envcheck.uvenv:uv_environment\n"
    build_wheel(wheels, "own-probe", "1.0", files)  # uv tool install wants an entry point
    env = {key: value for key, value in os.environ.items() if not key.startswith(("UV_", "VIRTUAL_ENV", "PYTHON"))}
    env.update(UV_CACHE_DIR=str(tmp_path / "cache"), UV_TOOL_DIR=str(tmp_path / "tools"),
               UV_TOOL_BIN_DIR=str(tmp_path / "bin"), UV_NO_CONFIG="1", UV_PYTHON_DOWNLOADS="never", UV_OFFLINE="1")

    def run(*args: str, **kw) -> str:
        done = subprocess.run([uv, *args], capture_output=True, text=True, env=env, timeout=300, cwd=tmp_path, **kw)
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()

    run.wheels = wheels
    return run


def test_uvx_uv_tool_and_uv_venv_are_told_apart_from_a_plain_venv(uv_run, tmp_path):
    source = ["--no-index", "--find-links", str(uv_run.wheels), "--python", sys.executable]
    # uvx: a throwaway environment in uv's cache
    assert uv_run("tool", "run", *source, "--from", "own-probe", "python", "-c", SAYS) == UVX
    # uv tool install: an environment of its own, with uv-receipt.toml
    uv_run("tool", "install", *source, "own-probe")
    (tool,) = [p for p in (tmp_path / "tools").iterdir() if p.is_dir()]
    assert subprocess.run([str(tool / "bin" / "python"), "-c", SAYS], capture_output=True, text=True,
                          timeout=60).stdout.strip() == UV_TOOL
    # uv venv, with the wheel put in by uv pip
    uv_run("venv", "--python", sys.executable, str(tmp_path / "uv-venv"))
    uv_run("pip", "install", "--python", str(tmp_path / "uv-venv" / "bin" / "python"), *source[:3], "own-probe")
    said = subprocess.run([str(tmp_path / "uv-venv" / "bin" / "python"), "-c", SAYS], capture_output=True, text=True,
                          timeout=60)
    assert said.stdout.strip() == UV_VENV, said.stderr
    # Python's own venv: not uv's
    venv.EnvBuilder(with_pip=False, symlinks=True).create(tmp_path / "plain")
    assert uv_environment(str(tmp_path / "plain")) == ""
    assert uv_environment(str(tmp_path / "nowhere")) == ""
