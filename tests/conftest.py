"""Shared fixtures: the default policy, real wheels of the stack's shape, real virtual environments, real git repos."""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from wheelfactory import build_wheel, install, make_venv  # noqa: E402

from envcheck.profile import DEFAULT_PROFILE, load_builtin  # noqa: E402

PINNED = "e594def95e1c73ad9d5517ab28b80d691127dd1c"


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path_factory, monkeypatch):
    """No test reads or writes the real user's cache or state: envcheck's directories point into a temp dir."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("ENVCHECK_CACHE_DIR", str(home / "cache"))
    monkeypatch.setenv("XDG_STATE_HOME", str(home / "state"))
    monkeypatch.delenv("ENVCHECK_CUTLASS_DIR", raising=False)
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)


@pytest.fixture(scope="session")
def policy():
    return load_builtin(DEFAULT_PROFILE)


def python312() -> str | None:
    """A Python >= 3.12 on this machine (cutlass_api needs one), or None."""
    for pattern in ("~/.pyenv/versions/3.12*/bin/python3.12", "~/.pyenv/versions/3.13*/bin/python3.13"):
        matches = sorted(glob.glob(os.path.expanduser(pattern)))
        if matches:
            return matches[-1]
    for candidate in ("python3.12", "python3.13"):
        found = shutil.which(candidate)
        if found and "/shims/" not in found:  # a pyenv shim may name a version it cannot run
            return found
    return None


def _dsl_files(version: str) -> dict[str, str]:
    return {
        "nvidia_cutlass_dsl.pth": "nvidia_cutlass_dsl/python_packages\n",
        "nvidia_cutlass_dsl/__init__.py": "",
        "nvidia_cutlass_dsl/python_packages/cutlass/__init__.py": f"__version__ = '{version}'\n",
    }


def _torch_files(version: str, cuda: str | None) -> dict[str, str]:
    return {
        # Importing this torch is a bug in envcheck: it leaves a mark the tests look for.
        "torch/__init__.py": "import os\nopen(os.environ.get('ENVCHECK_TEST_IMPORT_MARK', os.devnull), 'a').write('torch imported\\n')\n",
        "torch/version.py": (
            "from typing import Optional\n\n__all__ = ['__version__']\n"
            f"__version__ = '{version}'\ndebug = False\ncuda: Optional[str] = {cuda!r}\n"
            "git_version = 'deadbeef'\nhip: Optional[str] = None\n"
        ),
    }


@pytest.fixture(scope="session")
def wheelhouse(tmp_path_factory) -> Path:
    """Small real wheels shaped like the stack's packages."""
    folder = tmp_path_factory.mktemp("wheelhouse")
    build_wheel(folder, "torch", "2.11.0+cu130", _torch_files("2.11.0+cu130", "13.0"), requires=["cuda-bindings>=13.0.3,<14"])
    build_wheel(folder, "torch", "2.13.0+cpu", _torch_files("2.13.0+cpu", None))
    build_wheel(folder, "torch", "2.10.0+cu128", _torch_files("2.10.0+cu128", "12.8"))
    for version in ("4.3.5", "4.3.0", "4.2.1"):
        build_wheel(folder, "nvidia-cutlass-dsl", version, _dsl_files(version), requires=["cuda-python>=12.8"])
    build_wheel(folder, "nvidia-cutlass-dsl", "4.4.0", {"nvidia_cutlass_dsl_meta/__init__.py": ""},
                requires=["nvidia-cutlass-dsl-libs-base==4.4.0"])
    build_wheel(folder, "nvidia-cutlass-dsl-libs-base", "4.4.0", _dsl_files("4.4.0"))
    build_wheel(folder, "nvidia-cutlass", "3.5.0", {"cutlass/__init__.py": "# the old CUTLASS Python interface\n"})
    build_wheel(folder, "nvidia-cutlass", "4.2.0.0", {"cutlass_cppgen/__init__.py": "", "cutlass_library/__init__.py": ""})
    build_wheel(folder, "apache-tvm-ffi", "0.1.7", {"tvm_ffi/__init__.py": ""})
    build_wheel(folder, "apache-tvm-ffi", "0.1.6", {"tvm_ffi/__init__.py": ""})
    build_wheel(folder, "torch-c-dlpack-ext", "0.1.5", {"torch_c_dlpack_ext/__init__.py": ""})
    build_wheel(folder, "nvidia-matmul-heuristics", "0.1.0.27", {"nvMatmulHeuristics/__init__.py": ""})
    build_wheel(folder, "cuda-bindings", "13.3.1", {"cuda/bindings/__init__.py": ""})
    build_wheel(folder, "cuda-python", "13.3.1", {"cuda_python_meta/__init__.py": ""}, requires=["cuda-bindings~=13.3.1"])
    build_wheel(folder, "nvidia-cuda-runtime-cu12", "12.8.90", {"nvidia/cuda_runtime/__init__.py": ""})
    build_wheel(folder, "nvidia-cuda-runtime", "13.0.96", {"nvidia/cu13/__init__.py": ""})
    return folder


