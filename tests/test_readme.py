"""The README as a newcomer reads it: it starts with the two commands (install and run doctor; install the test
dependencies and run the tests, the very commands `.ci/run` runs), its quick start quotes doctor's table as doctor
prints it today (every check, in order, with a summary that adds up), and the license it names is the one declared
and shipped.

The first screens it quotes are run again here (issue 31): the first run (envcheck's own environment, no torch) and
the failing run (a Python 3.12 venv with what `pip install torch` gave, torch 2.15.0+cu132, here a stand-in of the
same metadata and files envcheck reads, with stand-ins of what it requires), judged for 9.0 without a GPU. Only what
varies by machine is told apart: the Python's patch version (its minor too for the first run: `python3` there),
the target's path of the first run (the clone's folder), and which nvcc the machine has (the cuda.toolkit row)."""

from __future__ import annotations

import importlib.util
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from envcheck.judge import CHECKS

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def code_blocks(text: str) -> list[tuple[str, str]]:
    """(language, body) of every fenced block, in order."""
    return re.findall(r"^```(\w*)\n(.*?)^```$", text, flags=re.M | re.S)


def commands(line: str) -> list[list[str]]:
    """The commands of one shell line joined by `&&`, each as argv."""
    return [shlex.split(part) for part in line.split("&&")]


def ci_commands() -> list[list[str]]:
    lines = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    return [shlex.split(line) for line in lines if line.strip() and not line.lstrip().startswith("#")]


def is_subsequence(part: list, whole: list) -> bool:
    rest = iter(whole)
    return all(any(item == other for other in rest) for item in part)


def test_the_readme_starts_with_the_two_commands():
    head = README.split("\n## ", 1)[0]
    (first, _), (second, _) = [(body.strip(), lang) for lang, body in code_blocks(head)][:2]
    assert "\n" not in first and "\n" not in second  # one line each, to paste
    doctor = commands(first)
    assert any(argv[-3:] == ["pip", "install", "."] for argv in doctor)
    assert doctor[-1][-1] == "doctor" and doctor[-1][0].endswith("envcheck")
    tests = commands(second)
    assert any(argv[-2:] == ["-e", ".[test]"] and "pip" in argv for argv in tests)
    assert tests[-1] == ["python", "-m", "pytest"]


def test_ci_runs_the_readmes_test_command():
    head = README.split("\n## ", 1)[0]
    second = code_blocks(head)[1][1].strip()
    readme = commands(second)
    assert is_subsequence(readme, ci_commands()), (readme, ci_commands())


@pytest.mark.parametrize("readme, found", [
    ([["python", "-m", "pytest"]], True),
    ([["python", "-m", "pytest", "-x"]], False),  # a command .ci/run does not run
    ([["python", "-m", "pytest"], ["python3", "-m", "venv", ".venv"]], False),  # out of order
])
def test_the_subsequence_rule(readme, found):
    assert is_subsequence(readme, [["python3", "-m", "venv", ".venv"], ["python", "-m", "pytest"]]) is found


def doctor_tables() -> list[str]:
    """Every doctor table the README quotes whole (its summary line included)."""
    return [body for body in doctor_screens() if re.search(r"^\d+ checks: ", body, flags=re.M)]


def doctor_screens() -> list[str]:
    """Every quote of doctor's output, whole or its first screen."""
    return [body for _, body in code_blocks(README) if re.match(r"envcheck \S+ doctor — profile ", body)]


def test_the_quick_start_quotes_a_failing_and_a_healthy_doctor_run():
    tables = doctor_tables()
    assert len(tables) >= 2
    summaries = [re.search(r"^\d+ checks: .*$", t, flags=re.M).group(0) for t in tables]
    assert any("failed" in s for s in summaries) and any("failed" not in s and "warned" not in s for s in summaries)


@pytest.mark.parametrize("index", [0, 1])
def test_each_quoted_doctor_table_lists_every_check_in_order_and_adds_up(index):
    table = doctor_tables()[index]
    rows = re.findall(r"^  (PASS|WARN|FAIL|SKIP|ERROR)  (\S+)", table, flags=re.M)
    assert [check for _, check in rows] == [check_id for check_id, _ in CHECKS]
    summary = re.search(r"^(\d+) checks: (.*)\.$", table, flags=re.M)
    assert int(summary.group(1)) == len(rows)
    words = {"passed": "PASS", "warned": "WARN", "failed": "FAIL", "skipped": "SKIP", "errors": "ERROR"}
    said = {words[word]: int(n) for n, word in re.findall(r"(\d+) (\w+)", summary.group(2))}
    assert said == {status: sum(1 for s, _ in rows if s == status) for status in {s for s, _ in rows}}


def test_the_license_is_declared_shipped_and_named():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["license"] == "Apache-2.0" and project["license-files"] == ["LICENSE"]
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert "Apache License" in text and "Version 2.0, January 2004" in text
    section = README.split("\n## License\n", 1)[1]
    assert "Apache License, Version 2.0" in section and "LICENSE" in section


