"""run_smoke and the smoke command, with real child processes: the real child in an interpreter without torch and on a
simulated GPU (tests/data/bench/fake_gpu), and small children that pass (replaying the H200's output), hang, or crash
with a signal."""

from __future__ import annotations

import json
import os
import sys
import textwrap
import time
from pathlib import Path

import pytest

import factsbuilder as fb
from processes import gone_soon
from envcheck.commands.smoke import smoke_command
from envcheck.model import Failure, ProfileChoice, SmokeResult, Status
from envcheck.render.smoke import render_text
from envcheck.runner import LOOKUP_MARKER
from envcheck.smoke import child_environment, run_smoke, smoke_backends

DATA = Path(__file__).parent / "data" / "smoke"
FAKE_GPU = Path(__file__).parent / "data" / "bench" / "fake_gpu"  # torch, cutlass and cutlass_api on a simulated GPU
H200 = fb.gpu(capability=(9, 0), name="NVIDIA H200")
GOOD = fb.facts(driver=fb.driver(gpus=[H200]))  # the facts say "go": whatever the child finds is the outcome
PY = sys.executable  # the dev venv: Python 3.11, no torch


def child(tmp_path: Path, body: str) -> Path:
    script = tmp_path / "child.py"
    script.write_text(textwrap.dedent(body), encoding="utf-8")
    return script


def replay(tmp_path: Path, log: str, **changes) -> Path:
    """A child that prints what the real child printed on the H200, result line included (changed as asked)."""
    text = (DATA / log).read_text(encoding="utf-8")
    lines = []
    for line in text.splitlines():
        if line.startswith("ENVCHECK-SMOKE-RESULT "):
            result = json.loads(line.split(" ", 1)[1])
            for key, value in changes.items():
                result[key] = {**result[key], **value} if isinstance(value, dict) else value
            line = "ENVCHECK-SMOKE-RESULT " + json.dumps(result)
        if not line.startswith("#"):
            lines.append(line)
    return child(tmp_path, f"import sys\nsys.stdout.write({chr(10).join(lines) + chr(10)!r})\n")


def cache(tmp_path: Path) -> Path:
    return tmp_path / "cache"


# --------------------------------------------------------------------------------------------------------------
# Without a GPU, and what the facts already know


def test_skip_without_a_gpu_in_a_second(policy, tmp_path):
    facts = fb.facts(driver=Failure("driver", "NVML library not found (libnvidia-ml.so.1): no NVIDIA driver is installed here"))
    began = time.monotonic()
    result = run_smoke(PY, facts, policy, timeout=60, cache_dir=cache(tmp_path))
    assert time.monotonic() - began < 1
    assert result.status is Status.SKIP and result.exit_code == 1  # a skip proved nothing
    assert result.cause_id == "no-gpu" and "NVML library not found" in result.cause
    assert result.log is None and not (cache(tmp_path) / "smoke").exists()  # no child was started


def test_missing_cutlass_api_fails_without_a_compile(policy, tmp_path):
    facts = fb.facts(driver=fb.driver(gpus=[H200]), interpreter=fb.interpreter(modules={"cutlass_api": None}))
    result = run_smoke(PY, facts, policy, timeout=60, cache_dir=cache(tmp_path))
    assert result.status is Status.FAIL and result.exit_code == 1
    assert result.cause_id == "cutlass-api-missing" and result.remedy.automatic
    assert not (cache(tmp_path) / "smoke").exists()


# --------------------------------------------------------------------------------------------------------------
# The real child


def test_real_child_without_torch_is_a_named_failure_with_a_log(policy, tmp_path):
    result = run_smoke(PY, GOOD, policy, timeout=60, cache_dir=cache(tmp_path))
    assert result.status is Status.FAIL
    assert result.cause_id == "torch-missing" and "No module named 'torch'" in result.evidence
    log = Path(result.log)
    assert log.is_file() and "ModuleNotFoundError: No module named 'torch'" in log.read_text(encoding="utf-8")
    assert log.parent.parent == cache(tmp_path) / "smoke"
    assert (log.parent / "smoke_child.py").is_file()  # the exact script that ran is kept beside its log
    assert result.elapsed_s is not None and result.elapsed_s < 30


