"""envcheck explain: the smoke stage's signature table applied to logs. Real logs captured on an H200
(tests/data/smoke), logs built to be hostile (escape sequences, huge lines, binary), and the shared table itself."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import flat

from envcheck.cli import main
from envcheck.causes.log import BLOCK, LogReader, clean_line, scan
from envcheck.profile import PolicyError
from envcheck.redact import Redactor
from envcheck.causes import SIGNATURES, Context
from envcheck.causes.explanations import EXPLANATIONS
from envcheck.causes.table import load_signatures, parse_signatures

DATA = Path(__file__).parent / "data" / "smoke"


def causes_in(text: str, policy) -> tuple:
    return scan(LogReader(io.BytesIO(text.encode())), Context("python3", policy, known=False))


# --------------------------------------------------------------------------------------------------------------
# Real logs


REAL = [
    ("cutedsl-backend-cc90.log", "no-valid-choices"),
    ("no-cuda-visible.log", "no-cuda"),
    ("no-cutlass-api.log", "cutlass-api-missing"),
    ("no-cutlass-api-inductor.log", "cutlass-api-missing"),
    ("pth-trap.log", "cutlass-not-importable"),
    ("pth-trap-inductor.log", "cutlass-not-importable"),
    ("proxykind-synthesized.log", "dsl-too-new"),
    ("pass-cold-h200.log", None),
    ("pass-warm-h200.log", None),
    ("timeout-12s.log", None),  # killed from outside: nothing in the log says why, and explain does not guess
]


@pytest.mark.parametrize("name, cause_id", REAL)
def test_real_logs(capsys, name, cause_id):
    code = main(["explain", str(DATA / name), "--json"])
    shown = json.loads(capsys.readouterr().out)
    assert code == (1 if cause_id else 0)
    assert (shown["causes"][0]["id"] if shown["causes"] else None) == cause_id
    if cause_id:
        first = shown["causes"][0]
        line = (DATA / name).read_text(encoding="utf-8").splitlines()[first["evidence"]["line"] - 1]
        assert first["evidence"]["text"] == line.strip()[:300] or first["evidence"]["text"] in line
        assert first["remedy"]["text"] and first["checks"] is not None


def test_the_main_cause_comes_first_and_the_rest_follow(policy):
    found = causes_in((DATA / "proxykind-synthesized.log").read_text(), policy)
    assert [f.cause.id for f in found] == ["dsl-too-new", "no-valid-choices"]


def test_evidence_prefers_the_exception_line_over_the_source_line(policy):
    found = causes_in((DATA / "no-cuda-visible.log").read_text(), policy)
    assert found[0].cause.evidence.startswith("SmokeNoCuda: torch 2.11.0+cu130")


H200_TVM_FFI = """\
  File "/usr/local/lib/python3.12/dist-packages/cutlass/base_dsl/tvm_ffi_builder.py", line 212, in _make
    return tvm_ffi.make_kwargs_wrapper(fn, names, map_dataclass_to_tuple=True)
TypeError: make_kwargs_wrapper() got an unexpected keyword argument 'map_dataclass_to_tuple'
"""
H200_CTK = """\
  File "/usr/local/lib/python3.12/dist-packages/nvidia_cutlass_dsl/dsl_packages/cutlass/_mlir/__init__.py", line 30
