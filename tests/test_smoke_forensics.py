"""What the smoke child really loaded: the maps parsing and the judging as tables, and the record of a real child
process that loaded real shared libraries (built here with the C compiler) through the child's own exit path."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from envcheck.model import Status
from envcheck.smoke import parse_child_output
from envcheck.smoke.run import write_child
from envcheck.inside.loaded import classify_library, imported_modules, loaded_libraries, mapped_files
from envcheck.model import LoadedLibrary, ProcessRecord
from envcheck.smoke.forensics import judge_process, problems, process_from, summary

SITE = "/venv/lib/python3.12/site-packages"
CU13 = f"{SITE}/nvidia/cu13/lib"


# --------------------------------------------------------------------------------------------------------------
# Parsing /proc/<pid>/maps


MAPS = f"""\
55d0c0000000-55d0c0001000 r--p 00000000 08:01 1 /usr/bin/python3.12
7f0000000000-7f0000001000 r--p 00000000 08:01 2 /usr/lib/x86_64-linux-gnu/libcuda.so.580.159.04
7f0000001000-7f0000002000 r-xp 00001000 08:01 2 /usr/lib/x86_64-linux-gnu/libcuda.so.580.159.04
7f0000002000-7f0000003000 rw-p 00000000 00:00 0
7f0000003000-7f0000004000 rw-p 00000000 00:00 0 [heap]
7f0000004000-7f0000005000 r--p 00000000 08:01 3 {CU13}/libcudart.so.13
7f0000005000-7f0000006000 r--p 00000000 08:01 4 /tmp/a dir/libcublas.so.13 (deleted)
7ffd00000000-7ffd00001000 r-xp 00000000 00:00 0 [vdso]
"""


def test_mapped_files():
    assert mapped_files(MAPS) == [
        "/usr/bin/python3.12",
        "/usr/lib/x86_64-linux-gnu/libcuda.so.580.159.04",
        f"{CU13}/libcudart.so.13",
        "/tmp/a dir/libcublas.so.13",
    ]
    assert mapped_files("") == [] and mapped_files("garbage\n\n1 2 3\n") == []


@pytest.mark.parametrize("path, kind, version, major", [
    ("/usr/lib/x86_64-linux-gnu/libcuda.so.580.159.04", "libcuda", "580.159.04", None),
    ("/usr/lib/x86_64-linux-gnu/libcuda.so.1", "libcuda", "1", None),
    (f"{CU13}/libcudart.so.13", "cudart", "13", 13),
    ("/usr/local/cuda-12.8/lib64/libcudart.so.12.8.90", "cudart", "12.8.90", 12),
    (f"{CU13}/libcublasLt.so.13", "cublasLt", "13", 13),
    (f"{CU13}/libcublas.so.13", "cublas", "13", 13),
    (f"{CU13}/libnvrtc.so.13", "nvrtc", "13", 13),
    (f"{CU13}/libnvrtc-builtins.so.13.0", "nvrtc-builtins", "13.0", 13),
    (f"{CU13}/libnvJitLink.so.13", "nvjitlink", "13", 13),
    (f"{SITE}/nvidia/cudnn/lib/libcudnn_graph.so.9", "cudnn", "9", None),
    (f"{SITE}/nvidia/nccl/lib/libnccl.so.2", "nccl", "2", None),
    (f"{SITE}/nvidia_cutlass_dsl/lib/_cutlass_ir.cu12.cpython-312-x86_64-linux-gnu.so", "dsl", None, 12),
    (f"{SITE}/nvidia_cutlass_dsl/lib/_cutlass_ir.cu13.cpython-312-x86_64-linux-gnu.so", "dsl", None, 13),
    (f"{SITE}/nvidia_cutlass_dsl/python_packages/cutlass/_mlir/_mlir_libs/_mlir.cpython-312-x86_64-linux-gnu.so", "dsl", None, None),
    (f"{SITE}/tvm_ffi/lib/libtvm_ffi.so", "tvm-ffi", None, None),
    (f"{SITE}/torch/lib/libtorch_cuda.so", None, None, None),
    ("/usr/lib/x86_64-linux-gnu/libcudart_fake.so", None, None, None),
    (f"{SITE}/nvidia_cutlass_dsl/python_packages/cutlass/__init__.py", None, None, None),
])
def test_classify_library(path, kind, version, major):
    got = classify_library(path)
    assert (got and (got["kind"], got["version"], got["cuda_major"])) == (kind and (kind, version, major))


def test_imported_modules():
    class Module:
        __file__ = "/x/cutlass/__init__.py"

    assert imported_modules({"cutlass": Module(), "json": Module(), "cutlass_api": object()}) == {
        "cutlass": "/x/cutlass/__init__.py", "cutlass_api": None,
    }


# --------------------------------------------------------------------------------------------------------------
# Judging


def lib(kind, path, version=None, major=None):
    return LoadedLibrary(kind, path, version, major)


H200 = (  # the stack the bundle puts on the H200: libcuda of the driver, CUDA 13 from torch's wheels
    lib("libcuda", "/usr/lib/x86_64-linux-gnu/libcuda.so.580.159.04", "580.159.04"),
    lib("cudart", f"{CU13}/libcudart.so.13", "13", 13),
    lib("cublas", f"{CU13}/libcublas.so.13", "13", 13),
    lib("cublasLt", f"{CU13}/libcublasLt.so.13", "13", 13),
    lib("nvrtc", f"{CU13}/libnvrtc.so.13", "13", 13),
    lib("dsl", f"{SITE}/nvidia_cutlass_dsl/python_packages/cutlass/_mlir/_mlir_libs/_mlir.so"),
)
ROOTS = (SITE,)


@pytest.mark.parametrize("extra, torch_cuda, roots, expected", [
    ((), "13.0", ROOTS, []),
    ((lib("cudart", "/usr/local/cuda-12.8/lib64/libcudart.so.12", "12", 12),), "13.0", ROOTS, ["majors", "outside"]),
    ((lib("cudart", f"{SITE}/nvidia/cuda_runtime/lib/libcudart.so.12", "12", 12),), "13.0", ROOTS, ["majors"]),
    ((lib("nvrtc", "/usr/local/cuda/lib64/libnvrtc.so.13", "13", 13),), "13.0", ROOTS, ["outside"]),
    ((lib("nvrtc", "/usr/local/cuda/lib64/libnvrtc.so.13", "13", 13),), "13.0", (), []),  # no roots: not judged
    ((lib("cudnn", "/opt/cudnn/libcudnn.so.9", "9"),), "13.0", ROOTS, ["outside"]),
    ((lib("dsl", f"{SITE}/nvidia_cutlass_dsl/lib/_cutlass_ir.cu12.so", None, 12),), "13.0", ROOTS, ["dsl"]),
    ((lib("dsl", f"{SITE}/nvidia_cutlass_dsl/lib/_cutlass_ir.cu13.so", None, 13),), "13.0", ROOTS, []),
    ((lib("dsl", f"{SITE}/nvidia_cutlass_dsl/lib/_cutlass_ir.cu12.so", None, 12),), None, ROOTS, []),  # CPU torch
    ((lib("dsl", "/elsewhere/nvidia_cutlass_dsl/lib/x.so"), lib("tvm-ffi", "/elsewhere/tvm_ffi/lib/libtvm_ffi.so")), "13.0", ROOTS, []),
    ((), "13.0", (SITE + "/",), []),  # a root given with its slash
    ((), "13.0", ("/venv/lib/python3.12/site",), ["outside"]),  # a prefix of a name is not a parent folder
])
def test_problems(extra, torch_cuda, roots, expected):
    found = problems(ProcessRecord(H200 + extra), torch_cuda, roots)
    kinds = {"majors": "different majors", "outside": "outside the target environment", "dsl": "The DSL's CUDA"}
    assert [next(k for k, text in kinds.items() if text in f) for f in found] == expected


def test_the_dsl_remedy_names_the_flavour():
    (text,) = problems(ProcessRecord((lib("dsl", f"{SITE}/nvidia_cutlass_dsl/lib/_cutlass_ir.cu12.so", None, 12),)), "13.0", ROOTS)
    assert "nvidia-cutlass-dsl[cu13]" in text and "nvidia-cutlass-dsl-libs-cu12" in text


def test_judge_process():
    assert judge_process(None, "13.0", ROOTS).status is Status.SKIP
    assert judge_process(ProcessRecord(), "13.0", ROOTS).status is Status.SKIP
    passed = judge_process(ProcessRecord(H200, (("cutlass", "/x/cutlass/__init__.py"),)), "13.0", ROOTS)
    assert passed.status is Status.PASS and passed.id == "smoke.libraries"
    assert passed.found == "libcuda 580.159.04, CUDA runtime 13, cuBLAS 13, cuBLASLt 13, NVRTC 13, 1 DSL library"
    assert "module cutlass: /x/cutlass/__init__.py" in passed.details
    warned = judge_process(ProcessRecord(H200 + (lib("cudart", "/opt/libcudart.so.12", "12", 12),)), "13.0", ROOTS)
    assert warned.status is Status.WARN and warned.remedy is not None


def test_a_smoke_that_did_not_run_is_said_so_not_guessed_at():
    skipped = judge_process(None, "13.0", ROOTS, ran=False)
    assert skipped.status is Status.SKIP and skipped.found.startswith("the smoke did not run")
    ended = judge_process(None, "13.0", ROOTS, ran=True)  # a child that ran and left no record
    assert ended.status is Status.SKIP and "ended before its report" in ended.found


def test_doctor_smoke_without_a_gpu_says_the_smoke_did_not_run():
    import json

    done = subprocess.run([sys.executable, "-m", "envcheck", "doctor", "--smoke", "--json"], capture_output=True,
                          text=True, timeout=120)
    report = json.loads(done.stdout)
    if report["smoke"]["status"] != "skip" or report["smoke"]["timings"]["elapsed_s"] is not None:
        pytest.skip("the smoke ran here (a GPU)")
    found = next(c["found"] for c in report["checks"] if c["id"] == "smoke.libraries")
    assert found == "the smoke did not run, so nothing it loaded can be judged"


@pytest.mark.parametrize("result", [
    None, {}, {"process": None}, {"process": "x"}, {"process": []},
])
def test_no_record(result):
    assert process_from(result) is None


def test_a_malformed_record_keeps_what_is_well_formed():
    record = process_from({"process": {"libraries": [
        {"kind": "cudart", "path": "/a/libcudart.so.13", "version": "13", "cuda_major": 13},
        {"kind": "cudart"}, "x", {"kind": 1, "path": "/b"},
        {"kind": "nvrtc", "path": "/a/libnvrtc.so.13", "version": 13, "cuda_major": True},
    ], "modules": {"cutlass": "/c/__init__.py", "cutlass_api": 5}}})
    assert record.libraries == (lib("cudart", "/a/libcudart.so.13", "13", 13), lib("nvrtc", "/a/libnvrtc.so.13"))
    assert record.modules == (("cutlass", "/c/__init__.py"), ("cutlass_api", None))
    assert summary(record) == "CUDA runtime 13, NVRTC ?"


# --------------------------------------------------------------------------------------------------------------
# A real process


def _shared_library(path: Path, soname: str, tmp: Path) -> Path:
    source = tmp / "lib.c"
    source.write_text("int envcheck_forensics_probe(void) { return 1; }\n")
    path.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["gcc", "-shared", "-fPIC", f"-Wl,-soname,{soname}", "-o", str(path), str(source)], check=True, timeout=60)
    return path


@pytest.mark.skipif(shutil.which("gcc") is None or not Path("/proc/self/maps").exists(), reason="needs gcc and Linux")
def test_a_real_child_records_what_it_loaded(tmp_path):
    """The child script, run by path from its run folder as envcheck runs it, after loading two CUDA runtimes of
    different majors (one inside the environment, one outside): it fails at `import torch` (there is none here) and
    its result line still carries the process record, which the judge turns into both findings."""
    child = write_child(tmp_path)
    site = tmp_path / "env" / "site-packages"
    inside = _shared_library(site / "nvidia" / "cu13" / "lib" / "libcudart.so.13", "libcudart.so.13", tmp_path)
    outside = _shared_library(tmp_path / "cuda-12.8" / "lib64" / "libcudart.so.12", "libcudart.so.12", tmp_path)
    loader = (
        "import ctypes, runpy, sys\n"
        f"ctypes.CDLL({str(inside)!r}); ctypes.CDLL({str(outside)!r})\n"
        f"sys.argv = [{str(child)!r}]\n"
        f"runpy.run_path({str(child)!r}, run_name='__main__')\n"
    )
    done = subprocess.run([sys.executable, "-c", loader], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    result, _ = parse_child_output(done.stdout)
    assert done.returncode == 1 and result["error"]["type"] in ("ModuleNotFoundError", "ImportError")
    record = process_from(result)
    assert sorted((l.kind, l.path, l.cuda_major) for l in record.libraries) == sorted([
        ("cudart", str(inside), 13), ("cudart", str(outside), 12),
    ])  # in address order, as the maps list them
    finding = judge_process(record, "13.0", (str(site),))
    assert finding.status is Status.WARN
    assert "different majors" in finding.found and f"outside the target environment ({outside})" in finding.found


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="needs Linux")
def test_this_process_maps_are_read():
    """The real maps of this test process: the interpreter itself and its extension modules are there."""
    from envcheck.inside.loaded import read_maps

    files = mapped_files(read_maps())
    assert any(Path(f).name.startswith("python") or "libpython" in f for f in files)
    assert all(l["kind"] for l in loaded_libraries(read_maps()))


# --------------------------------------------------------------------------------------------------------------
# doctor --smoke


def test_doctor_turns_the_record_into_a_finding_with_the_targets_environment():
    """The environment's roots come from the facts: site-packages, and the prefix of a virtual environment."""
    import factsbuilder as fb
    from envcheck.smoke.forensics import libraries_finding
    from envcheck.model import Report
    from envcheck.model import SmokeResult

    site = fb.SITE
    record = ProcessRecord((
        lib("libcuda", "/usr/lib/x86_64-linux-gnu/libcuda.so.580.159.04", "580.159.04"),
        lib("cudart", f"{site}/nvidia/cu13/lib/libcudart.so.13", "13", 13),
        lib("nvrtc", "/opt/venv/lib/libnvrtc.so.13", "13", 13),  # under the venv's prefix: inside
    ))
    report = Report("p", "/opt/venv/bin/python", (), facts=fb.facts())
    finding = libraries_finding(SmokeResult(Status.PASS, "ok", process=record), report)
    assert finding.status is Status.PASS and finding.found.startswith("libcuda 580.159.04, CUDA runtime 13")
    outside = ProcessRecord(record.libraries + (lib("cublas", "/usr/local/cuda/lib64/libcublas.so.13", "13", 13),))
    finding = libraries_finding(SmokeResult(Status.PASS, "ok", process=outside), report)
    assert finding.status is Status.WARN and "/usr/local/cuda/lib64/libcublas.so.13" in finding.found
    assert libraries_finding(SmokeResult(Status.SKIP, "no gpu"), report).status is Status.SKIP