def test_an_interpreter_that_does_not_exist(policy, tmp_path):
    result = run_smoke(str(tmp_path / "no-python"), GOOD, policy, timeout=60, cache_dir=cache(tmp_path))
    assert result.status is Status.FAIL and result.cause_id == "interpreter"


def on_fake_gpu(policy, tmp_path, library=False, **env):
    return run_smoke(PY, GOOD, policy, timeout=60, cache_dir=cache(tmp_path), library=library,
                     env={**os.environ, "PYTHONPATH": str(FAKE_GPU), **env})


def test_real_child_on_a_simulated_gpu_proves_the_kernel_and_seeds_the_lookup_the_second_time(policy, tmp_path):
    """The whole run of the real child from its run folder: CUDA, the imports, the compile under Inductor's settings,
    the kernel read from the generated code, the check against the fp32 reference, the timed calls, the marker of
    the full kernel enumeration; the second run on the same stack fills the lookup from it."""
    first = on_fake_gpu(policy, tmp_path)
    assert first.status is Status.PASS, (first.summary, Path(first.log).read_text())
    assert (first.kernel, first.call) == ("cutedsl.Sm80TensorOpGemmKernel_tnt_fake", "nv_universal_gemm_fused_mm_0")
    assert first.gpu == "NVIDIA H200 (9.0)" and first.max_error == 0 and first.kernel_lookup == "inductor"
    assert [phase for phase, _ in first.timings] == ["import-torch", "cuda", "import-cutlass", "kernel-lookup", "inputs",
                                                     "compile", "check", "run", "done"]
    assert first.warm is False and first.run_s > 0  # the fake's counters: one FX graph compiled
    assert (cache(tmp_path) / "inductor" / LOOKUP_MARKER).is_file()
    code = (Path(first.log).parent / "output_code.py").read_text(encoding="utf-8")
    assert "async_compile.nv_universal_gemm('nv_universal_gemm_fused_mm_0'" in code
    second = on_fake_gpu(policy, tmp_path)
    assert second.status is Status.PASS and second.kernel_lookup == "seeded"


def test_real_child_on_a_simulated_gpu_with_a_wrong_kernel_fails_naming_it(policy, tmp_path):
    result = on_fake_gpu(policy, tmp_path, FAKE_WRONG="1")
    assert result.status is Status.FAIL and result.cause_id == "wrong-result"
    assert result.evidence.startswith("SmokeWrongResult: max |out - ref| = 100 exceeds bfloat16's tolerance")


def test_real_child_on_a_simulated_gpu_calls_the_library_directly(policy, tmp_path):
    result = on_fake_gpu(policy, tmp_path, library=True)
    assert result.status is Status.PASS, (result.summary, Path(result.log).read_text())
    assert result.library == "cutlass_api" and result.kernel == "cutedsl.Sm80TensorOpGemmKernel_fake_tile128x128x32"
    assert result.call is None and result.max_error == 0 and result.tried == ()


# --------------------------------------------------------------------------------------------------------------
# Children that pass, hang and crash


def test_pass_replayed_from_the_h200(policy, tmp_path):
    script = replay(tmp_path, "pass-cold-h200.log")
    result = run_smoke(PY, GOOD, policy, timeout=60, cache_dir=cache(tmp_path), child=script)
    assert result.status is Status.PASS and result.exit_code == 0
    assert result.kernel == "cutedsl.Sm80TensorOpGemmKernel_ttt_ABFloat16_BBFloat16_outBFloat16_accFloat32_tile64x64x32"
    assert result.call == "nv_universal_gemm_fused_mm_f8e93fd4"
    assert result.gpu == "NVIDIA H200 (9.0)"
    assert result.compile_s == pytest.approx(14.324) and result.run_s > 0 and result.max_error < 1
    assert result.warm is False and result.backends == "NVGEMM"
    assert "Sm80TensorOpGemmKernel" in result.summary and "(cold)" in result.summary
    assert dict(result.versions)["nvidia-cutlass-dsl"] == "4.3.5"