RuntimeError: No CTK flavor installed: expected one or more of /usr/local/lib/python3.12/dist-packages/nvidia_cutlass_dsl/lib/_cutlass_ir.cu{N}.cpython-312-x86_64-linux-gnu.so
"""


@pytest.mark.parametrize("log, cause_id, remedy", [
    (H200_TVM_FFI, "tvm-ffi-too-old", "apache-tvm-ffi>=0.1.11"),
    (H200_CTK, "dsl-libs-missing", "nvidia-cutlass-dsl[cu13]"),
])
def test_the_h200_signatures(policy, log, cause_id, remedy):
    found = causes_in(log, policy)
    assert found[0].cause.id == cause_id
    assert found[0].line == 3 if cause_id == "tvm-ffi-too-old" else found[0].line == 2
    assert found[0].cause.remedy.steps[0].args == (remedy,)


# --------------------------------------------------------------------------------------------------------------
# Untrusted input


@pytest.mark.parametrize("raw, clean", [
    ("\x1b[31mNoValidChoicesError\x1b[0m: x", "NoValidChoicesError: x"),
    ("\x1b]0;owned\x07title", "title"),  # OSC: set the window title
    ("\x1b]8;;http://evil\x1b\\link\x1b]8;;\x1b\\", "link"),  # OSC 8 hyperlink
    ("a\x1bcb", "ab"),  # reset terminal
    ("bell\x07 back\x08space", "bell backspace"),
    ("tab\there", "tab here"),
    ("\u202eevil\u202c", "evil"),  # right-to-left override
    ("\x9b31mC1 CSI", "C1 CSI"),
    ("plain text: kept as is", "plain text: kept as is"),
])
def test_clean_line(raw, clean):
    assert clean_line(raw) == clean


def test_escape_sequences_never_reach_the_terminal(capsys, tmp_path):
    log = tmp_path / "ci.log"
    log.write_bytes(b"\x1b[1;31mModuleNotFoundError: No module named 'cutlass'\x1b[0m\x1b]0;pwned\x07\r\n")
    assert main(["explain", str(log)]) == 1
    out = capsys.readouterr().out
    assert "cutlass-not-importable" in out and "\x1b" not in out and "\x07" not in out and "pwned" not in out


def test_a_log_is_read_to_its_end_across_blocks(policy):
    """The error on the last line of a log many blocks long is found (it was not, past 64 MiB: issue 15)."""
    reader = LogReader(io.BytesIO(b"noise\n" * 50_000 + b"No module named 'cutlass_api'\n"), block=4096)
    found = scan(reader, Context("python3", policy, known=False))
    assert [(f.cause.id, f.line) for f in found] == [("cutlass-api-missing", 50_001)] and reader.lines_read == 50_001


def test_an_endless_line_is_searched_to_its_end_and_the_next_line_still_read(policy):
    reader = LogReader(io.BytesIO(b"x" * 3_000_000 + b"No module named 'torch'\nNo module named 'cutlass_api'\n"), max_line=1024)
    found = scan(reader, Context("python3", policy, known=False))
    assert [(f.cause.id, f.line) for f in found] == [("torch-missing", 1), ("cutlass-api-missing", 2)]
    assert found[0].cause.evidence.endswith("xxx No module named 'torch'".replace(" ", "", 1))  # quoted where it is
    assert reader.lines_read == 2


def test_standard_input(capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(H200_TVM_FFI.encode())))
    assert main(["explain", "-", "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["causes"][0]["id"] == "tvm-ffi-too-old"


@pytest.mark.parametrize("make", [
    lambda p: str(p / "missing.log"),
    lambda p: str(p),  # a directory
    lambda p: (p.joinpath("bin.log").write_bytes(b"\x7fELF\x00\x00\x01\n"), str(p / "bin.log"))[1],
])
def test_bad_input_exits_2(capsys, tmp_path, make):
    assert main(["explain", make(tmp_path)]) == 2
    assert "expected" in capsys.readouterr().err


def test_with_python_adds_what_doctor_sees(capsys, tmp_path):
    log = tmp_path / "run.log"
    log.write_text("ModuleNotFoundError: No module named 'cutlass_api'\n")
    assert main(["explain", str(log), "--python", sys.executable, "--profile", "torch-2.11-nvgemm", "--json"]) == 1
    shown = json.loads(capsys.readouterr().out)
    assert shown["target"] == Redactor()(sys.executable)  # `~/...` for a venv under the home folder
    doctor = {d["id"]: d["status"] for d in shown["causes"][0]["doctor"]}
    assert set(doctor) == {"cutlass-api.install", "cutlass.checkout"}
    assert doctor["cutlass-api.install"] == "fail"  # this venv has no cutlass_api


NO_CHOICES = ("torch._inductor.exc.InductorError: LoweringException: NoValidChoicesError: No choices to select, please "
              "consider adding ATEN into max_autotune_gemm_backends config\n")


@pytest.mark.parametrize("given, words", [
    # the log shows no stack: judged for what `pip install torch` gives, the operators stack
    ([], "Inductor found no CuteDSL kernel: cutlass.operators (the kernel library"),  # the log alone: nothing claimed
    (["--gpu-capability", "8.0"], "cutlass.operators offers none for compute capability 8.0 (it needs 9.0 or newer)"),
    (["--gpu-capability", "9.0"], "Inductor found no CuteDSL kernel: cutlass.operators (the kernel library"),
    (["--profile", "torch-2.11-nvgemm", "--gpu-capability", "7.5"],
     "cutlass_api offers none for compute capability 7.5 (it needs 8.0 or newer)"),
    (["--profile", "torch-2.11-nvgemm", "--gpu-capability", "8.0"],
     "Inductor found no CuteDSL kernel: cutlass_api (the kernel library"),
])
def test_a_gpu_capability_given_without_python_is_the_gpu_the_log_ran_on(capsys, tmp_path, given, words):
    log = tmp_path / "run.log"
    log.write_text(NO_CHOICES)
    assert main(["explain", str(log), *given, "--json"]) == 1
    assert words in json.loads(capsys.readouterr().out)["causes"][0]["text"]


def test_the_command_runs_as_a_process(tmp_path):
    """The real entry point, with its exit code."""
    done = subprocess.run([sys.executable, "-m", "envcheck", "explain", str(DATA / "pth-trap.log")], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and "cutlass-not-importable" in done.stdout


# --------------------------------------------------------------------------------------------------------------
# The table: one, shared, strict


def test_smoke_and_explain_share_one_table():
    assert [s.row for s in SIGNATURES] == list(load_signatures())
    assert set(EXPLANATIONS) == {row.id for row in load_signatures()}


def test_every_check_named_in_the_table_is_a_doctor_check():
    from envcheck.judge import CHECKS

    known = {check_id for check_id, _ in CHECKS}
    assert {c for row in load_signatures() for c in row.checks} <= known


GOOD = '[[signature]]\nid = "a-b"\npatterns = ["x"]\nchecks = ["cuda.driver"]\n'


@pytest.mark.parametrize("text, key", [
    ('[[signature]]\nid = "a"\npatterns = ["x"]\nextra = 1\n', "signature[0].extra"),
    ('[[signature]]\nid = "A b"\npatterns = ["x"]\n', "signature[0].id"),
    (GOOD + GOOD, "signature[1].id"),  # duplicate id
    ('[[signature]]\nid = "a"\npatterns = []\n', "signature[0].patterns"),
    ('[[signature]]\nid = "a"\npatterns = ["(unclosed"]\n', "signature[0].patterns"),
    ('[[signature]]\nid = "a"\npatterns = ["(a)(b)"]\n', "signature[0].patterns"),
    ('[[signature]]\nid = "a"\npatterns = ["x"]\nchecks = "cuda.driver"\n', "signature[0].checks"),
    ('other = 1\n', "other"),
    ('[[signature]\n', "(file)"),
])
def test_a_bad_table_names_the_key(text, key):
    with pytest.raises(PolicyError) as raised:
        parse_signatures(text, "sig.toml")
    assert raised.value.key == key and raised.value.source == "sig.toml"


def test_a_good_row():
    (row,) = parse_signatures(GOOD, "sig.toml")
    assert row.id == "a-b" and row.checks == ("cuda.driver",) and row.search("axb")


# --------------------------------------------------------------------------------------------------------------
# Reading to the end (issue 15): blocks, over-long lines, devices, FIFOs


def _reference_lines(data: bytes, max_line: int, overlap: int) -> list[tuple[int, str]]:
    """What LogReader must yield, computed the plain way: every line numbered, and cut into windows of max_line bytes
    each starting `overlap` bytes before the last one's end, each decoded and cleaned; a window inside its line
    marked as such."""
    from envcheck.causes.logreader import CONTINUED
    from envcheck.terminal import clean

    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    windows = []
    for number, line in enumerate(lines, 1):
        start = 0
        while True:
            text = clean(line[start:start + max_line].decode("utf-8", "replace")).replace("\t", " ")
            windows.append((number, (CONTINUED if start else "") + text))
            if start + max_line >= len(line):
                break
            start += max_line - overlap
    return windows


LOGS = [
    b"",
    b"one line without a newline",
    b"a\nb\n\nc\n",
    b"\n\n\n",
    b"x" * 100 + b"\nshort\n" + b"y" * 37 + b"\n" + b"z" * 10,  # lines longer than the cap, at every offset
    b"\x1b[31mred\x1b[0m\r\n\ttab\xc3\xa9\xe2\x80\x94\n\xff\xfe broken utf-8\n",
    "é—€".encode() * 20 + b"\n" + b"q" * 8,  # a cut through a multibyte character
]


@pytest.mark.parametrize("data", LOGS)
@pytest.mark.parametrize("block", [1, 2, 3, 5, 7, 16, 64, 1 << 20])
def test_blocks_of_any_size_read_the_same_lines(data, block):
    reader = LogReader(io.BytesIO(data), max_line=8, block=block)
    assert [(line.number, line.text) for line in reader] == _reference_lines(data, 8, reader.overlap)
    assert reader.lines_read == data.count(b"\n") + (data[-1:] not in (b"", b"\n"))


def test_dev_zero_keeps_memory_bounded():
    """An endless line with no newline (/dev/zero's) is read to its end a window at a time, never kept: the reader
    holds one block and a window at most (explain refuses devices before this; the reader bounds memory on its own).
    Its NULs are no text: nothing is left of them to search."""
    import tracemalloc

    class Endless:
        served = 0

        def read(self, size):
            self.served += size
            return b"\0" * size if self.served <= 64 << 20 else b""

    endless = Endless()
    reader = LogReader(endless)
    tracemalloc.start()
    try:
        kept = {line.text for line in reader}
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert endless.served > 64 << 20 and reader.lines_read == 1 and kept == {"", "\u2026"}
    assert peak < 8 * BLOCK  # 64 MiB read; a few blocks' worth held at once


def test_the_whole_block_search_never_misses_a_line_match():
    """A block is searched whole before line by line: for every kind of pattern (alternatives, anchors, classes,
    groups), a match on one line is found in the block too; patterns whose meaning changes beside a newline are
    searched line by line only."""
    import re

    from envcheck.causes.guard import alternatives as _alternatives
    from envcheck.causes.log import _whole_block_patterns
    from envcheck.causes.table import SignatureRow

    assert _alternatives("a|b(c|d)|[|]|\\\\|x") == ["a", "b(c|d)", "[|]", "\\\\", "x"]
    assert _alternatives("[]|]x|y") == ["[]|]x", "y"] and _alternatives("[^]|]|z") == ["[^]|]", "z"]
    lines = ["noise", "foo at the start", "in the middle: bar", "tail ends with baz", "PiPe|x", "q(1)"]
    block = "\n".join(lines)
    for pattern, line_only in [("^foo", False), ("baz$", False), ("bar|nothing", False), ("Pi[Pp]e\\|x", False),
                               ("q\\(\\d\\)", False), ("\\Afoo", True), ("baz\\Z", True), ("(?<=: )bar", True),
                               ("baz(?!\\s)", True), ("(?i)FOO", True), ("(?<!\\w)foo", False),
                               ("(?<![^x])foo", True)]:
        row = SignatureRow("t", (re.compile(pattern),))
        whole = _whole_block_patterns(row)
        assert (whole is None) == line_only, pattern
        if whole is not None:
            assert any(p.search(block) for p in whole), pattern
        assert any(row.search(line) for line in lines), pattern  # the table row matches some line by itself


# One line for each alternative of each pattern of the table (a new row needs its lines here).
TABLE_SAMPLES = {
    "dsl-too-new": ["AttributeError: module 'cutlass.cute.nvgpu.cpasync' has no attribute 'ProxyKind'",
                    "TypeError: Expected a string literal for ProxyKind, but got enum 'ProxyKind.async_shared'."],
    "tvm-ffi-too-old": ["TypeError: make_kwargs_wrapper() got an unexpected keyword argument 'map_dataclass_to_tuple'"],
    "dsl-libs-missing": ["RuntimeError: No CTK flavor installed: expected one or more of ..."],
    "torch-missing": ["ModuleNotFoundError: No module named 'torch'"],
    "cutlass-api-missing": ["ModuleNotFoundError: No module named 'cutlass_api.providers'",
                            "nv_universal_gemm.py:467] cutlass_api not available, skipping NVIDIA Universal GEMM choices"],
    "cutlass-not-importable": ["ModuleNotFoundError: No module named 'cutlass.cute'"],
    "cuda-driver": ["cudaErrorUnsupportedPtxVersion", "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
                    "the PTX was compiled with an unsupported toolchain.",
                    "CUDA driver version is insufficient for CUDA runtime version", "cudaErrorInsufficientDriver",
                    "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE",
                    "forward compatibility was attempted on non supported HW",
                    "The NVIDIA driver on your system is too old (found version 11040).",
                    "cudaErrorSystemDriverMismatch", "system has unsupported display driver / cuda driver combination",
                    "CUDA_ERROR_INSUFFICIENT_DRIVER (error code: 35)",
                    "cuda-bindings was built for CUDA major version 13, but the NVIDIA driver only supports up to CUDA 12",
                    "RuntimeError: Failed to query CUDA driver version: 3",
                    "CUDA driver version 12080 is below the minimum required version for the installed cuda-bindings package",
                    "RuntimeError: CUDA Driver version < 11.8, cannot get _max_active_clusters",
                    'RuntimeError: Function "cuCtxCreate_v4" not found', "CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER",
                    "cudaErrorCallRequiresNewerDriver"],
    "cuda-out-of-memory": ["torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB", "OutOfMemoryError"],
    "no-cuda": ["SmokeNoCuda: no GPU", "AssertionError: Torch not compiled with CUDA enabled",
                "RuntimeError: No CUDA GPUs are available", "RuntimeError: Found no NVIDIA driver on your system.",
                "DSLCudaRuntimeError: CUDA_ERROR_NO_DEVICE (error code: 100)"],
    "no-valid-choices": ["torch._inductor.exc.NoValidChoicesError: No choices to select", "No choices exist for mm"],
    # a sample of two lines: the row matches the second where the first is just above it
    "nvgemm-no-kernel-for-op": ["NoValidChoicesError: No choices to select. Provided reason: No choices exist for "
                                "backend.\n  target: aten.baddbmm.default"],
    "fell-back": ["SmokeFellBack: Inductor picked triton"],
    "wrong-result": ["SmokeWrongResult: max error 3.1"],
    "tvm-ffi-needed": ["DSLRuntimeError: install apache-tvm-ffi>=0.1.5 to enable kwargs/defaults"],
    "tvm-ffi-not-initialized": ["cutlass.base_dsl.common.DSLRuntimeError: TVM FFI function is not initialized."],
    "dsl-arch-mismatch": ["error: expects arch to be sm_90a, but got sm_100a",
                          "OpError: expects arch to be Arch.sm_90a, but got Arch.sm_100a"],
    "target-sm-invalid": ["ValueError: TargetSm 86a is invalid. ArchConditional targets must be Hopper (sm90) or newer"],
    "operators-tvm-ffi-conflict": ["Conflicting environment variables: CUTLASS_OPERATORS_USE_TVM_FFI=False (disables"],
    "nvmmh-missing": ["nvmatmul heuristic requires 'nvidia-matmul-heuristics>=0.1.0.27' with the 0.1.0.27 API shape",
                      "ImportError: NvMatmulHeuristics is unavailable: install 'nvidia-matmul-heuristics>=0.1.0.27'"],
    "dsl-flavor-incompatible": ["None of the installed toolkit flavors (cu12, cu13) are compatible with the CUDA driver"],
    "dsl-install-incomplete": ["RuntimeError: cu12 install is incomplete: /x/_cutlass_ir.cu12.so present but"],
    "common-efc": ["No module named 'cutlass.operators.providers.cutedsl.evt.common_efc'"],
    "cutlass-operators-missing": ["ModuleNotFoundError: No module named 'cutlass.operators'"],
    "cutlass-mlir-missing": ["ModuleNotFoundError: No module named 'cutlass._mlir._mlir_libs'"],
    "dsl-driver-dependency": ["cutlass.base_dsl.common.CudaDriverDependencyError:", "CUDA Driver Dependency Error",
                              "CUDA runtime initialization failed during dependency check."],
    "no-libcuda": ["OSError: libcuda.so.1: cannot open shared object file: No such file or directory",
                   "RuntimeError: Failed to dlopen libcuda.so.1",
                   'DynamicLibNotFoundError: "cuda" is an NVIDIA driver library and can only be found via system search.',
                   "CUDA_ERROR_STUB_LIBRARY (error code: 34)", "cudaErrorStubLibrary"],
    "no-kernel-image": ["cudaErrorNoKernelImageForDevice", "CUDA_ERROR_NO_BINARY_FOR_GPU",
                        "torch.AcceleratorError: CUDA error: no kernel image is available for execution on the device",
                        "DSLCudaRuntimeError: CUDA_ERROR_INVALID_SOURCE (error code: 300)"],
    # the rows of issue 25 (tests/data/upstream-messages.toml holds each message's real text and source)
    "dsl-arch-invalid": ["ValueError: Invalid CUTE_DSL_ARCH: sm_9x. Invalid TargetSm: '9x'.",
                         "ValueError: Invalid architecture string format: sm90", "Invalid TargetSm: 'sm90x'. Expected"],
    "dsl-toolkit-refuses-gpu": ["error: Unsupported GPU architecture 'sm_107a' with CUDA toolkit version 'DSLCudaV"],
    "dsl-arch-unsupported": ["Unsupported GPU architecture 'sm_80'. This kernel is only compatible with: [sm_90]",
                             "error[CONFIG_UNSUPPORTED_ARCH]:",
                             "DSLRuntimeError: invalid arch, expected one of [sm_90a], but got sm_80.",
                             "error: expects arch to be one of [base_dsl.Arch.sm_100a], but got sm_90a",
                             "error: expects arch to be at least sm_90, but got sm_80"],
    "env-value-invalid": ["ValueError: Invalid value for environment variable CUTE_DSL_LOG_TO_CONSOLE='maybe'."],
    "tvm-ffi-missing": ["TVM FFI is not installed, but TVM FFI support was requested.",
                        "TVM FFI is not installed, please install it via `pip install apache-tvm-ffi`",
                        "ImportError: Attempted to enable TVM FFI, but it is not installed.",
                        "CUTLASS_OPERATORS_USE_TVM_FFI is set to enable TVM FFI, but it is not installed."],
    "nvmmh-gpu": ["KeyError: 'Unsupported GPU: H100. Note, currently only Blackwell GPU SKUs are supported for heuristics",
                  "ValueError: nvmatmul only supports SM100 today; 'H200' isn't"],
    "operators-too-old": ["ImportError: cannot import name 'efc' from 'cutlass.operators.providers.cutedsl.evt'",
                          "No module named 'cutlass.operators.providers.cutedsl.evt.efc'"],
    "dsl-provider-unavailable": ["ImportError: CuTeDSLProvider is unavailable: install 'nvidia-cutlass-dsl'"],
    "dsl-cuda-version": ["DSLRuntimeError: Failed to get CUDA version",
                         "NotImplementedError: _get_cuda_version is not implemented"],
    "nvdisasm-missing": ["CUTE_DSL_KEEP=sass requires the 'nvdisasm' tool to write SASS output",
                         "SASS dumping requires the nvdisasm tool, but it was not found.",
                         "nvdisasm at '/usr/bin/nvdisasm' reports version 12.0, which is not supported"],
    "kernel-not-found": ["RuntimeError: Could not find kernel: cutedsl.X", "Could not find EFC kernel: cutedsl.Y"],
    "operators-kernel-names": ["RuntimeError: NVGEMM EFC kernel name does not match expected tile pattern 'tileMxNxK'"],
    "max-active-clusters": ["W1201 nv_universal_gemm_kernel.py:175] Failed to query max_active_clusters"],
    "operator-from-metadata": ["Failed to reconstruct NVGEMM operator X from metadata; falling back"],
    "precompile-pool-unusable": ["NVGEMM subprocess precompile pool unusable (x); falling back",
                                 "Process pool not ready after 120s; falling back to serial",
                                 "Compile worker pool broke while submitting job 5; resetting the pool.",
                                 "Inductor compile worker sidecar (pid 41) exited unexpectedly with code -9",
                                 "A process in the process pool was terminated abruptly while the future was running",
                                 "RuntimeError: Attempting to use a closed pool"],
    # issue 29 item 4's rows
    "tvm-ffi-not-installed": ["ModuleNotFoundError: No module named 'tvm_ffi'"],
    "torch-gpu-unsupported": ["NVIDIA GeForce GTX 1080 with CUDA capability sm_61 is not compatible with the current "
                              "PyTorch installation.",
                              "UserWarning: Found GPU0 NVIDIA GeForce GTX 1080 which is of compute capability (CC) 6.1."],
    "tvm-ffi-dlpack-addon": ["UserWarning: Failed to JIT torch c dlpack extension, EnvTensorAllocator will not be enabled."],
    "tvm-ffi-disabled": ["UserWarning: TVM FFI is not installed, and will be disabled."],
    "dsl-enum-deprecated": ["DeprecationWarning: Passing enum member directly to ProxyKind.from_str() is deprecated."],
    "dsl-setting-deprecated": ["DeprecationWarning: CUTE_DSL_KEEP_PTX is deprecated; use CUTE_DSL_KEEP=ptx instead."],
    "dsl-log-settings": ["Log level was set, but neither logging to file (CUTE_DSL_LOG_TO_FILE) nor logging"],
}


def test_every_row_of_the_table_is_found_through_the_whole_block_search(policy):
    """The real table: every alternative of every pattern, buried in a block of noise, is found on its line."""
    from envcheck.causes.log import _whole_block_patterns

    assert set(TABLE_SAMPLES) == {s.id for s in SIGNATURES}
    assert all(_whole_block_patterns(s.row) is not None for s in SIGNATURES)  # the fast path serves the whole table
    for cause_id, lines in TABLE_SAMPLES.items():
        for line in lines:
            log = ("noise line\n" * 3000 + line + "\n" + "more noise\n" * 3000).encode()
            found = scan(LogReader(io.BytesIO(log), block=8192), Context("python3", policy, known=False))
            assert [f.line for f in found if f.cause.id == cause_id] == [3000 + len(line.splitlines())], (cause_id, line)


def envcheck(*args: str, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "envcheck", *args], capture_output=True, text=True, timeout=120,
                          **kwargs)


@pytest.mark.slow  # 65 MiB through the CLI: 13 s of CPU (the block reader's own test, above, is the quick one)
def test_a_log_past_64_mib_is_read_to_its_last_line(tmp_path):
    """A 65 MiB log whose only error is on its last line: found (it said "no known failure" and exited 0)."""
    log = tmp_path / "big.log"
    line = b"step 1234 | loss 2.31 | " + b"." * 1000 + b"\n"
    with open(log, "wb") as out:
        for _ in range((65 << 20) // len(line) // 1024 + 1):
            out.write(line * 1024)
        out.write(b"AttributeError: module 'cutlass.cute.nvgpu.cpasync' has no attribute 'ProxyKind'\n")
    done = envcheck("explain", str(log), "--json")
    shown = json.loads(done.stdout)
    assert done.returncode == 1 and shown["causes"][0]["id"] == "dsl-too-new", done.stderr
    assert shown["causes"][0]["evidence"]["line"] == shown["lines_read"] and shown["truncated"] is False


@pytest.mark.parametrize("source, kind", [("/dev/zero", "a character device"), ("/dev/null", "a character device"),
                                          (".", "a directory")])
def test_a_device_or_a_directory_is_named_for_what_it_is(source, kind, tmp_path):
    done = envcheck("explain", source, cwd=tmp_path)
    assert done.returncode == 2 and f"{source}: {kind}, not a log" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr and "no such file" not in done.stderr


def test_a_process_substitution_pipe_is_read():
    """`envcheck explain <(cmd)`: the shell passes /dev/fd/N, a pipe whose writer is there from the start."""
    read, write = os.pipe()
    writer = subprocess.Popen(["sh", "-c", "sleep 1; echo \"ModuleNotFoundError: No module named 'cutlass_api'\""],
                              stdout=write)
    os.close(write)
    try:
        done = envcheck("explain", f"/dev/fd/{read}", pass_fds=(read,))
    finally:
        os.close(read)
        writer.wait()
    assert done.returncode == 1 and "cutlass-api-missing" in done.stdout, done.stderr


def test_a_fifo_nothing_writes_to_is_refused_not_waited_on(tmp_path):
    fifo = tmp_path / "log.fifo"
    os.mkfifo(fifo)
    done = envcheck("explain", str(fifo))
    assert done.returncode == 2 and "a FIFO that nothing wrote to" in done.stderr and str(fifo) in done.stderr


@pytest.mark.slow
def test_a_fifo_whose_writer_is_silent_for_a_while_is_still_read(tmp_path):
    """A writer that holds the FIFO open and writes after longer than the wait (a run that prints late)."""
    from envcheck.commands.explain import FIFO_WAIT_S

    fifo = tmp_path / "log.fifo"
    os.mkfifo(fifo)
    writer = subprocess.Popen(["sh", "-c", f"exec 3>'{fifo}'; sleep {FIFO_WAIT_S + 2}; "
                                           "echo \"No module named 'torch'\" >&3"])
    done = envcheck("explain", str(fifo))
    writer.wait()
    assert done.returncode == 1 and "torch-missing" in done.stdout, done.stderr


@pytest.mark.parametrize("stdin", ["/dev/zero", "/dev/urandom"])
def test_a_device_as_standard_input_is_refused(stdin):
    with open(stdin, "rb") as device:
        done = envcheck("explain", stdin=device)
    assert done.returncode == 2 and "standard input: a character device, not a log" in done.stderr


def test_at_a_terminal_explain_says_it_reads_standard_input(tmp_path):
    """With no FILE and a terminal as standard input, envcheck says what it waits for (on standard error, before it
    reads), and reads the log typed there to Ctrl-D."""
    import pty

    leader, follower = pty.openpty()
    process = subprocess.Popen([sys.executable, "-m", "envcheck", "explain"], stdin=follower, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    os.close(follower)
    try:
        import select

        assert select.select([process.stderr], [], [], 30)[0], "nothing said on standard error: it waits silently"
        said = process.stderr.readline()  # written before anything is read: the process waits on the terminal now
        assert said == "envcheck explain: reading the log from standard input (end with Ctrl-D; or give a FILE)\n"
        os.write(leader, b"ModuleNotFoundError: No module named 'torch'\n\x04")  # a line, then Ctrl-D (end of input)
        out, err = process.communicate(timeout=60)
    finally:
        process.kill()
        os.close(leader)
    assert process.returncode == 1 and "torch-missing" in out, err


def test_from_a_pipe_explain_reads_without_a_word(tmp_path):
    done = envcheck("explain", input="ModuleNotFoundError: No module named 'torch'\n")
    assert done.returncode == 1 and "reading the log" not in done.stderr


# --------------------------------------------------------------------------------------------------------------
# The NVGEMM candidates a log shows Inductor losing (causes/candidates.py), in the same pass as the signatures

S4 = Path(__file__).parent / "data" / "h200-s4"


def test_a_models_log_says_how_many_candidates_each_gemm_lost_and_why(capsys):
    assert main(["explain", str(S4 / "m3-l-2048-X.log")]) == 1
    out = flat(capsys.readouterr().out)  # the words, whatever the width they were wrapped at
    assert "cause dsl-arch-mismatch:" in out
    assert ("lost 8 of 30 NVGEMM candidates failed to compile: dsl-arch-mismatch (error: expects arch to be sm_90a, "
            "but got sm_100a)") in out
    assert "mm(2048x14336, 14336x4096) [14336, 1], [1, 14336]: 4 of 10 failed to compile (dsl-arch-mismatch x4), 6 left" in out
    main(["explain", str(S4 / "m3-l-2048-X.log"), "--json"])
    data = json.loads(capsys.readouterr().out)
    assert [(g["sizes"], g["failed"], g["left"]) for g in data["candidates"]["gemms"]] == [
        ("2048x4096, 4096x14336", 4, 6), ("2048x4096, 4096x14336", 0, 10), ("2048x14336, 14336x4096", 4, 6)]
    assert data["candidates"]["gemms"][0]["lost"][0]["cause"] == "dsl-arch-mismatch"


def test_a_log_whose_candidates_all_compiled_has_nothing_to_say_of_them(capsys):
    assert main(["explain", str(S4 / "m3-l-2048-CUTE_DSL_ARCH.log")]) == 0
    out = capsys.readouterr().out
    assert "no known failure" in out and "lost" not in out
    main(["explain", str(S4 / "m3-l-2048-CUTE_DSL_ARCH.log"), "--json"])
    data = json.loads(capsys.readouterr().out)
    assert data["candidates"]["lost"] is None and [g["left"] for g in data["candidates"]["gemms"]] == [10, 10]


def test_candidates_are_read_across_blocks_as_they_are_whole(policy):
    from envcheck.causes.candidates import CandidateReader, read_log_candidates

    text = (S4 / "model-nv16-arch-errors.log").read_text(encoding="utf-8")
    for block in (1 << 10, 1 << 20):  # a record and a table cut across blocks, and the whole log in one
        autotuned = CandidateReader()
        scan(LogReader(io.BytesIO(text.encode()), block=block), Context(python="p", policy=policy, known=False),
             autotuned.block)
        assert autotuned.end() == read_log_candidates(text)


# --------------------------------------------------------------------------------------------------------------
# The words: counts, standard input, lines wrapped at word boundaries


NOT_CUTLASS_API = "ModuleNotFoundError: No module named 'cutlass_api'\n"
PROXYKIND = "AttributeError: module 'cutlass.cute.arch' has no attribute 'ProxyKind'\n"


@pytest.mark.parametrize("log, header", [
    (NOT_CUTLASS_API, "explain  1 known failure in standard input (1 line)"),
    ("x\n" + NOT_CUTLASS_API + PROXYKIND, "explain  2 known failures in standard input (3 lines); the first explains it"),
    ("all good\n", "explain  no known failure of the stack in standard input (1 line)"),
    ("a\nb\n", "explain  no known failure of the stack in standard input (2 lines)"),
])
def test_the_header_counts_in_the_right_number_and_names_standard_input(log, header):
    done = envcheck("explain", input=log, env={**os.environ, "COLUMNS": "300"})
    assert done.stdout.splitlines()[0] == header, done.stdout
    assert " in - " not in done.stdout and "(s)" not in done.stdout


@pytest.mark.parametrize("width", [50, 80])
def test_explain_wraps_at_columns_between_words_and_keeps_commands_whole(tmp_path, width):
    log = tmp_path / "two.log"
    log.write_text("x\n" + NOT_CUTLASS_API + PROXYKIND)
    wide = envcheck("explain", str(log), env={**os.environ, "COLUMNS": "1000"}).stdout.splitlines()
    lines = envcheck("explain", str(log), env={**os.environ, "COLUMNS": str(width)}).stdout.splitlines()
    commands = [line for line in wide if "$ " in line]
    assert commands and [line for line in lines if "$ " in line] == commands  # each command whole, on one line
    for line in lines:
        assert len(line) <= width or "$ " in line or " " not in line.strip(), line
    assert max(len(line) for line in wide if "$ " not in line) > width  # there was something to wrap
    assert " ".join(" ".join(lines).split()) == " ".join(" ".join(wide).split())  # no word broken, none lost
