"""An aten op NVGEMM has no kernel for (issue 29 item 3): torch 2.15.0's NoValidChoicesError on aten.addmm with NVGEMM
the only backend is not a broken install, and the remedy keeps ATEN (and TRITON) beside NVGEMM. The tracebacks are
real-shaped (tests/data/torch-2.15.0/README.md says how they were made); which ops each stack serves is the profiles'
[[gemm-ops]], read from the wheels. An op NVGEMM serves keeps the generic cause."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from envcheck.causes import Evidence, OpFailure, context_for_log, diagnose, failed_op
from envcheck.causes.log import LogReader, scan
from envcheck.causes.table import parse_signatures
from envcheck.profile import PolicyError, load_builtin

DATA = Path(__file__).parent / "data" / "torch-2.15.0"
RECIPE, OPERATORS = "torch-2.11-nvgemm", "torch-2.14-operators"
NO_KERNEL, GENERIC = "nvgemm-no-kernel-for-op", "no-valid-choices"


def log(name: str) -> str:
    return (DATA / f"{name}.log").read_text(encoding="utf-8")


def ctx(profile: str, capability=None):
    return replace(context_for_log(load_builtin(profile)), capability=capability)


# (log, profile, the GPU it ran on (None: the log does not say), the op, the cause)
TABLE = [
    ("addmm", OPERATORS, None, "addmm", NO_KERNEL),  # the H200's failure, the GPU not said
    ("addmm", OPERATORS, (9, 0), "addmm", NO_KERNEL),
    ("addmm", OPERATORS, (10, 0), "addmm", GENERIC),  # the SM100 EFC kernels serve a bias there
    ("addmm", OPERATORS, (11, 0), "addmm", GENERIC),
    ("addmm", OPERATORS, (12, 0), "addmm", NO_KERNEL),
    ("addmm", RECIPE, (10, 0), "addmm", NO_KERNEL),  # torch 2.11-2.13 offer NVGEMM no addmm at all
    ("linear3d", OPERATORS, None, "addmm", NO_KERNEL),  # a 3-D linear with a bias is flattened to addmm
    ("linear3d", OPERATORS, (10, 3), "addmm", GENERIC),
    ("baddbmm", OPERATORS, (10, 0), "baddbmm", NO_KERNEL),  # no stack offers baddbmm
    ("baddbmm", RECIPE, None, "baddbmm", NO_KERNEL),
    ("mm", OPERATORS, None, "mm", GENERIC),  # ops NVGEMM serves: the generic cause stays
    ("mm", RECIPE, (9, 0), "mm", GENERIC),
    ("bmm", OPERATORS, (9, 0), "bmm", GENERIC),
    ("bmm", RECIPE, None, "bmm", GENERIC),
]


@pytest.mark.parametrize("name, profile, capability, op, cause_id", TABLE)
def test_the_op_and_its_cause(name, profile, capability, op, cause_id):
    text = log(name)
    found = scan(LogReader(io.BytesIO(text.encode())), ctx(profile, capability))
    assert found[0].cause.id == cause_id, [f.cause.id for f in found]
    assert failed_op(text, ctx(profile, capability)) == OpFailure(op, cause_id)


@pytest.mark.parametrize("name, profile, capability, op, cause_id", [row for row in TABLE if row[4] == NO_KERNEL])
def test_the_cause_names_the_op_and_keeps_the_other_backends(name, profile, capability, op, cause_id):
    text = log(name)
    cause = scan(LogReader(io.BytesIO(text.encode())), ctx(profile, capability))[0].cause
    assert f"aten.{op}" in cause.text and "Nothing is missing or broken" in cause.text
    assert cause.evidence == f"target: aten.{op}.default"  # the LoweringException's line that names it
    remedy = cause.remedy
    assert remedy.environment == (("TORCHINDUCTOR_MAX_AUTOTUNE_GEMM_BACKENDS", "ATEN,TRITON,NVGEMM"),)
    assert remedy.commands == (("export", "TORCHINDUCTOR_MAX_AUTOTUNE_GEMM_BACKENDS=ATEN,TRITON,NVGEMM"),)
    assert not remedy.steps and "pip" not in remedy.text  # nothing to reinstall
    if capability is not None:
        assert f"{capability[0]}.{capability[1]}" in cause.text or "only on compute capability" not in cause.text


def test_a_limited_op_says_where_it_is_served():
    cause = scan(LogReader(io.BytesIO(log("addmm").encode())), ctx(OPERATORS))[0].cause
    assert "only on compute capability >=10.0, <11.1" in cause.text and "EFC" in cause.text
    assert "an H100 or H200 is 9.0" in cause.text
    recipe = scan(LogReader(io.BytesIO(log("addmm").encode())), ctx(RECIPE))[0].cause
    assert "offers ATen and Triton choices only" in recipe.text


def test_a_profile_that_lists_no_ops_claims_none_unserved():
    plain = replace(ctx(OPERATORS), policy=replace(load_builtin(OPERATORS), gemm_ops=()))
    assert [f.cause.id for f in scan(LogReader(io.BytesIO(log("baddbmm").encode())), plain)] == [GENERIC]
    assert failed_op(log("baddbmm"), plain).cause_id == GENERIC


@pytest.mark.parametrize("text, op", [
    # the duplicate LoweringException prints after `Found from :` (exc.py:79-81): the op still read
    ("  ))NoValidChoicesError: No choices to select. Provided reason: No choices exist for backend. please consider\n"
     "  target: aten.addmm.default", "addmm"),
    # a launcher's prefix on every line
    ("[rank0]: torch._inductor.exc.InductorError: LoweringException: NoValidChoicesError: No choices to select. "
     "Provided reason: No choices exist for backend.\n[rank0]:   target: aten.baddbmm.default", "baddbmm"),
    # a terminal that wrapped the long message onto a second line
    ("NoValidChoicesError: No choices to select. Provided reason: No choices exist for backend. please consider adding\n"
     " ATEN into max_autotune_gemm_backends config\n  target: aten.addmm.default", "addmm"),
])
def test_variants_no_source_writes(text, op):
    assert failed_op(text, ctx(OPERATORS)) == OpFailure(op, NO_KERNEL)


@pytest.mark.parametrize("text", [
    "  target: aten.addmm.default",  # a target line alone (another LoweringException's)
    "NoValidChoicesError: No choices to select. Provided reason: All choices failed to compile for backend.\n"
    "  target: aten.addmm.default",  # choices were there and failed: NVGEMM has kernels, something broke them
    "NoValidChoicesError: No choices to select. Provided reason: No choices exist for backend.\n  args[0]: x\n"
    "  args[1]: y\n  args[2]: z\n  target: aten.addmm.default",  # too far below to be the same exception's
    "TargetSm 80a is invalid. ArchConditional targets must be Hopper (sm90) or newer\n  target: aten.addmm.default",
])
def test_no_op_failure_where_the_op_had_choices_or_no_exception_names_it(text):
    assert failed_op(text, ctx(OPERATORS)) is None
    assert NO_KERNEL not in [f.cause.id for f in scan(LogReader(io.BytesIO(text.encode())), ctx(OPERATORS))]


def test_the_smoke_s_diagnosis_says_the_same():
    """A child's error (smoke, bench --model): the same table, the same cause."""
    text = log("addmm")
    head, _, _ = text.partition("\n  args[0]")
    error = {"type": "InductorError", "message": head.split("InductorError: ", 1)[1], "traceback": text}
    cause = diagnose(Evidence(result={"ok": False, "error": error}, log="", returncode=1), ctx(OPERATORS, (9, 0)))
    assert cause.id == NO_KERNEL and "aten.addmm" in cause.text
    assert diagnose(Evidence(result={"ok": False, "error": error}, log="", returncode=1),
                    ctx(OPERATORS, (10, 0))).id == GENERIC


