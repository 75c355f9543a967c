"""cutedsl.arch per torch, end to end (issue 29 item 1). The probe reads the NVGEMM precompile threshold from a real
file tree: fake torch wheels (wheelfactory) installed into real virtual environments, whose select_algorithm.py holds
torch's own line, one that says 20, or no such line, and a torch without the file. Then doctor, fix --dry-run and
the Dockerfile for an H200 (compute capability 9.0) with torch 2.15.0 and 2.14.1: torch 2.15.0 compiles NVGEMM in the
process that holds the GPU, so nothing asks for CUTE_DSL_ARCH; 2.14.1 sends a GEMM's 10 choices to its compile
workers, so doctor warns, fix lists it under "Needs you" and the image sets it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from wheelfactory import install, make_venv, operators_wheels, torch_wheel

from envcheck.gather.interpreter import gather_interpreter
from envcheck.profile import load_builtin

OPERATORS = load_builtin("torch-2.14-operators")
VAR = "CUTE_DSL_ARCH"
FILE, NAME = "_inductor/select_algorithm.py", "_NVGEMM_SUBPROCESS_PRECOMPILE_THRESHOLD"
STACK = ("nvidia-cutlass-dsl[cu13]==4.8.1", "nvidia-cutlass-operators==0.3.0", "apache-tvm-ffi==0.1.15.post2",
         "nvidia-matmul-heuristics")


@pytest.fixture(scope="module")
def wheels(tmp_path_factory) -> Path:
    folder = operators_wheels(tmp_path_factory.mktemp("wheels"))
    torch_wheel(folder, "2.14.2+cu130", threshold_line=f"{NAME} = 20  # a torch that raised it")
    torch_wheel(folder, "2.14.3+cu130", threshold_line=f"# {NAME} = 8 moved to config.py")
    return folder


@pytest.fixture(scope="module")
def venvs(wheels, tmp_path_factory):
    """version -> a real venv's python with that torch and the operators stack, made once per module on first use."""
    made: dict[str, Path] = {}

    def venv(version: str) -> Path:
        if version not in made:
            python = make_venv(tmp_path_factory.mktemp("venv") / "v")
            install(python, wheels, f"torch=={version}", *STACK)
            made[version] = python
        return made[version]

    return venv


def _env(**settings: str) -> dict:
    """This process's environment without the variable or any of Inductor's NVGEMM settings, plus `settings`."""
    env = {k: v for k, v in os.environ.items() if k != VAR and not k.startswith("TORCHINDUCTOR_NVGEMM_")}
    return {**env, **settings}


# --------------------------------------------------------------------------------------------------------------
# The fact: the probe reads the line of the installed torch, as text


@pytest.mark.parametrize("version, value, line, why", [
    ("2.15.0+cu132", 8, 4, ""),
    ("2.14.1+cu130", 8, 4, ""),
    ("2.14.2+cu130", 20, 4, ""),
    ("2.14.3+cu130", None, None, f"no line of {FILE} assigns {NAME} a number"),
    ("2.16.0+cu130", None, None, f"torch has no {FILE}"),
])
def test_the_probe_reads_the_threshold_of_the_installed_torch(venvs, version, value, line, why):
    python = venvs(version)
    interpreter = gather_interpreter(str(python), env=_env(), modules=OPERATORS.probe_modules,
                                     torch_values=OPERATORS.torch_values)
    read = interpreter.torch.value_of(FILE, NAME)
    assert (read.value, read.line, read.why) == (value, line, why)
    assert interpreter.torch.version == version
    # asked for nothing, it reads nothing
    assert gather_interpreter(str(python), env=_env(), modules=OPERATORS.probe_modules).torch.values == ()


def test_the_probe_reads_no_file_outside_torch_and_none_too_large(tmp_path):
    """What the probe runs in the target, on a file tree: a name that climbs out of torch's folder is refused, a file
    over the cap is not read."""
    from envcheck.inside.probe import SOURCE_LIMIT, torch_values

    torch = tmp_path / "torch"
    (torch / "_inductor").mkdir(parents=True)
    (torch / "__init__.py").write_text("")
    (tmp_path / "outside.py").write_text(f"{NAME} = 3\n")
    (torch / "_inductor" / "big.py").write_text(f"{NAME} = 3\n" + "#" * SOURCE_LIMIT)
    (torch / "_inductor" / "two.py").write_text(f"{NAME} = 3\nif x:\n    {NAME}: int = 9\n")
    (torch / "_inductor" / "same.py").write_text(f"x = 1\r\n    {NAME} = 7\r\n{NAME}=7 # again\n{NAME}_B = 1\n")
    found = torch_values(str(torch / "__init__.py"), [("../outside.py", NAME), ("_inductor/big.py", NAME),
                                                      ("_inductor/two.py", NAME), ("_inductor/same.py", NAME),
                                                      ("_inductor/same.py", "x = 1; import os")])
    assert [f.get("why", f.get("value")) for f in found] == [
        "not a file and name envcheck reads", "_inductor/big.py is larger than 8 MiB: not read",
        f"_inductor/two.py assigns {NAME} 2 different numbers (lines 1, 3)", 7, "not a file and name envcheck reads"]
    assert found[3]["line"] == 2


# --------------------------------------------------------------------------------------------------------------
# doctor and fix --dry-run for an H200, as a user runs them


