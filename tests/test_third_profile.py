"""A third profile, written here as a TOML file for a made-up stack (other modules, other distributions, no CUTLASS
checkout): doctor, lock and the Dockerfile handle it with no code change, in a real virtual environment."""

from __future__ import annotations

import json

import pytest
from wheelfactory import build_wheel, install, make_venv

from envcheck.cli import main
from envcheck.render.dockerfile import render_dockerfile
from envcheck.lock import read_lock
from envcheck.profile import load

pytestmark = pytest.mark.slow  # real venvs and pip installs: run by .ci/run after the default command

PROFILE = """
schema = 1
id = "quux-stack"
title = "A made-up GEMM stack: quux-dsl and quux-kernels"
backend = "QUUXGEMM"
link = "https://example.com/quux"

[python]
version = ">=3.8"

[torch]
version = ">=2.11,<2.12"
cuda = ">=13,<14"
requirement = "torch>=2.11,<2.12"

[inductor]
modules = ["quux", "quux.kernels"]

[cuda]
basis = "recipe"
toolkit = ">=13.0,<14"
toolkit-level = "recommended"
toolkit-requirement = "cuda-toolkit[nvcc]==13.0.*"
driver-cuda = "13.0"
[[cuda.driver-floor]]
cuda = "13.0"
driver = "580.65.06"

[cutedsl]
distribution = "quux-dsl"
version = ">=1.2"
basis = "runtime"
module = "quux"
module-dirs = ["quux_dsl/pkgs"]
why = "the made-up DSL"

[[packages]]
name = "quux-kernels"
version = ">=0.5"
module = "quux.kernels"
why = "the made-up kernel library"

[[conflicts]]
name = "quux-legacy"
instead = "quux-dsl>=1.2"
why = "the made-up stack's old package"

[[gpu]]
capability = "9.0"
status = "pass"
kernels = "quux Hopper kernels"

[gpu-below]
capability = "9.0"
status = "fail"
kernels = "none"

[smoke]
backends = ["QUUXGEMM"]
call-pattern = "async_compile\\\\.quux\\\\('([a-z_]+)'"
imports = ["quux"]
"""


@pytest.fixture
def quux(tmp_path, wheelhouse):
    """The profile file, a wheelhouse with the made-up stack, and a real venv holding it beside torch."""
    profile = tmp_path / "quux.toml"
    profile.write_text(PROFILE)
    wheels = tmp_path / "wheels"
    build_wheel(wheels, "quux-dsl", "1.2.0", {"quux_dsl.pth": "quux_dsl/pkgs\n", "quux_dsl/__init__.py": "",
                                              "quux_dsl/pkgs/quux/__init__.py": "raise SystemExit('imported quux')\n"})
    build_wheel(wheels, "quux-kernels", "0.5.1", {"quux/kernels/__init__.py": ""}, requires=["quux-dsl>=1.2"])
    build_wheel(wheels, "quux-legacy", "0.1.0", {"quux_legacy/__init__.py": ""})
    python = make_venv(tmp_path / "venv")
    install(python, wheelhouse, "torch==2.11.0+cu130", "cuda-bindings==13.3.1")
    install(python, wheels, "quux-kernels==0.5.1")
    return profile, wheels, python


def _doctor(capsys, profile, python) -> dict:
    code = main(["doctor", "--policy", str(profile), "--python", str(python), "--no-gpu", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert data["exit_code"] == code
    return data


def test_doctor_judges_a_made_up_stack_from_its_profile_alone(quux, capsys):
    profile, wheels, python = quux
    data = _doctor(capsys, profile, python)
    assert data["profile"]["id"] == "quux-stack" and "--profile" in data["profile"]["reason"]
    assert data["profile"]["source"] == str(profile)
    checks = {c["id"]: c for c in data["checks"]}
    assert checks["cutedsl.version"]["status"] == "pass" and "quux-dsl 1.2.0" in checks["cutedsl.version"]["found"]
    assert checks["cutedsl.importable"]["status"] == "pass", checks["cutedsl.importable"]
    assert "quux_dsl/pkgs/quux/__init__.py" in checks["cutedsl.importable"]["found"]
    assert checks["nvgemm.deps"]["status"] == "pass" and "quux-kernels 0.5.1" in checks["nvgemm.deps"]["found"]
    assert checks["torch.version"]["status"] == "pass"
    for check in ("cutlass.checkout", "cutlass-api.install"):
        assert checks[check]["status"] == "skip" and "not needed by this profile" in checks[check]["found"]
    modules = {m["name"]: m["origin"] for m in data["facts"]["interpreter"]["modules"]}
    assert modules["quux.kernels"].endswith("quux/kernels/__init__.py")  # found without importing quux (it exits)
    assert data["exit_code"] == 0

    # the profile's conflict, installed: named, with the profile's remedy
    install(python, wheels, "quux-legacy==0.1.0")
    checks = {c["id"]: c for c in _doctor(capsys, profile, python)["checks"]}
    finding = checks["cutedsl.importable"]
    assert finding["status"] == "fail" and "quux-legacy 0.1.0 is installed" in finding["found"]
    assert [(s["kind"], s["args"]) for s in finding["remedy"]["steps"]] == [
        ("pip-uninstall", ["quux-legacy"]), ("pip-install", ["quux-dsl>=1.2"])]


def test_lock_and_dockerfile_of_a_made_up_stack(quux, wheelhouse, tmp_path):
    profile, wheels, python = quux
    lock_path = tmp_path / "out" / "pylock.toml"
    lock_path.parent.mkdir()  # envcheck makes no folder for -o
    assert main(["lock", "--python", str(python), "--policy", str(profile), "--no-index",
                 "--find-links", str(wheelhouse), "--find-links", str(wheels), "-o", str(lock_path)]) == 0
    locked = {p.name: str(p.version) for p in read_lock(lock_path).packages}
    assert locked == {"torch": "2.11.0+cu130", "cuda-bindings": "13.3.1", "quux-dsl": "1.2.0", "quux-kernels": "0.5.1"}
    text = lock_path.read_text()
    assert 'profile = "quux-stack"' in text and "cutlass" not in text

    dockerfile = render_dockerfile(load(profile))
    assert "for profile quux-stack" in dockerfile and "QUUXGEMM" in dockerfile
    assert "git init" not in dockerfile and "needs no CUTLASS checkout" in dockerfile
    assert "{{" not in dockerfile