@pytest.fixture(scope="session")
def build_backend(tmp_path_factory) -> Path:
    """A folder holding a setuptools wheel, so editable installs build offline."""
    folder = tmp_path_factory.mktemp("backend")
    done = subprocess.run(
        [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:", "-d", str(folder), "setuptools>=64"],
        capture_output=True, text=True,
    )
    if done.returncode != 0:
        bundled = Path(sys.base_prefix) / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "ensurepip" / "_bundled"
        for wheel in bundled.glob("setuptools-*.whl"):
            shutil.copy(wheel, folder)
    return folder


@pytest.fixture
def venv_factory(tmp_path, wheelhouse):
    """make(*requirements, python=None) -> a new real venv's python with those stack wheels installed."""
    count = iter(range(100))

    def make(*requirements: str, python: str | None = None, extra=()) -> Path:
        target = make_venv(tmp_path / f"venv{next(count)}", python)
        if requirements:
            install(target, wheelhouse, *requirements, extra=extra)
        return target

    return make


def git(*args: str, cwd: Path) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True, env=env).stdout.strip()


CUTLASS_API_PYPROJECT = """[build-system]
requires = ["setuptools>=61.0"]
build-backend = "setuptools.build_meta"

[project]
name = "cutlass_api"
dynamic = ["version"]
requires-python = ">=3.12"
dependencies = ["nvidia-cutlass-dsl", "apache-tvm-ffi == 0.1.7"]

[project.optional-dependencies]
torch = ["torch", "torch-c-dlpack-ext"]

[tool.setuptools.packages.find]
where = ["."]

[tool.setuptools.dynamic]
version = {attr = "cutlass_api.__version__"}
"""


@pytest.fixture
def cutlass_repo(tmp_path) -> Path:
    """A small real git repository shaped like CUTLASS: include/cutlass/cutlass.h and python/cutlass_api."""
    repo = tmp_path / "cutlass-src"
    (repo / "include" / "cutlass").mkdir(parents=True)
    (repo / "include" / "cutlass" / "cutlass.h").write_text("#pragma once\n")
    package = repo / "python" / "cutlass_api"
    (package / "cutlass_api").mkdir(parents=True)
    (package / "pyproject.toml").write_text(CUTLASS_API_PYPROJECT)
    (package / "cutlass_api" / "__init__.py").write_text('__version__ = "0.1.0a1"\n')
    git("init", "-q", "-b", "main", cwd=repo)
    git("add", "-A", cwd=repo)
    git("commit", "-q", "-m", "cutlass", cwd=repo)
    git("checkout", "-q", "-b", "cutlass_api", cwd=repo)
    (repo / "python" / "cutlass_api" / "README.md").write_text("cutlass_api\n")
    git("add", "-A", cwd=repo)
    git("commit", "-q", "-m", "cutlass_api", cwd=repo)
    git("tag", "v0.1.0a1", cwd=repo)
    return repo


def pypi_reachable(project: str = "uv") -> bool:
    """Whether the package index answers for `project` (tests that download from it skip where it does not)."""
    import urllib.request

    try:
        urllib.request.urlopen(f"https://pypi.org/simple/{project}/", timeout=10).close()
    except OSError:
        return False
    return True


def flat(text: str) -> str:
    """Text as one line of single spaces: what an output says, whatever width it was wrapped at (envcheck/words.py)."""
    return " ".join(text.split())
