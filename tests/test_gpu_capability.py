"""--gpu-capability X.Y: judge for a GPU that is not here (a CPU-only image build for an H100 cluster, CI, the tests).
One parser for every command that judges or plans for a GPU (doctor, fix, explain --python, bundle --only-missing);
bad values exit 2 naming the flag; the fact goes through gather (a Gpu whose source is "given"); the report says the
GPU was given, not seen; doctor's fix command carries it; fix plans for it."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from wheelfactory import install, make_venv, operators_wheels

from envcheck.cli import main
from envcheck.commands.doctor import DoctorOptions, fix_command
from envcheck.commands.fix import FixOptions, Io, run_fix
from envcheck.gather import Sources, gather
from envcheck.model import GIVEN, capability_of


@pytest.mark.parametrize("text, capability", [("9.0", (9, 0)), ("12.1", (12, 1)), ("7.5", (7, 5)), ("10.7", (10, 7)),
                                              ("99.9", (99, 9)), ("1.0", (1, 0))])
def test_a_capability_reads_as_major_and_minor(text, capability):
    assert capability_of(text) == capability


@pytest.mark.parametrize("text", ["9", "9.0.1", "abc", "-1.0", "100.0", "0.9", "09.0", "9.10", " 9.0", "9.0 ", "9,0", ""])
def test_anything_else_is_refused(text):
    with pytest.raises(ValueError):
        capability_of(text)


@pytest.mark.parametrize("command", [
    ["doctor", "--no-gpu"], ["fix", "--dry-run", "--no-gpu"], ["explain", "--python", "python3", "/dev/null"],
    ["bundle", "-o", "b.tar", "--only-missing", "--python", "python3"],
])
@pytest.mark.parametrize("value", ["9", "9.0.1", "abc", "-1.0", "100.0"])
def test_every_command_refuses_a_bad_capability_naming_the_flag(command, value, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main([*command, f"--gpu-capability={value}"]) == 2
    err = capsys.readouterr().err
    assert f"--gpu-capability {value!r}: expected a compute capability MAJOR.MINOR" in err
    assert not list(tmp_path.iterdir())  # nothing was made


def test_a_bad_capability_with_json_answers_json(capsys):
    assert main(["doctor", "--json", "--gpu-capability", "abc"]) == 2
    data = json.loads(capsys.readouterr().out)
    assert data["status"] == "error" and "--gpu-capability" in data["message"]


def test_bundle_reads_it_only_with_only_missing(capsys, tmp_path):
    assert main(["bundle", "-o", str(tmp_path / "b.tar"), "--gpu-capability", "9.0"]) == 2
    assert "--gpu-capability is read only with --only-missing" in capsys.readouterr().err


def test_the_gpu_given_is_a_fact_gathered_with_its_source():
    made = gather(Sources(gpu_capabilities=((9, 0), (10, 0), (9, 0))))
    assert [(g.capability, g.source) for g in made.given_gpus] == [((9, 0), GIVEN), ((10, 0), GIVEN)]
    assert made.gpus == made.given_gpus  # they win over whatever NVML sees


def test_doctor_judges_for_it_and_says_so(capsys):
    assert main(["doctor", "--no-gpu", "--gpu-capability", "9.0", "--gpu-capability", "12.0", "--json",
                 "--profile", "torch-2.14-operators"]) in (0, 1)
    data = json.loads(capsys.readouterr().out)
    assert [(g["capability"], g["source"]) for g in data["facts"]["given_gpus"]] == [([9, 0], "given"), ([12, 0], "given")]
    check = {c["id"]: c for c in data["checks"]}["gpu.compute-capability"]
    assert check["status"] == "warn"
    assert "compute capability 9.0 (given with --gpu-capability, not seen here)" in check["found"]
    assert "compute capability 12.0 (given with --gpu-capability, not seen here)" in check["found"]
    assert check["evidence"]["combination"][0] == ["compute capability", "9.0"]
    main(["doctor", "--no-gpu", "--gpu-capability", "9.0", "--profile", "torch-2.14-operators"])
    header = capsys.readouterr().out.split("\n\n")[0]  # above the checks, however long the target's path wraps it
    assert "  judged for compute capability 9.0: given with --gpu-capability, not seen here" in header.splitlines()


def test_without_it_no_gpu_skips_the_gpu_check(capsys):
    main(["doctor", "--no-gpu", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert data["facts"]["given_gpus"] == []
    assert {c["id"]: c["status"] for c in data["checks"]}["gpu.compute-capability"] == "skip"


def test_doctors_fix_command_carries_the_gpu_given():
    argv = fix_command("/v/bin/python", DoctorOptions(no_gpu=True, gpu_capabilities=((9, 0), (10, 7))))
    assert argv == ("envcheck", "fix", "--python", "/v/bin/python", "--no-gpu", "--gpu-capability=9.0", "--gpu-capability=10.7")
    assert main(["fix", "--help"]) == 0


@pytest.fixture(scope="module")
def cu12_only(tmp_path_factory) -> Path:
    """torch 2.14.1 (cu130) with a plain `pip install nvidia-cutlass-dsl` (-libs-cu12 only) and the operators."""
    wheels = operators_wheels(tmp_path_factory.mktemp("wheels"))
    python = make_venv(tmp_path_factory.mktemp("venv") / "v")
    install(python, wheels, "torch==2.14.1+cu130", "nvidia-cutlass-dsl==4.8.1", "nvidia-cutlass-operators==0.3.0",
            "torch-c-dlpack-ext", "nvidia-matmul-heuristics")
    return python


@pytest.mark.slow
@pytest.mark.parametrize("capability, failing", [("9.0", False), ("10.7", True)])
def test_fix_plans_for_the_gpu_given(cu12_only, capability, failing):
    """The cu12-only DSL is a recipe warning on 9.0 and a failure on 10.7: fix plans the [cu13] extra for both (it
    plans for warnings too) and names the check it fixes as failing only where it breaks."""
    out, err = io.StringIO(), io.StringIO()
    options = FixOptions(python=str(cu12_only), dry_run=True, as_json=True, no_gpu=True, gpu_capabilities=(capability_of(capability),))
    assert run_fix(options, Io(out=out, err=err)) in (0, 1), err.getvalue()
    plan = json.loads(out.getvalue())["plan"]
    assert ("cutedsl.importable" in plan["failing"]) is failing
    assert [step["commands"][0][-2:] for step in plan["steps"]] == [["nvidia-cutlass-dsl[cu13]>=4.8.0", "torch==2.14.1+cu130"]]


@pytest.mark.parametrize("capabilities, carried", [((), False), (((9, 0),), False), (((10, 7),), True)])
def test_bundle_only_missing_carries_what_the_gpu_given_needs(cu12_only, capabilities, carried):
    """The cu12-only DSL is a recipe deviation on 9.0 and breaks on 10.7 (its CUDA 12.9 build refuses sm_107a): for a
    Rubin the DSL installed is missing (the bundle carries nvidia-cutlass-dsl[cu13]), below it one the target may keep.
    (The recipe's DSL 4.4.0 on a B200 was this test's case: 4.4 still exports ProxyKind, so it is a recipe deviation
    there too.)"""
    from envcheck.commands.bundle import _present
    from envcheck.profile import load_builtin

    present, _ = _present(str(cu12_only), load_builtin("torch-2.14-operators"), lambda text: None, capabilities)
    assert ("nvidia-cutlass-dsl" not in present) is carried