"""The wheel is the product: built from the source tree as `python -m build` builds it (the sdist, then the wheel from
the sdist), installed with its dependencies into a fresh virtual environment, and run there from a folder of its own
with no source tree on the path: every command answers, as the README says they do.

The dependencies come from the package index (pip's cache makes a second run quick); skipped where PyPI cannot be
reached. The stack the commands work on is small real wheels (tests/wheelfactory.py), so lock and bundle need no
network."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest
from conftest import pypi_reachable
from readme import help_commands, readme_commands
from wheelfactory import install, make_venv, operators_wheels

ROOT = Path(__file__).resolve().parent.parent
TYPE_LABEL = re.compile(r"<[A-Za-z][\w\[\], |.]*>")  # typer 0.29's <bool>, <list[Path]> (tests/test_helpstyle.py)


pytestmark = [pytest.mark.slow, pytest.mark.network,
              pytest.mark.skipif(not pypi_reachable("typer"), reason="PyPI cannot be reached: envcheck's dependencies come from it")]


def source_files() -> list[str]:
    """What a clone of the source tree holds (tracked files and new ones git does not ignore)."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                            capture_output=True, text=True, check=True).stdout
    return sorted(name for name in listed.split("\0") if name and (ROOT / name).is_file())


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The wheel of a copy of the source tree, built as `python -m build` builds it (here without build isolation: the
    test environment has setuptools)."""
    folder = tmp_path_factory.mktemp("build")
    for name in source_files():
        (folder / "src" / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, folder / "src" / name)
    done = subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(folder / "dist"),
                           str(folder / "src")], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    (built,) = (folder / "dist").glob("*.whl")
    return built


def clean_env(**more: str) -> dict[str, str]:
    """This environment without anything that points Python or pip elsewhere (no PYTHONPATH: no source tree)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "PIP_", "VIRTUAL_ENV"))}
    return {**env, "PIP_CONFIG_FILE": os.devnull, **more}


