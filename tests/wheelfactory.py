"""Real, small wheels built by the tests, and real virtual environments to install them into."""

from __future__ import annotations

import base64
import hashlib
import os
import re
import subprocess
import sys
import venv
import zipfile
from pathlib import Path
from typing import Mapping, Optional, Sequence


def _record_hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def build_wheel(
    folder: Path,
    name: str,
    version: str,
    files: Optional[Mapping[str, str]] = None,
    requires: Sequence[str] = (),
    tag: str = "py3-none-any",
    extras: Sequence[str] = (),
    requires_python: Optional[str] = None,
) -> Path:
    """Write a valid wheel of `name` holding `files` (path -> text) and return its path. extras: the extras it
    provides (their requirements go in `requires` with `; extra == "NAME"`); requires_python: its Requires-Python."""
    stem = re.sub(r"[-_.]+", "_", name)
    info = f"{stem}-{version}.dist-info"
    metadata = (f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
                + (f"Requires-Python: {requires_python}\n" if requires_python else "")
                + "".join(f"Provides-Extra: {e}\n" for e in extras) + "".join(f"Requires-Dist: {r}\n" for r in requires))
    contents = dict(files or {})
    contents[f"{info}/METADATA"] = metadata
    contents[f"{info}/WHEEL"] = f"Wheel-Version: 1.0\nGenerator: envcheck-tests\nRoot-Is-Purelib: true\nTag: {tag}\n"
    record = "".join(f"{path},{_record_hash(text.encode())},{len(text.encode())}\n" for path, text in contents.items())
    contents[f"{info}/RECORD"] = record + f"{info}/RECORD,,\n"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{stem}-{version}-{tag}.whl"
    with zipfile.ZipFile(path, "w") as archive:
        for member, text in contents.items():
            archive.writestr(member, text)
    return path


def make_venv(folder: Path, python: Optional[str] = None) -> Path:
    """A real virtual environment without pip of its own (pip is driven from outside with --python). Returns its python."""
    if python is None or python == sys.executable:
        venv.EnvBuilder(with_pip=False, symlinks=True).create(folder)
    else:
        subprocess.run([python, "-m", "venv", "--without-pip", str(folder)], check=True)
    return folder / "bin" / "python"


def pip(target_python: Path, *args: str, env: Optional[Mapping[str, str]] = None) -> subprocess.CompletedProcess:
    """Run this interpreter's pip against another interpreter."""
    command = [sys.executable, "-m", "pip", "--python", str(target_python), "--disable-pip-version-check", "-q", *args]
    # The machine's pip configuration (extra find-links, constraints) must not leak into the tests' environments.
    isolated = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    isolated.update({"PIP_CONFIG_FILE": os.devnull, **(env or {})})
    done = subprocess.run(command, capture_output=True, text=True, env=isolated)
    if done.returncode != 0:
        raise RuntimeError(f"pip {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}")
    return done


def install(target_python: Path, wheelhouse: Path, *requirements: str, extra: Sequence[str] = ()) -> None:
    pip(target_python, "install", "--no-index", "--find-links", str(wheelhouse), *extra, *requirements)


THRESHOLD_LINE = "_NVGEMM_SUBPROCESS_PRECOMPILE_THRESHOLD = 8"  # torch 2.14.1 and 2.15.0 select_algorithm.py


def _torch(version: str, cuda: Optional[str], threshold_line: Optional[str] = None) -> dict[str, str]:
    """torch's files: version.py, and, given a threshold line, an _inductor/select_algorithm.py that holds it where
    torch's does (a local of a method, indented), among lines that name it without assigning it."""
    files = {"torch/__init__.py": "",
             "torch/version.py": f"__version__ = '{version}'\ncuda = {cuda!r}\ngit_version = 'x'\n"}
    if threshold_line is not None:
        files["torch/_inductor/__init__.py"] = ""
        files["torch/_inductor/select_algorithm.py"] = (
            "class AlgorithmSelectorCache:\n"
            "    def precompile(self, choices):\n"
            "        # Count NVGEMM choices to decide whether subprocess precompile is worth it.\n"
            f"        {threshold_line}\n"
            "        nvgemm_count = len(choices)\n"
            "        return nvgemm_count >= _NVGEMM_SUBPROCESS_PRECOMPILE_THRESHOLD\n")
    return files


def torch_wheel(folder: Path, version: str, cuda: Optional[str] = "13.0",
                threshold_line: Optional[str] = THRESHOLD_LINE,
                requires: Sequence[str] = ("cuda-bindings>=13.0.3,<14",)) -> Path:
    """A torch wheel of that version: its version.py, and its select_algorithm.py holding `threshold_line` (None:
    no such file)."""
    return build_wheel(folder, "torch", version, _torch(version, cuda, threshold_line), requires=requires)