# ---------------------------------------------------------------------------------------------------------------
# The quoted first screens, run again


def doctor(*args: str, env: dict, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "envcheck", "doctor", *args], capture_output=True, text=True,
                          timeout=300, env=env, cwd=cwd)


def clean_env(home: Path, path: str, **more: str) -> dict:
    """The environment of a new shell: the machine's CUDA and DSL settings left out, 100 columns as in the README."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("CUDA_HOME", "CUDA_PATH", "LD_LIBRARY_PATH", "PYTHONPATH", "COLUMNS")
           and not k.startswith(("CUTE_DSL_", "ENVCHECK_", "PIP_"))}
    return {**env, "HOME": str(home), "PATH": path, "COLUMNS": "100", "ENVCHECK_CACHE_DIR": str(home / "cache"), **more}


def flat(text: str) -> str:
    return " ".join(text.split())


def test_the_first_run_begins_and_ends_as_the_readme_quotes(tmp_path):
    """The README's first command checks envcheck's own environment, without torch: its first screen (what was
    judged, why, the next command) and its closing line are what doctor prints, told apart only by the clone's
    folder and envcheck's own Python (its `python3`), and compared word by word (their widths wrap differently)."""
    if importlib.util.find_spec("torch") is not None:
        pytest.skip("envcheck's own environment holds torch here: not the README's first run")
    quoted = next(body for body in doctor_screens() if "This is envcheck's own environment" in body)
    closing = next(body.strip() for _, body in code_blocks(README) if re.match(r"`envcheck fix --python \S+` can fix", body))
    done = doctor(env=clean_env(tmp_path, os.environ["PATH"]), cwd=tmp_path)
    assert done.returncode == 1, done.stderr

    def apart(text: str) -> str:
        text = re.sub(r"target \S+", "target TARGET", text)
        text = re.sub(r"`envcheck fix --python \S+`", "`envcheck fix --python TARGET`", text)
        return re.sub(r"Python \d+\.\d+\.\d+", "Python X.Y.Z", text)

    head = done.stdout.split("\n\n", 1)[0]
    assert flat(apart(head)) == flat(apart(quoted)), head
    last = [line for line in done.stdout.splitlines() if " can fix: " in line]
    assert [apart(line) for line in last] == [apart(closing)], done.stdout[-600:]


# What `pip install torch` installed beside torch 2.15.0 in a Python 3.12 venv (2026-12-04), each a stand-in here:
# the count of distributions (doctor says it) and torch's requirements (packages.consistency) are as there.
TORCH_NEEDS = {
    "filelock": "4.3.2", "typing-extensions": "4.16.0", "setuptools": "84.2.1", "sympy": "1.14.0", "mpmath": "1.3.0",
    "networkx": "3.7", "jinja2": "3.1.6", "markupsafe": "3.0.4", "fsspec": "2026.9.0", "cuda-toolkit": "13.2.2",
    "cuda-bindings": "13.5.0", "cuda-pathfinder": "1.9.1", "nvidia-cudnn-cu13": "9.26.0.51",
    "nvidia-cusparselt-cu13": "0.8.1", "nvidia-nccl-cu13": "2.30.7", "nvidia-nvshmem-cu13": "3.7.2",
    "triton": "3.9.0", "nvidia-cublas": "13.4.1.3", "nvidia-cuda-cccl": "13.3.5.0.6", "nvidia-cuda-cupti": "13.2.86",
    "nvidia-cuda-nvrtc": "13.2.86", "nvidia-cuda-runtime": "13.2.86", "nvidia-cufft": "12.2.0.57",
    "nvidia-cufile": "1.17.1.22", "nvidia-cusolver": "12.2.0.11", "nvidia-cusparse": "12.7.10.12",
    "nvidia-nvjitlink": "13.5.37", "nvidia-nvtx": "13.2.86",
}
# torch-2.15.0-cp312-cp312-manylinux_2_28_x86_64.whl · torch-2.15.0.dist-info/METADATA: its Requires-Dist lines
TORCH_REQUIRES = (
    "filelock", "typing-extensions>=4.13.0", "setuptools>=77.0.3", "sympy>=1.13.3", "networkx>=2.5.1", "jinja2",
    "fsspec>=0.8.5",
    'cuda-toolkit[cublas,cudart,cufft,cufile,cupti,cusolver,cusparse,nvjitlink,nvrtc,nvtx]==13.2.2; platform_system == "Linux"',
    'cuda-bindings<14,>=13.0.3; platform_system == "Linux" and python_version < "3.15"',
    'nvidia-cudnn-cu13==9.26.0.51; platform_system == "Linux"', 'nvidia-cusparselt-cu13==0.8.1; platform_system == "Linux"',
    'nvidia-nccl-cu13==2.30.7; platform_system == "Linux"', 'nvidia-nvshmem-cu13==3.7.2; platform_system == "Linux"',
    'triton~=3.9.0; platform_system == "Linux" and python_version < "3.16"',
    'optree>=0.13.0; extra == "optree"', 'opt-einsum>=3.3; extra == "opt-einsum"', 'pyyaml; extra == "pyyaml"',
)
# torch-2.15.0 ... · torch/version.py, as doctor reads it (as text: torch is never imported)
TORCH_VERSION_PY = ("from typing import Optional\n\n__all__ = ['__version__', 'debug', 'cuda', 'git_version', 'hip', "
                    "'rocm', 'xpu']\n__version__ = '2.15.0+cu132'\ndebug = False\ncuda: Optional[str] = '13.2'\n"
                    "git_version = 'd0f2af8b66b20da4baa50644c0cd3f887a2eae2e'\nhip: Optional[str] = None\n"
                    "rocm: Optional[str] = None\nxpu: Optional[str] = None\n")