S4 = Path(__file__).parent / "data" / "h200-s4"  # torch 2.14.1 on the H200: a model's GEMMs (STACK.md section 9)


def lost_to_the_workers(tmp_path: Path) -> Path:
    """The H200's passing smoke, after the real log of a compile whose precompile workers built three of its nine
    candidates for sm_100a (model-nv16-arch-errors.log's first GEMM: its failures and its autotuning table)."""
    lines = (S4 / "model-nv16-arch-errors.log").read_text(encoding="utf-8").splitlines()
    first_table = next(i for i, line in enumerate(lines) if line.startswith("SingleProcess AUTOTUNE"))
    script = replay(tmp_path, "pass-cold-h200.log")
    text = script.read_text(encoding="utf-8")
    script.write_text(f"import sys\nsys.stderr.write({chr(10).join(lines[:first_table + 1]) + chr(10)!r})\n" + text,
                      encoding="utf-8")
    return script


def test_a_pass_that_lost_candidates_for_an_environment_cause_is_a_warning_with_its_remedy(policy, tmp_path):
    result = run_smoke(PY, GOOD, policy, timeout=60, cache_dir=cache(tmp_path), child=lost_to_the_workers(tmp_path))
    assert result.status is Status.WARN and result.exit_code == 0 and result.cause_id == "dsl-arch-mismatch"
    said = "3 of 9 NVGEMM candidates failed to compile: dsl-arch-mismatch (error: expects arch to be sm_90a, but got sm_100a)"
    assert said in result.summary and said in result.cause
    assert "CUTE_DSL_ARCH=sm_90a" in result.remedy.text
    [gemm] = result.candidates
    assert (gemm.op, gemm.offered, gemm.failed, gemm.left, gemm.strides) == ("mm", 9, 3, 6, "[4096, 1], [1, 4096]")
    data = result.to_dict()
    assert data["candidates"]["gemms"][0]["lost"][0] == {
        "cause": "dsl-arch-mismatch", "count": 3, "first_line": "error: expects arch to be sm_90a, but got sm_100a",
        "where": "precompile worker", "environment": True}
    assert data["candidates"]["lost"] == said and data["cause"]["id"] == "dsl-arch-mismatch"
    text = render_text(result)
    assert "candidates mm(16x4096, 4096x14336) [4096, 1], [1, 4096]: 3 of 9 failed to compile (dsl-arch-mismatch x3), " \
           "6 left" in text and "CUTE_DSL_ARCH=sm_90a" in text


def test_a_pass_that_lost_candidates_to_a_kernels_own_limit_counts_them_and_passes(policy, tmp_path):
    script = lost_to_the_workers(tmp_path)
    script.write_text(script.read_text(encoding="utf-8").replace("expects arch to be", "the kernel wants"), encoding="utf-8")
    result = run_smoke(PY, GOOD, policy, timeout=60, cache_dir=cache(tmp_path), child=script)
    # a failure no signature names is a kernel's own limit: counted and shown, not a warning
    assert result.status is Status.PASS and result.candidates[0].lost[0].cause_id == "unexplained"
    assert "3 of 9 failed to compile (unexplained x3)" in render_text(result)