@pytest.fixture(scope="module")
def bin_dir(wheel, tmp_path_factory) -> Path:
    """A fresh virtual environment (with pip: bundle and fix drive pip from envcheck's own interpreter, as in any venv
    pip or pipx makes) holding the wheel and its dependencies."""
    folder = tmp_path_factory.mktemp("installed") / "venv"
    venv.EnvBuilder(with_pip=True, symlinks=True).create(folder)
    done = subprocess.run([str(folder / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check",
                           str(wheel)], capture_output=True, text=True, env=clean_env(), timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    return folder / "bin"


@pytest.fixture
def run(bin_dir, tmp_path):
    """Run the installed `envcheck` from an empty folder of its own."""
    cwd = tmp_path / "cwd"
    cwd.mkdir()

    def envcheck(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
        return subprocess.run([str(bin_dir / "envcheck"), *args], cwd=cwd, capture_output=True, text=True,
                              env=clean_env(COLUMNS="200"), timeout=timeout)

    envcheck.cwd = cwd  # type: ignore[attr-defined]
    return envcheck


def test_the_wheel_holds_every_module_and_data_file_of_the_source_tree_and_nothing_else(wheel):
    with zipfile.ZipFile(wheel) as archive:
        shipped = {name for name in archive.namelist() if ".dist-info/" not in name}
    wanted = {name for name in source_files() if name.startswith("envcheck/")}
    wanted |= {"envcheck/templates/" + name.split("/", 1)[1] for name in source_files() if name.startswith("templates/")}
    assert (sorted(wanted - shipped), sorted(shipped - wanted)) == ([], [])  # (left out, not of the source tree)
    assert not any(name.startswith("tests/") or name.endswith(".pyc") for name in shipped)


def test_envcheck_runs_from_the_venv_not_the_source_tree(bin_dir, run):
    done = subprocess.run([str(bin_dir / "python"), "-c", "import envcheck, envcheck.bundle, envcheck.templates; "
                           "print(envcheck.__file__)"], cwd=run.cwd, capture_output=True, text=True, env=clean_env())
    assert done.returncode == 0, done.stderr
    where = Path(done.stdout.strip())
    assert where.is_relative_to(bin_dir.parent) and not where.is_relative_to(ROOT)
    for flag in ("--version", "-V"):
        version = run(flag)
        assert version.returncode == 0 and version.stdout == (
            f"envcheck 0.1.0 from {where.parent} (python {'.'.join(map(str, sys.version_info[:3]))}, {bin_dir / 'python'})\n")


def test_every_command_answers_its_help_and_the_readme_lists_them(run):
    top = run("--help")
    assert top.returncode == 0, top.stderr
    commands = help_commands(top.stdout)
    assert commands == readme_commands()
    for command in sorted(commands):
        done = run(command, "--help")
        assert done.returncode == 0 and f"Usage: envcheck {command}" in done.stdout, done.stderr
        assert not TYPE_LABEL.findall(done.stdout), (command, TYPE_LABEL.findall(done.stdout))


def test_doctor_json(bin_dir, run):
    done = run("doctor", "--json", "--no-gpu")
    report = json.loads(done.stdout)
    assert done.returncode == report["exit_code"] and report["schema_version"] == 2
    # envcheck's own environment, without torch: judged for what `pip install torch` gives there (issue 31), and said so
    assert set(report["profile"]) == {"id", "reason", "source", "verified"} and report["profile"]["id"] == "torch-2.14-operators"
    assert "`pip install torch` gives torch 2.15.0" in report["profile"]["reason"]
    assert report["target"] == str(bin_dir / "python")  # the interpreter running envcheck, by default
    assert report["envcheck_environment"] is True


@pytest.mark.parametrize("value, settings, status", [
    (None, {}, "pass"), (None, {"TORCHINDUCTOR_NVGEMM_SUPPLEMENT_CONFIGS": "1"}, "warn"),
    ("sm_90a", {}, "pass"), ("sm_100a", {}, "fail"),
])
def test_doctor_judges_the_compile_target_from_its_own_environment(bin_dir, run, value, settings, status):
    """cutedsl.arch as installed: the wheel's profile data ([compile-target]) and the environment envcheck runs in
    (no torch there: judged for the torch `pip install torch` gives, 2.15.0, which needs the variable only where a
    setting raises a GEMM's NVGEMM choices to the threshold)."""
    env = {k: v for k, v in clean_env().items() if k != "CUTE_DSL_ARCH" and not k.startswith("TORCHINDUCTOR_NVGEMM_")}
    env.update(settings)
    if value is not None:
        env["CUTE_DSL_ARCH"] = value
    done = subprocess.run([str(bin_dir / "envcheck"), "doctor", "--json", "--no-gpu", "--gpu-capability", "9.0",
                           "--profile", "torch-2.14-operators"], cwd=run.cwd, capture_output=True, text=True, env=env,
                          timeout=120)
    check = next(c for c in json.loads(done.stdout)["checks"] if c["id"] == "cutedsl.arch")
    assert check["status"] == status, check


def test_lock_bundle_and_fix_from_the_bundle_offline(run, tmp_path):
    """The air-gapped route, as installed: a lock of a live operators stack (small wheels), its bundle from the local
    wheelhouse, and fix planning from that bundle for an empty environment."""
    wheels = operators_wheels(tmp_path / "wheels")
    stack = make_venv(tmp_path / "stack")
    install(stack, wheels, "torch==2.14.1+cu130", "nvidia-cutlass-dsl[cu13]==4.8.1", "apache-tvm-ffi==0.1.15.post2",
            "nvidia-cutlass-operators[torch,heuristics]==0.3.0")
    lock = tmp_path / "lock" / "pylock.toml"
    lock.parent.mkdir()  # envcheck makes no folder for -o
    done = run("lock", "--from-env", "--python", str(stack), "--profile", "torch-2.14-operators", "--no-index",
               "--find-links", str(wheels), "-o", str(lock))
    assert done.returncode == 0 and lock.is_file(), done.stderr
    bundle = tmp_path / "bundle"
    python_version = f"{sys.version_info[0]}.{sys.version_info[1]}"
    done = run("bundle", "--profile", "torch-2.14-operators", "--lock", str(lock), "--without", "torch",
               "--python-version", python_version, "--no-index", "--find-links", str(wheels), "-o", str(bundle))
    assert done.returncode == 0, done.stderr
    manifest = json.loads((bundle / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["profile"] == "torch-2.14-operators"
    assert any(f["path"].startswith("wheels/nvidia_cutlass_operators-0.3.0") for f in manifest["files"])
    empty = make_venv(tmp_path / "empty")
    done = run("fix", "--bundle", str(bundle), "--python", str(empty), "--profile", "torch-2.14-operators", "--no-gpu",
               "--dry-run", "--json")
    plan = json.loads(done.stdout)
    assert done.returncode in (0, 1) and plan["plan"]["steps"], done.stderr
    assert all("--no-index" in argv for step in plan["plan"]["steps"] for argv in step["commands"])


def test_dockerfile_renders_the_shipped_template(run):
    (run.cwd / "image").mkdir()  # envcheck makes no folder for -o
    done = run("dockerfile", "-o", "image/Dockerfile")
    assert done.returncode == 0, done.stderr
    assert (run.cwd / "image" / "Dockerfile").read_text() == (ROOT / "docker" / "Dockerfile").read_text()
    assert (run.cwd / "image" / ".dockerignore").is_file()


def test_smoke_and_bench_without_a_gpu_exit_1_with_one_line(run):
    smoke = run("smoke")
    if smoke.returncode == 0:
        pytest.skip("this machine has a GPU")
    assert smoke.returncode == 1 and smoke.stdout.count("\n") == 1 and "No GPU to run on" in smoke.stdout
    bench = run("bench")
    assert bench.returncode == 1 and bench.stdout == ""
    assert bench.stderr.count("\n") == 1 and bench.stderr.startswith("envcheck bench: no GPU to measure on: ")
    as_json = run("bench", "--json")
    document = json.loads(as_json.stdout)
    assert as_json.returncode == document["exit_code"] == 1 and document["status"] == "skip"


def test_under_uvx_fix_says_the_readmes_uvx_with_pip(wheel, tmp_path):
    """The README's first run under uv: uvx makes envcheck an environment in uv's cache, without pip. fix names the
    README's command that brings one (`uvx --with pip ...`), not envcheck's pip as "too old", not an ensurepip into
    uv's cache; with --with pip it plans."""
    from uv import find_uv_bin

    said = re.search(r"`(uvx --with pip [^`]*)`", (ROOT / "README.md").read_text())
    assert said, "the README says how to run fix under uvx"
    uv = find_uv_bin()
    env = clean_env(UV_CACHE_DIR=str(tmp_path / "cache"), UV_TOOL_DIR=str(tmp_path / "tools"),
                    UV_TOOL_BIN_DIR=str(tmp_path / "bin"), UV_NO_CONFIG="1", UV_PYTHON_DOWNLOADS="never")
    target = tmp_path / "target"
    subprocess.run([uv, "venv", "-q", "--python", sys.executable, str(target)], env=env, check=True, timeout=120)
    uvx = [uv, "tool", "run", "--python", sys.executable, "--from", str(wheel)]
    fix = ["envcheck", "fix", "--dry-run", "--no-gpu", "--python", str(target / "bin" / "python")]
    done = subprocess.run([*uvx, *fix], capture_output=True, text=True, env=env, timeout=600, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert said.group(1) in done.stderr and "too old" not in done.stderr, done.stderr
    assert f"{tmp_path / 'cache'}" not in done.stderr.split("uvx --with pip")[1]  # nothing to run inside uv's cache
    done = subprocess.run([*uvx[:-2], "--with", "pip", *uvx[-2:], *fix], capture_output=True, text=True, env=env,
                          timeout=600, cwd=tmp_path)
    assert done.returncode in (0, 1) and "has no pip" not in done.stderr, done.stderr
    assert "envcheck fix:" in done.stdout or "Needs you" in done.stdout, done.stdout