# torch-2.15.0 ... · torch/_inductor/select_algorithm.py:4924, the line the probe reads (as text) for cutedsl.arch: the
# stand-in holds it on the same line
SELECT_ALGORITHM_PY = "\n" * 4923 + "        _NVGEMM_SUBPROCESS_PRECOMPILE_THRESHOLD = 8\n"


def python_3_12() -> str | None:
    """A CPython 3.12, as the README's `python3.12 -m venv` takes (never a version manager's shim)."""
    import glob

    found = sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.12*/bin/python3.12")))
    which = shutil.which("python3.12")
    return found[-1] if found else which if which and "/shims/" not in which else None


def told_apart(table: str) -> str:
    """A table with what varies by machine told apart: the Python's patch version, the nvcc found (cuda.toolkit's
    row and the lines that continue it)."""
    table = re.sub(r"Python 3\.12\.\d+", "Python 3.12.X", table)
    return re.sub(r"^(  \w+ +cuda\.toolkit +).*\n(?: {33}.*\n)*", r"\1NVCC\n", table, flags=re.M)


def test_the_failing_run_is_what_doctor_prints_for_a_plain_pip_install_torch(tmp_path):
    from wheelfactory import build_wheel, pip

    python = python_3_12()
    if python is None:
        pytest.skip("no Python 3.12 here: the README's failing run is a Python 3.12 venv")
    home, wheels, stubs = tmp_path / "home", tmp_path / "wheels", tmp_path / "bin"
    stubs.mkdir(parents=True)
    subprocess.run([python, "-m", "venv", str(home / ".venv")], check=True, timeout=300)  # with its pip, as there
    build_wheel(wheels, "torch", "2.15.0", {"torch/__init__.py": "", "torch/version.py": TORCH_VERSION_PY,
                                               "torch/_inductor/select_algorithm.py": SELECT_ALGORITHM_PY},
                requires=TORCH_REQUIRES, requires_python=">=3.11", extras=("optree", "opt-einsum", "pyyaml"),
                tag="cp312-cp312-manylinux_2_28_x86_64")
    for name, version in TORCH_NEEDS.items():
        build_wheel(wheels, name, version)
    target = home / ".venv" / "bin" / "python"
    pip(target, "install", "--no-index", "--no-deps", "--find-links", str(wheels), "torch==2.15.0",
        *(f"{name}=={version}" for name, version in TORCH_NEEDS.items()))
    (stubs / "nvcc").write_text("#!/bin/sh\necho 'Cuda compilation tools, release 13.0, V13.0.88'\n")
    (stubs / "nvcc").chmod(0o755)

    done = doctor("--python", str(target), "--no-gpu", "--gpu-capability", "9.0",
                  env=clean_env(home, f"{stubs}:/usr/bin:/bin"), cwd=tmp_path)
    quoted = next(table for table in doctor_tables() if "torch 2.15.0+cu132" in table and " failed" in table)
    assert done.returncode == 1, done.stderr
    assert told_apart(done.stdout) == told_apart(quoted)


def test_what_is_told_apart_is_only_what_varies_by_machine():
    """The comparison above sees every other change: a word of another row, a patch version of another program."""
    table = quoted = next(table for table in doctor_tables() if "torch 2.15.0+cu132" in table and " failed" in table)
    assert told_apart(table.replace("Python 3.12.1", "Python 3.12.9")) == told_apart(quoted)
    assert told_apart(table.replace("(PATH)", "(PATH); also /usr/local/cuda/bin/nvcc 12.9.86")) == told_apart(quoted)
    for change in (("torch 2.15.0+cu132", "torch 2.15.1+cu132"), ("30 distributions", "31 distributions"),
                   ("Python 3.12.1", "Python 3.13.1"), ("  SKIP  cuda.driver", "  PASS  cuda.driver")):
        assert change[0] in table and told_apart(table.replace(*change)) != told_apart(quoted), change