def test_warm_pass_replayed_from_the_h200(policy, tmp_path):
    result = run_smoke(PY, GOOD, policy, timeout=60, cache_dir=cache(tmp_path), child=replay(tmp_path, "pass-warm-h200.log"))
    assert result.status is Status.PASS and result.warm is True and result.kernel_lookup == "seeded"
    assert result.compile_s == pytest.approx(2.333) and "(warm)" in result.summary
    assert "kernel lookup seeded" in render_text(result)
    assert result.to_dict()["cache"] == {"dir": str(cache(tmp_path) / "inductor"), "warm": True, "kernel_lookup": "seeded"}
    # nothing was autotuned: the candidates are not known from this run, and the text says why, not "none lost"
    assert result.candidates == () and "none compiled in this run: Inductor's caches answered" in render_text(result)


def test_a_pass_with_a_dsl_outside_the_policy_is_flagged(policy, tmp_path):
    script = replay(tmp_path, "pass-cold-h200.log", versions={"nvidia-cutlass-dsl": "4.4.0"})
    result = run_smoke(PY, GOOD, policy, timeout=60, cache_dir=cache(tmp_path), child=script)
    assert result.status is Status.WARN and result.exit_code == 0
    assert result.cause_id == "dsl-outside-policy" and "4.4.0" in result.summary
    assert policy.cutedsl.requirement in result.remedy.commands[0]


def test_a_pass_whose_code_names_no_kernel_is_flagged(policy, tmp_path):
    script = replay(tmp_path, "pass-cold-h200.log", kernel=None)
    result = run_smoke(PY, GOOD, policy, timeout=60, cache_dir=cache(tmp_path), child=script)
    assert result.status is Status.WARN and result.cause_id == "kernel-unnamed"


def test_a_failure_replayed_from_the_h200(policy, tmp_path):
    script = replay(tmp_path, "cutedsl-backend-cc90.log")
    result = run_smoke(PY, GOOD, policy, timeout=60, cache_dir=cache(tmp_path), child=script, backends="CUTEDSL")
    assert result.status is Status.FAIL and result.cause_id == "no-valid-choices" and "10.x only" in result.cause


def test_timeout_kills_the_whole_process_group(policy, tmp_path):
    pid_file = tmp_path / "grandchild.pid"
    script = child(tmp_path, f"""
        import subprocess, sys, time
        helper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
        open({str(pid_file)!r}, "w").write(str(helper.pid))
        print("envcheck-smoke: phase compile +0.1", file=sys.stderr, flush=True)
        time.sleep(120)
    """)
    began = time.monotonic()
    result = run_smoke(PY, GOOD, policy, timeout=2, cache_dir=cache(tmp_path), child=script)
    assert time.monotonic() - began < 15
    assert result.status is Status.FAIL and result.cause_id == "timeout"
    assert "2 s" in result.cause and "compile" in result.cause
    grandchild = int(pid_file.read_text())
    assert gone_soon(grandchild), f"process {grandchild} outlived the timeout"


def test_a_child_killed_by_sigsegv(policy, tmp_path):
    script = child(tmp_path, """
        import os, signal, sys
        print("envcheck-smoke: phase compile +0.1", file=sys.stderr, flush=True)
        os.kill(os.getpid(), signal.SIGSEGV)
    """)
    result = run_smoke(PY, GOOD, policy, timeout=30, cache_dir=cache(tmp_path), child=script)
    assert result.status is Status.FAIL and result.cause_id == "killed-by-signal"
    assert "SIGSEGV" in result.cause and "during compile" in result.cause


# --------------------------------------------------------------------------------------------------------------
# The cache and the environment


def test_fresh_empties_envchecks_caches_only(policy, tmp_path):
    root = cache(tmp_path)
    for name in ("inductor", "triton", "cutedsl", "cutlass"):
        (root / name).mkdir(parents=True)
        (root / name / "old").write_text("x")
    run_smoke(PY, GOOD, policy, timeout=60, cache_dir=root, fresh=True)
    assert not any((root / name / "old").exists() for name in ("inductor", "triton", "cutedsl"))
    assert (root / "cutlass" / "old").exists()  # the CUTLASS checkout is not a cache of the smoke run