def operators_wheels(folder: Path) -> Path:
    """Small real wheels shaped like both upstream stacks as torch 2.14 meets them (tests/test_fix_operators.py says
    how): torch 2.14.1 and 2.15.0 (their select_algorithm.py holds the NVGEMM precompile threshold) and 2.16.0, the
    recipe's DSL 4.3.5 and cutlass-api, the operators stack's DSL 4.8.1 (a meta package with -libs-base, -libs-cu12,
    and -libs-cu13 in [cu13]) and nvidia-cutlass-operators 0.3.0."""
    torch_wheel(folder, "2.14.1+cu130")
    torch_wheel(folder, "2.15.0+cu132", "13.2")
    torch_wheel(folder, "2.16.0+cu130", threshold_line=None)
    build_wheel(folder, "cuda-bindings", "13.3.1", {"cuda/bindings/__init__.py": ""})
    build_wheel(folder, "cuda-python", "13.3.1", {"cuda_python_meta/__init__.py": ""}, requires=["cuda-bindings~=13.3.1"])
    # the torch 2.11 recipe
    build_wheel(folder, "nvidia-cutlass-dsl", "4.3.5", {
        "nvidia_cutlass_dsl.pth": "nvidia_cutlass_dsl/python_packages\n",
        "nvidia_cutlass_dsl/__init__.py": "",
        "nvidia_cutlass_dsl/python_packages/cutlass/__init__.py": "__version__ = '4.3.5'\n",
    }, requires=["cuda-python>=12.8"])
    build_wheel(folder, "apache-tvm-ffi", "0.1.7", {"tvm_ffi/__init__.py": ""})
    build_wheel(folder, "torch-c-dlpack-ext", "0.1.5", {"torch_c_dlpack_ext/__init__.py": ""})
    build_wheel(folder, "cutlass-api", "0.1.0a1", {"cutlass_api/__init__.py": "__version__ = '0.1.0a1'\n"},
                requires=["nvidia-cutlass-dsl", "apache-tvm-ffi==0.1.7"])
    # the operators stack
    build_wheel(folder, "nvidia-cutlass-dsl", "4.8.1", {"nvidia_cutlass_dsl_packages.pth": "nvidia_cutlass_dsl/dsl_packages\n"},
                requires=["nvidia-cutlass-dsl-libs-base==4.8.1", "nvidia-cutlass-dsl-libs-cu12==4.8.1",
                          'nvidia-cutlass-dsl-libs-cu13==4.8.1; extra == "cu13"'], extras=["cu13"])
    build_wheel(folder, "nvidia-cutlass-dsl-libs-base", "4.8.1", {"nvidia_cutlass_dsl/_mlir_libs/__init__.py": ""},
                requires=["nvidia-cutlass-dsl-libs-core==4.8.1", "cuda-python>=12.8"])
    build_wheel(folder, "nvidia-cutlass-dsl-libs-core", "4.8.1",
                {"nvidia_cutlass_dsl/dsl_packages/cutlass/__init__.py": "__version__ = '4.8.1'\n"})
    build_wheel(folder, "nvidia-cutlass-dsl-libs-cu12", "4.8.1", {"nvidia_cutlass_dsl/cu12/lib/README": "cu12\n"})
    build_wheel(folder, "nvidia-cutlass-dsl-libs-cu13", "4.8.1", {"nvidia_cutlass_dsl/cu13/lib/README": "cu13\n"})
    build_wheel(folder, "apache-tvm-ffi", "0.1.15.post2", {"tvm_ffi/__init__.py": ""})
    build_wheel(folder, "networkx", "3.4.2", {"networkx/__init__.py": ""})
    build_wheel(folder, "nvidia-matmul-heuristics", "0.1.0.27", {"nvMatmulHeuristics/__init__.py": ""})
    build_wheel(folder, "nvidia-cutlass-operators", "0.3.0",
                {"nvidia_cutlass_dsl/dsl_packages/cutlass/operators/__init__.py": "__version__ = '0.3.0'\n"},
                requires=["nvidia-cutlass-dsl>=4.8.0", "apache-tvm-ffi>=0.1.11", "networkx>=3",
                          'torch-c-dlpack-ext; extra == "torch"', 'nvidia-matmul-heuristics>=0.1.0.27; extra == "heuristics"'],
                extras=["torch", "heuristics"])
    return folder