def _doctor(python: Path, env: dict, tmp_path: Path) -> dict:
    done = subprocess.run([sys.executable, "-m", "envcheck", "doctor", "--json", "--no-gpu", "--gpu-capability", "9.0",
                           "--python", str(python)], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    report = json.loads(done.stdout)
    return next(c for c in report["checks"] if c["id"] == "cutedsl.arch")


@pytest.mark.parametrize("version, settings, status, said", [
    ("2.15.0+cu132", {}, "pass", "only from 8 (as its torch/_inductor/select_algorithm.py:4 says)"),
    ("2.15.0+cu132", {"TORCHINDUCTOR_NVGEMM_SUPPLEMENT_CONFIGS": "1"}, "warn", "a GEMM can reach 8 NVGEMM choices"),
    ("2.15.0+cu132", {"TORCHINDUCTOR_NVGEMM_MAX_PROFILING_CONFIGS": "all"}, "warn", "MAX_PROFILING_CONFIGS=all raises"),
    ("2.14.1+cu130", {}, "warn", "Inductor's compile workers build each Hopper (Sm90) operator for sm_100a"),
    ("2.14.2+cu130", {}, "pass", "only from 20 (as its torch/_inductor/select_algorithm.py:4 says)"),
    ("2.14.3+cu130", {}, "warn", "Inductor's compile workers build"),
])
def test_doctor_for_an_h200_judges_the_installed_torch(venvs, tmp_path, version, settings, status, said):
    check = _doctor(venvs(version), _env(**settings), tmp_path)
    assert check["status"] == status, check["found"]
    assert said in " ".join((check["found"], *check["details"])), check
    assert (check["remedy"] is None) is (status == "pass")


@pytest.mark.parametrize("version, asked", [("2.15.0+cu132", False), ("2.14.1+cu130", True)])
def test_fix_for_an_h200_asks_for_the_variable_only_where_the_torch_needs_it(venvs, tmp_path, version, asked):
    done = subprocess.run([sys.executable, "-m", "envcheck", "fix", "--dry-run", "--python", str(venvs(version)),
                           "--no-gpu", "--gpu-capability", "9.0"], env=_env(), cwd=tmp_path, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Profile torch-2.14-operators chosen" in done.stdout
    assert ("$ export CUTE_DSL_ARCH=sm_90a" in done.stdout) is asked, done.stdout
    assert ("Needs you" in done.stdout) is asked, done.stdout


# --------------------------------------------------------------------------------------------------------------
# The Dockerfile of an image for an H200, for the torch it installs


def _env_lines(text: str) -> dict:
    return dict(line[4:].split("=", 1) for line in text.splitlines() if line.startswith("ENV ") and "=" in line)


@pytest.mark.parametrize("torch, env", [("2.15.0", None), ("2.14.1", "sm_90a"), (None, "sm_90a")])
def test_the_dockerfile_sets_the_variable_only_where_the_images_torch_needs_it(tmp_path, capsys, torch, env):
    from envcheck.cli import main

    out = tmp_path / "Dockerfile"
    more = ["--torch", torch] if torch else []
    assert main(["dockerfile", "--profile", "torch-2.14-operators", "--gpu-capability", "9.0", *more, "-o", str(out)]) == 0
    text, said = out.read_text(), capsys.readouterr().err
    assert _env_lines(text).get(VAR) == env
    assert "--no-gpu --gpu-capability 9.0 " in text  # the image's doctor judges for the GPU either way
    assert ("cutedsl.arch passes without CUTE_DSL_ARCH on compute capability 9.0 with torch 2.15.0" in said) is (env is None)


def test_the_gate_of_an_image_without_the_variable_passes_with_torch_2_15(venvs, tmp_path):
    """The build's doctor as it runs in the image the Dockerfile for torch 2.15.0 makes: no ENV, and a pass."""
    from envcheck.cli import main

    out = tmp_path / "Dockerfile"
    assert main(["dockerfile", "--torch", "2.15.0", "--gpu-capability", "9.0", "-o", str(out)]) == 0
    assert _doctor(venvs("2.15.0+cu132"), {**_env(), **_env_lines(out.read_text())}, tmp_path)["status"] == "pass"


@pytest.mark.parametrize("torch, code, said", [("2.15.0", 0, ""), ("2.14.1", 2, "an image sets one CUTE_DSL_ARCH")])
def test_gpus_of_two_targets_are_refused_only_where_one_needs_the_variable(tmp_path, capsys, torch, code, said):
    out = tmp_path / "Dockerfile"
    from envcheck.cli import main

    assert main(["dockerfile", "--torch", torch, "--gpu-capability", "9.0", "--gpu-capability", "10.0",
                 "-o", str(out)]) == code
    assert said in capsys.readouterr().err and out.exists() is (code == 0)


def test_a_torch_that_is_no_version_is_refused(capsys):
    from envcheck.cli import main

    assert main(["dockerfile", "--torch", "two", "--gpu-capability", "9.0"]) == 2
    assert "--torch 'two': expected a torch version such as 2.15.0" in capsys.readouterr().err


# --------------------------------------------------------------------------------------------------------------
# explain: a torch 2.15.0 log without the variable holds no failure of it, so no "set it"


@pytest.mark.parametrize("log", ["a6-X.log", "d1-all-configs-arch-unset.log"])
def test_explain_finds_nothing_to_set_in_torch_2_15s_logs_without_the_variable(log, capsys):
    """The H200's MLP logs of torch 2.15.0 with CUTE_DSL_ARCH unset (4 and 7 choices per GEMM, compiled in the
    process): explain names no failure and no remedy; its remedy comes only with the DSL's 'expects arch' error."""
    from envcheck.cli import main

    path = Path(__file__).parent / "data" / "h200-s5" / log
    assert main(["explain", str(path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["causes"] == [] and VAR not in json.dumps(data)