def test_the_child_gets_the_lookup_marker_inside_inductors_cache(policy, tmp_path):
    script = child(tmp_path, "import sys\nprint(sys.argv[1:])\n")
    result = run_smoke(PY, GOOD, policy, timeout=30, cache_dir=cache(tmp_path), child=script)
    argv = Path(result.log).read_text(encoding="utf-8")
    assert str(cache(tmp_path) / "inductor" / LOOKUP_MARKER) in argv  # so --fresh forgets it too


def test_child_environment():
    base = {"PATH": "/bin", "PYTHONPATH": "/x", "TORCHINDUCTOR_FORCE_DISABLE_CACHES": "1", "PYTHONDONTWRITEBYTECODE": "1",
            "TORCHINDUCTOR_MAX_AUTOTUNE_GEMM_BACKENDS": "ATEN,TRITON", "TORCHINDUCTOR_CACHE_DIR": "/elsewhere"}
    env = child_environment(base, Path("/c"), "NVGEMM").variables
    assert env["PATH"] == "/bin" and env["PYTHONPATH"] == "/x"  # the user's environment is what is tested
    assert "TORCHINDUCTOR_FORCE_DISABLE_CACHES" not in env and "PYTHONDONTWRITEBYTECODE" not in env
    assert env["TORCHINDUCTOR_MAX_AUTOTUNE_GEMM_BACKENDS"] == "NVGEMM"
    assert env["TORCHINDUCTOR_CACHE_DIR"] == "/c/inductor" and env["TRITON_CACHE_DIR"] == "/c/triton"
    assert env["CUTE_DSL_CACHE_DIR"] == "/c/cutedsl"
    assert env["PYTHONUNBUFFERED"] == "1"
    # the GEMM compiles as the user's process compiles it: torch's own number of candidates and its compile workers
    # (with one candidate, in process, the workers' losses of STACK.md section 9 never showed)
    assert "TORCHINDUCTOR_NVGEMM_MAX_PROFILING_CONFIGS" not in env and "TORCHINDUCTOR_COMPILE_THREADS" not in env
    base_set = child_environment({**base, "TORCHINDUCTOR_COMPILE_THREADS": "1"}, Path("/c"), "NVGEMM").variables
    assert "TORCHINDUCTOR_COMPILE_THREADS" not in base_set  # the caller's is cleared too: the run is the same anywhere


@pytest.mark.parametrize("capability, backends", [((9, 0), "NVGEMM"), ((10, 0), "NVGEMM,CUTEDSL"), ((10, 3), "NVGEMM,CUTEDSL"),
                                                  ((12, 0), "NVGEMM"), (None, "NVGEMM")])
def test_backends(policy, capability, backends):
    assert smoke_backends(policy, capability) == backends


# --------------------------------------------------------------------------------------------------------------
# Output


def test_to_dict_is_json_with_status_kernel_timings_and_cause(policy, tmp_path):
    result = run_smoke(PY, GOOD, policy, timeout=60, cache_dir=cache(tmp_path))
    data = json.loads(json.dumps(result.to_dict()))
    assert data["status"] == "fail"
    assert set(data["timings"]) == {"compile_s", "run_s", "elapsed_s", "phases"}
    assert data["cause"]["id"] == "torch-missing" and data["remedy"]["commands"]
    assert data["log"] == result.log and "kernel" in data


def test_render_text_of_a_pass_and_a_failure(policy, tmp_path):
    passed = run_smoke(PY, GOOD, policy, timeout=60, cache_dir=cache(tmp_path), child=replay(tmp_path, "pass-cold-h200.log"))
    text = render_text(passed)
    assert text.startswith("smoke  PASS") and "Sm80TensorOpGemmKernel" in text and "14.32 s" in text
    failed = run_smoke(PY, GOOD, policy, timeout=60, cache_dir=cache(tmp_path))
    text = render_text(failed)
    assert "FAIL" in text and "fix" in text and failed.log in text


