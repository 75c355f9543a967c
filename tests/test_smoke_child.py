"""The smoke child: its protocol, run for real in an interpreter without torch, and its pure helpers, fed the code
Inductor generated on an H200."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

from envcheck.inside import lookup, protocol, smoke_child
from envcheck.smoke import parse_child_output
from envcheck.smoke.run import write_child
from envcheck.inside.protocol import SMOKE_PHASE, SMOKE_RESULT
from envcheck.inside.smoke_child import RESULT_SCHEMA
from envcheck.inside.gemm import find_kernel, within_tolerance

DATA = Path(__file__).parent / "data" / "smoke"
INSIDE = Path(smoke_child.__file__).parent


def _module_level(tree):
    """The statements that run when a module is imported: its body, and the branches of a top-level try (the shim
    that imports the siblings as envcheck.inside.x or as the envcheck_x copy)."""
    for node in tree.body:
        yield node
        if isinstance(node, ast.Try):
            yield from node.body + [n for handler in node.handlers for n in handler.body] + node.orelse + node.finalbody


@pytest.mark.parametrize("path", sorted(INSIDE.glob("*.py")), ids=lambda path: path.name)
def test_inside_imports_only_the_standard_library_and_its_siblings_at_module_level(path):
    siblings = {p.stem for p in INSIDE.glob("*.py")} - {"__init__"}
    top = set()
    for node in _module_level(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            top |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level:  # from . import x, from .x import y: a sibling
            named = [node.module] if node.module else [alias.name for alias in node.names]
            top |= {"envcheck_" + name for name in named}
        elif isinstance(node, ast.ImportFrom) and node.module != "__future__":
            top.add(node.module.split(".")[0])
    allowed = set(sys.stdlib_module_names) | {"envcheck_" + name for name in siblings}
    assert top <= allowed, top - allowed


def test_child_without_torch_prints_one_result_line_naming_the_error(tmp_path):
    """The dev venv has no torch: a real failure, reported in the protocol, not as a crash. The child runs from a
    run folder, as envcheck runs it: beside the copies of its helpers."""
    done = subprocess.run(
        [sys.executable, str(write_child(tmp_path)), "--code-out", str(tmp_path / "code.py")],
        capture_output=True, text=True, cwd=tmp_path, timeout=60, check=False,
    )
    assert done.returncode == 1
    lines = [line for line in done.stdout.splitlines() if line.startswith(SMOKE_RESULT)]
    assert len(lines) == 1
    result = json.loads(lines[0][len(SMOKE_RESULT):])
    assert set(result) == set(RESULT_SCHEMA)
    assert result["ok"] is False and result["protocol"] == protocol.PROTOCOL
    assert result["phase"] == "import-torch"
    assert result["error"]["type"] == "ModuleNotFoundError"
    assert result["error"]["message"] == "No module named 'torch'"
    assert f"{SMOKE_PHASE}import-torch" in done.stderr
    assert "Traceback" in done.stderr  # the full traceback goes to the log too


def test_parse_child_output_reads_the_result_among_other_lines():
    text = (DATA / "pass-cold-h200.log").read_text(encoding="utf-8")
    result, phase = parse_child_output("noise before\n" + text + "noise after\n")
    assert result["ok"] is True and phase == "done"
    assert result["kernel"].startswith("cutedsl.Sm80TensorOpGemmKernel_")


def test_parse_child_output_without_a_result_keeps_the_last_phase():
    text = (DATA / "timeout-12s.log").read_text(encoding="utf-8")
    assert parse_child_output(text) == (None, "compile")


@pytest.mark.parametrize("line", [SMOKE_RESULT + "{not json", SMOKE_RESULT + "[1, 2]", SMOKE_RESULT.strip()])
def test_parse_child_output_ignores_a_broken_result_line(line):
    assert parse_child_output(f"{SMOKE_PHASE}inputs +1.0\n{line}\n") == (None, "inputs")


def test_find_kernel_in_code_generated_on_the_h200():
    code = (DATA / "nvgemm-output-code-h200.py.txt").read_text(encoding="utf-8")
    call, kernel, fallbacks = find_kernel(code)
    assert call == "nv_universal_gemm_fused_mm_f8e93fd4"
    assert kernel == "cutedsl.Sm80TensorOpGemmKernel_ttt_ABFloat16_BBFloat16_outBFloat16_accFloat32_tile64x64x32"
    assert fallbacks == []


@pytest.mark.parametrize(
    "code, expected",
    [
        # the kernel named only in a comment or the autotune table: still a cutedsl.* name
        ("x = async_compile.nv_universal_gemm('nv_universal_gemm_fused_mm_ab12', r'''\n# cutedsl.Sm80Foo_tile\n''')",
         ("nv_universal_gemm_fused_mm_ab12", "cutedsl.Sm80Foo_tile", [])),
        # cuBLAS computed it: no nv_universal_gemm call
        ("extern_kernels.mm(arg0_1, arg1_1, out=buf0)", (None, None, ["cuBLAS (extern_kernels.mm)"])),
        # Triton computed it
        ("triton_tem_fused_mm_0 = async_compile.triton('triton_tem_fused_mm_0', '''...''')", (None, None, ["Triton"])),
        ("", (None, None, [])),
    ],
)
def test_find_kernel_table(code, expected):
    assert find_kernel(code) == expected


@pytest.mark.parametrize(
    "error, reference, dtype, ok",
    [
        (0.236, 70.0, "bfloat16", True),  # what the H200 run measured: a bf16 rounding of values near 64
        (1.13, 70.0, "bfloat16", True),  # the bound: 1e-2 + 1.6e-2 * 70
        (1.2, 70.0, "bfloat16", False),
        (0.1, 70.0, "float16", True),
        (0.2, 70.0, "float16", False),  # fp16 rounds 8x finer than bf16
        (0.0, 0.0, "bfloat16", True),
    ],
)
def test_tolerance_table(error, reference, dtype, ok):
    assert within_tolerance(error, reference, dtype) is ok


def test_stack_key_follows_versions_and_every_cutlass_api_source_file(tmp_path, monkeypatch):
    package = tmp_path / "cutlass_api"
    (package / "providers").mkdir(parents=True)
    (package / "__init__.py").write_text("__version__ = '0.1.0a1'\n")
    (package / "providers" / "gemm.py").write_text("A = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    versions = {"torch": "2.11.0", "nvidia-cutlass-dsl": "4.3.5"}
    first = lookup.stack_key(versions)
    assert lookup.stack_key(dict(versions)) == first
    assert lookup.stack_key({**versions, "nvidia-cutlass-dsl": "4.4.0"}) != first
    (package / "providers" / "gemm.py").write_text("A = 22\n")  # an edited checkout, same version
    assert lookup.stack_key(versions) != first


@pytest.mark.parametrize("capability", [(10, 0), (12, 0)])
def test_the_kernel_lookup_is_never_seeded_at_or_above_cc_10(tmp_path, capability):
    marker = tmp_path / "marker.json"
    marker.write_text(json.dumps({"key": "anything"}))
    assert lookup.seed_kernel_lookup(capability, str(marker), {}) == "inductor"


def test_the_kernel_lookup_is_not_seeded_without_a_marker(tmp_path):
    assert lookup.seed_kernel_lookup((9, 0), str(tmp_path / "none.json"), {}) == "inductor"
