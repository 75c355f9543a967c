"""envcheck.inside.protocol: how a child names a failure in its result line, and how the parent reads a progress
line. The children themselves run for real in test_smoke_child, test_smoke_library and test_bench."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from envcheck.inside import protocol
from envcheck.runner import SMOKE_SCRIPTS, write_scripts


class Foreign(Exception):
    """An error of some other module (torch's, the DSL's): named with its module."""


@pytest.mark.parametrize("exc, name", [
    (ModuleNotFoundError("No module named 'torch'"), "ModuleNotFoundError"),
    (KeyboardInterrupt(), "KeyboardInterrupt"),
    (protocol.SmokeNoCuda("no device"), "SmokeNoCuda"),
    (protocol.SmokeFellBack("Triton"), "SmokeFellBack"),
    (protocol.SmokeWrongResult("max error 3"), "SmokeWrongResult"),
    (protocol.SmokeNoKernel("none"), "SmokeNoKernel"),
    (Foreign("x"), f"{__name__}.Foreign"),
])
def test_error_record_names_builtin_and_envcheck_errors_bare(exc, name):
    record = protocol.error_record(exc, "Traceback ...")
    assert record == {"type": name, "message": str(exc), "traceback": "Traceback ..."}


def test_error_record_keeps_the_end_of_a_long_traceback_and_the_start_of_a_long_message():
    record = protocol.error_record(ValueError("m" * 9000 + "tail"), "head" + "t" * 13000 + "END")
    assert record["message"] == "m" * 8000
    assert len(record["traceback"]) == 12000 and record["traceback"].endswith("END")


@pytest.mark.parametrize("line, said", [
    ("envcheck-smoke: phase compile +12.345", "compile +12.345"),
    ("envcheck-smoke: phase ", ""),
    ("envcheck-bench: phase shape 1/2 square +3.000", None),  # another child's prefix
    ("  envcheck-smoke: phase compile +1.0", None),  # only at the start of a line
    ("", None),
])
def test_phase_of(line, said):
    assert protocol.phase_of(line, protocol.SMOKE_PHASE) == said


def test_a_failure_in_the_run_folder_copy_is_named_as_in_envchecks_own_process(tmp_path):
    """In a run folder the protocol is the envcheck_protocol copy, not envcheck.inside.protocol: its errors are named
    bare all the same (smoke's table of failure signatures and doctor's evidence line read "SmokeNoCuda: ...")."""
    write_scripts(tmp_path, SMOKE_SCRIPTS)
    code = ("import envcheck_gemm as gemm, envcheck_protocol as protocol, types\n"
            "run = protocol.Recorder(('protocol', 'ok', 'phase', 'timings', 'error'), protocol.SMOKE_PHASE)\n"
            "torch = types.SimpleNamespace(__version__='2.11.0+cu130', version=types.SimpleNamespace(cuda='13.0'),\n"
            "                              cuda=types.SimpleNamespace(is_available=lambda: False))\n"
            "run.phase('cuda')\n"
            "protocol.run_guarded(lambda: gemm.require_cuda(torch), run)\n"
            "run.emit(protocol.SMOKE_RESULT, run.result)\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=60,
                          check=True)
    (result,) = protocol.result_lines(done.stdout, protocol.SMOKE_RESULT)
    assert result["phase"] == "cuda" and result["ok"] is False and result["protocol"] == protocol.PROTOCOL
    assert result["error"]["type"] == "SmokeNoCuda"
    assert result["error"]["message"] == ("torch 2.11.0+cu130 (CUDA build 13.0) sees no CUDA device "
                                          "(torch.cuda.is_available() is False)")
    assert "Traceback" in done.stderr and "envcheck-smoke: phase cuda +" in done.stderr
    assert json.loads(done.stdout.strip().split(" ", 1)[1]) == result  # the result line is the whole of stdout