def test_a_block_boundary_between_the_exception_and_its_op_line():
    """The line above is read from the block before: a log read a few bytes at a time finds it still."""
    text = log("addmm").encode()
    cut = text.index(b"  target: aten.addmm")  # the block ends right before the op's line
    found = scan(LogReader(io.BytesIO(text), block=cut), ctx(OPERATORS))
    assert found[0].cause.id == NO_KERNEL


@pytest.mark.parametrize("row, expected", [
    ('id = "x"\npatterns = ["a"]\nabove = ""\n', "a regular expression"),
    ('id = "x"\npatterns = ["a"]\nabove = "("\n', "a regular expression"),
    ('id = "x"\npatterns = ["a"]\nabove = 3\n', "a regular expression"),
])
def test_a_bad_above_is_named(row, expected):
    with pytest.raises(PolicyError, match=r"signature\[0\]\.above.*" + expected):
        parse_signatures("[[signature]]\n" + row, "table.toml")


def test_explain_on_the_h200_s_traceback(tmp_path):
    """The issue's case end to end: the stack from the log's own frames, the op named, exit 1, no reinstall."""
    done = subprocess.run([sys.executable, "-m", "envcheck", "explain", str(DATA / "addmm.log"), "--json"],
                          capture_output=True, text=True, timeout=120, env={"HOME": str(tmp_path), "PATH": "/usr/bin"})
    assert done.returncode == 1, done.stderr
    data = json.loads(done.stdout)
    assert data["profile"]["id"] == OPERATORS and "torch 2.15.0's" in data["profile"]["reason"]
    cause = data["causes"][0]
    assert cause["id"] == NO_KERNEL and cause["evidence"]["text"] == "target: aten.addmm.default"
    assert cause["remedy"]["environment"] == [["TORCHINDUCTOR_MAX_AUTOTUNE_GEMM_BACKENDS", "ATEN,TRITON,NVGEMM"]]