def test_smoke_command_here_skips_and_a_skip_is_not_a_pass(capsys, monkeypatch):
    """This machine has no NVIDIA driver: the real gatherers, the real command, a skip that exits 1, 0 only when
    --allow-skip says a skip is fine."""
    pytest.importorskip("pynvml")
    code = smoke_command(None, None, timeout=30, as_json=True)
    data = json.loads(capsys.readouterr().out)
    if data["smoke"]["cause"] is None or data["smoke"]["cause"]["id"] != "no-gpu":
        pytest.skip("this machine has a GPU")
    assert code == 1 and data["schema_version"] == 2 and data["smoke"]["status"] == "skip"
    assert set(data["profile"]) == {"id", "reason", "source", "verified"}  # doctor's object
    assert smoke_command(None, None, timeout=30, as_json=True, allow_skip=True) == 0


def test_cli_smoke_json(capsys):
    from envcheck.cli import main

    code = main(["smoke", "--json", "--timeout", "30"])
    data = json.loads(capsys.readouterr().out)
    assert code in (0, 1) and data["smoke"]["status"] in {s.value for s in Status}


def test_smoke_result_is_frozen():
    result = SmokeResult(status=Status.PASS, summary="x")
    with pytest.raises(AttributeError):
        result.status = Status.FAIL  # type: ignore[misc]


def test_doctor_json_and_smoke_json_carry_the_same_typed_smoke_result(policy, tmp_path):
    """Report.smoke is a SmokeResult: one JSON path for doctor --smoke and envcheck smoke, and its remedy is written
    as every finding's remedy is."""
    from envcheck.model import Report, plain
    from envcheck.render import to_json_data

    result = run_smoke(PY, GOOD, policy, timeout=60, cache_dir=cache(tmp_path))
    report = Report(profile=policy.id, target=PY, findings=(), smoke=result)
    assert to_json_data(report)["smoke"] == result.to_dict()
    assert result.to_dict()["remedy"] == plain(result.remedy) and "automatic" in result.to_dict()["remedy"]
    assert report.worst is Status.FAIL and report.exit_code == 1


def test_a_cache_folder_that_cannot_be_written_is_a_usage_error_before_any_child(policy, tmp_path, monkeypatch):
    from envcheck.errors import UsageError

    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("ENVCHECK_CACHE_DIR", str(blocker / "cache"))
    with pytest.raises(UsageError, match=f"ENVCHECK_CACHE_DIR={blocker / 'cache'}"):
        run_smoke(PY, GOOD, policy, timeout=60)


def test_smoke_json_is_dated_by_itself_so_a_contributed_run_keeps_its_day(policy, tmp_path, capsys):
    """A result file copied or touched later (its modification day 2020-01-02) is dated by the day the run wrote
    into it (UTC), which profile/results.py prefers; the CLI's JSON carries the day too."""
    import datetime

    from envcheck.cli import main
    from envcheck.commands.smoke import smoke_data
    from envcheck.profile.results import read_run

    passed = run_smoke(PY, GOOD, policy, timeout=60, cache_dir=cache(tmp_path), child=replay(tmp_path, "pass-cold-h200.log"))
    assert smoke_data(passed, ProfileChoice(policy.id, "named", policy.source), PY, today=datetime.date(2026, 12, 1))["date"] == "2026-12-01"
    path = tmp_path / "run.json"
    path.write_text(json.dumps(smoke_data(passed, ProfileChoice(policy.id, "named", policy.source), PY)), encoding="utf-8")
    os.utime(path, (1577934000, 1577934000))  # 2020-01-02
    today = datetime.datetime.now(datetime.timezone.utc).date().isoformat()
    assert read_run(path, "run.json").date == today
    main(["smoke", "--json", "--timeout", "30"])
    assert json.loads(capsys.readouterr().out)["date"] == today
