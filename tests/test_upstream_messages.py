"""explain on every environment message of the upstream sources (issue 25 item 1): tests/data/upstream-messages.toml
holds each message's real text (copied from the wheel's source, produced by running the real wheels here, or seen on
the H200) with its file and line, and the cause it must be; each is read as a log is, alone and in the forms no
source writes (a test runner's or a launcher's prefix, a logging line, a traceback around it). The issue's examples
are named one by one. Then the profile explain chooses from a log's own lines, and remedies that name the compute
capability they need."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from envcheck.causes import SIGNATURES, context_for_log
from envcheck.causes.log import LogReader, scan
from envcheck.causes.upstream import UPSTREAM_EXPLANATIONS
from envcheck.profile import candidates, load_builtin
from envcheck.userfile import tomllib

TABLE = Path(__file__).parent / "data" / "upstream-messages.toml"
MESSAGES = tomllib.loads(TABLE.read_text(encoding="utf-8"))["message"]
RECIPE, OPERATORS = "torch-2.11-nvgemm", "torch-2.14-operators"


def causes(text: str, profile: str = RECIPE) -> tuple:
    return scan(LogReader(io.BytesIO(text.encode())), context_for_log(load_builtin(profile)))


def ids(text: str, profile: str = RECIPE) -> list[str]:
    return [found.cause.id for found in causes(text, profile)]


@pytest.mark.parametrize("entry", MESSAGES, ids=[f"{m['cause']}-{i}" for i, m in enumerate(MESSAGES)])
@pytest.mark.parametrize("profile", [RECIPE, OPERATORS])
def test_every_upstream_message_is_its_cause(entry, profile):
    found = causes(entry["text"].strip("\n"), profile)
    assert found and found[0].cause.id == entry["cause"], (entry["source"], [f.cause.id for f in found])
    cause = found[0].cause
    assert cause.text and cause.remedy is not None and cause.remedy.text, entry["source"]
    assert cause.evidence and cause.evidence in entry["text"]  # the line that shows it, as the log has it


def test_the_table_names_where_each_message_comes_from_and_how_it_was_read():
    for entry in MESSAGES:
        assert set(entry) == {"cause", "source", "how", "text"}, entry
        assert " · " in entry["source"] and re.search(r":\d+", entry["source"]) or entry["how"].startswith("seen"), entry
        assert entry["how"].split(":")[0].split(" ")[0] in ("produced", "copied", "seen"), entry
    known = {s.id for s in SIGNATURES}
    assert {m["cause"] for m in MESSAGES} <= known
    # every row this table brought has its messages here
    assert set(UPSTREAM_EXPLANATIONS) <= {m["cause"] for m in MESSAGES}


@pytest.mark.parametrize("log, cause", [
    # the CUDA 12.9 build refusing sm_107a, its message wrapped onto a second line
    ("  error: Unsupported GPU architecture 'sm_107a' with CUDA toolkit version 'DSLCudaVersion(major=12,\n"
     "         minor=9)'.", "dsl-toolkit-refuses-gpu"),
    ("error[CONFIG_UNSUPPORTED_ARCH]: Unsupported GPU architecture 'sm_120a'. This kernel is only compatible with: "
     "[base_dsl.Arch.sm_100a]", "dsl-arch-unsupported"),
    ("CONFIG_UNSUPPORTED_ARCH", "dsl-arch-unsupported"),
    ("error[CONFIG_MISSING_TVM_FFI]: TVM FFI is not installed, but TVM FFI support was requested.", "tvm-ffi-missing"),
    # a driver below cuda-bindings' minimum
    ("UserWarning: cuda-bindings was built for CUDA major version 13, but the NVIDIA driver only supports up to CUDA "
     "12. Some cuda-bindings features may not work correctly.", "cuda-driver"),
    ("DSLCudaRuntimeError: CUDA_ERROR_INSUFFICIENT_DRIVER (error code: 35)", "cuda-driver"),
    ("ValueError: Invalid CUTE_DSL_ARCH: sm100. Invalid TargetSm: 'sm100'. Expected form: '100', '100a', '100f'",
     "dsl-arch-invalid"),
    ("ImportError: cannot import name 'efc' from 'cutlass.operators.providers.cutedsl.evt' (unknown location)",
     "operators-too-old"),
    ("W1201 torch/_inductor/codegen/nv_universal_gemm/nv_universal_gemm_kernel.py:175] Failed to query "
     "max_active_clusters", "max-active-clusters"),
    ("NVGEMM subprocess precompile pool unusable (BrokenProcessPool); falling back to lazy in-process compile",
     "precompile-pool-unusable"),
    ("TargetSm 80a is invalid", "target-sm-invalid"),  # on its own line, as the README quotes it
])
def test_the_issues_examples_are_recognised(log, cause):
    assert ids(log)[0] == cause


PREFIXES = ["E   ", "[rank0]: ", "2026-12-01 10:00:00,000 ERROR ", "    ", "\x1b[91m"]


@pytest.mark.parametrize("prefix", PREFIXES)
def test_a_prefix_no_source_writes_changes_nothing(prefix):
    for entry in MESSAGES:
        first = entry["text"].strip("\n").splitlines()
        log = "\n".join(prefix + line for line in first)
        assert ids(log)[0] == entry["cause"], (prefix, entry["source"])


def test_inside_a_traceback_the_message_is_still_the_main_cause():
    for entry in MESSAGES:
        log = ("Traceback (most recent call last):\n  File \"/srv/train.py\", line 3, in <module>\n"
               "    y = torch.compile(model)(x)\n" + entry["text"].strip("\n") + "\n")
        assert ids(log)[0] == entry["cause"], entry["source"]


def test_the_whole_table_as_one_log_through_the_cli_names_every_cause(tmp_path):
    log = tmp_path / "all.log"
    log.write_text("\n".join(m["text"].strip("\n") for m in MESSAGES) + "\n", encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "envcheck", "explain", str(log), "--json"], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 1, done.stderr
    found = {c["id"] for c in json.loads(done.stdout)["causes"]}
    assert found == {m["cause"] for m in MESSAGES}


def test_a_log_of_warnings_only_exits_0_and_still_names_them(tmp_path):
    warnings = [m["text"] for m in MESSAGES if m["cause"] in ("tvm-ffi-disabled", "dsl-log-settings",
                                                               "dsl-setting-deprecated", "max-active-clusters")]
    log = tmp_path / "warn.log"
    log.write_text("\n".join(warnings) + "\n", encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "envcheck", "explain", str(log), "--json"], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert len(json.loads(done.stdout)["causes"]) == 4


# --------------------------------------------------------------------------------------------------------------
# explain without --python: the profile the log's own lines show


NVC = "torch._inductor.exc.InductorError: NoValidChoicesError: No choices exist for backend.\n"
OPERATORS_FRAME = '  File "/venv/lib/python3.12/site-packages/cutlass/operators/arch.py", line 91, in __init__\n'
NVGEMM_FRAME = ('  File "/venv/lib/python3.12/site-packages/torch/_inductor/codegen/nv_universal_gemm/kernel_cache.py",'
                ' line 197, in get_compatible_kernels\n')
RECIPE_FRAME = '  File "/src/cutlass/python/cutlass_api/cutlass_api/providers/cutedsl/kernel.py", line 88, in compile\n'


@pytest.mark.parametrize("log, profile, words", [
    ("torch 2.14.1+cu130\n" + NVC, OPERATORS, "the log names torch 2.14.1+cu130"),
    ("pip install torch==2.13.0\n" + NVC, RECIPE, "the log names torch 2.13.0"),
    (OPERATORS_FRAME + NVC, OPERATORS, "goes through cutlass.operators"),
    (NVGEMM_FRAME + NVC, OPERATORS, "Inductor's NVGEMM code (nv_universal_gemm)"),
    (NVGEMM_FRAME + RECIPE_FRAME + NVC, RECIPE, "goes through cutlass_api"),  # torch 2.11-2.13 go through both
    (NVC, OPERATORS, "names no torch and shows no one stack: `pip install torch` gives torch 2.15.0"),
])
def test_explain_chooses_its_profile_from_the_log(tmp_path, log, profile, words):
    path = tmp_path / "run.log"
    path.write_text(log, encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "envcheck", "explain", str(path), "--json"], capture_output=True,
                          text=True, timeout=120)
    data = json.loads(done.stdout)
    assert data["profile"]["id"] == profile and words in data["profile"]["reason"], data["profile"]
    cause = data["causes"][0]
    assert cause["id"] == "no-valid-choices"
    library = load_builtin(profile).smoke.library
    assert f"{library} (the kernel library of profile {profile}" in cause["text"]
    # never the recipe's DSL pin for a log that shows another stack, nor any pin where the log does not say
    assert not cause["remedy"]["steps"] and cause["remedy"]["commands"][0][:2] == ["envcheck", "doctor"]


def test_a_named_profile_wins_over_the_log(tmp_path):
    path = tmp_path / "run.log"
    path.write_text(OPERATORS_FRAME + NVC, encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "envcheck", "explain", str(path), "--json", "--profile", RECIPE],
                          capture_output=True, text=True, timeout=120)
    assert json.loads(done.stdout)["profile"]["id"] == RECIPE


def test_from_log_is_a_table_over_what_the_log_says():
    from envcheck.model import LogStack

    among = candidates()
    assert among.libraries == ("cutlass_api", "cutlass.operators")
    table = [((None, (), False), OPERATORS), (("2.15.0", (), False), OPERATORS), (("2.12.1", (), True), RECIPE),
             ((None, ("cutlass.operators",), False), OPERATORS), ((None, ("cutlass_api",), True), RECIPE),
             ((None, ("cutlass_api", "cutlass.operators"), True), OPERATORS), ((None, (), True), OPERATORS),
             (("2.16.0", (), False), OPERATORS)]
    for (torch, libraries, nvgemm), profile in table:
        assert among.from_log(LogStack(torch, libraries, nvgemm))[0].id == profile, (torch, libraries, nvgemm)


# --------------------------------------------------------------------------------------------------------------
# Remedies name the compute capability they need


@pytest.mark.parametrize("profile, floor", [(RECIPE, "8.0"), (OPERATORS, "9.0")])
def test_no_kernels_below_the_floor_names_the_profile_s_floor(profile, floor):
    from dataclasses import replace

    from envcheck.causes.explanations import no_valid_choices

    ctx = replace(context_for_log(load_builtin(profile)), capability=(7, 5), known=True)
    text, remedy = no_valid_choices("NoValidChoicesError", ctx)
    assert f"it needs {floor} or newer" in text
    rule = load_builtin(profile).gpu_below
    assert remedy.text == (rule.remedy or f"Run on a GPU of compute capability {floor} or newer.")
    assert "8.0 or newer" not in remedy.text or floor == "8.0"


def test_an_arch_remedy_names_the_target_of_the_gpu_judged_for():
    from dataclasses import replace

    from envcheck.causes.upstream import dsl_arch_unsupported, dsl_toolkit_refuses_gpu

    ctx = context_for_log(load_builtin(OPERATORS))
    assert "sm_90a on an H100/H200 (9.0)" in dsl_arch_unsupported("sm_80", ctx)[1].text
    assert "sm_103a (compute capability 10.3)" in dsl_arch_unsupported("sm_80", replace(ctx, capability=(10, 3)))[1].text
    said, remedy = dsl_toolkit_refuses_gpu("sm_107a", replace(ctx, cutedsl_version="4.8.1"))
    assert "compute capability 10.7" in said and remedy.steps[0].args == ("nvidia-cutlass-dsl[cu13]==4.8.1",)


# --------------------------------------------------------------------------------------------------------------
# The messages as the real wheels produce them here (no GPU needed), read by explain; and doctor on the same venv


@pytest.fixture(scope="module")
def dsl_venv(tmp_path_factory):
    """A venv with the real DSL 4.8.1 (-libs-base and -libs-core only, the flavour added by the tests) and what
    cutlass.operators needs, downloaded with the machine's own pip configuration (its package index)."""
    from wheelfactory import make_venv

    folder = tmp_path_factory.mktemp("wheels")
    missing = _download(folder, "nvidia-cutlass-dsl==4.8.1", "nvidia-cutlass-dsl-libs-base==4.8.1",
                        "nvidia-cutlass-dsl-libs-core==4.8.1", "nvidia-cutlass-dsl-libs-cu12==4.8.1",
                        "nvidia-cutlass-operators==0.3.0", "nvidia-cutlass-operators==0.1.1", "apache-tvm-ffi==0.1.15.post2",
                        "cuda-bindings==13.0.3", "cuda-pathfinder", "networkx", "numpy", "typing-extensions")
    if missing:
        pytest.skip(missing)
    python = make_venv(tmp_path_factory.mktemp("venv") / "v")
    return python, folder


def _download(folder, *requirements) -> str:
    """'' when every requirement came (the machine's own pip configuration), else what pip said of the first that did
    not."""
    for requirement in requirements:
        done = subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", str(folder), requirement],
                              capture_output=True, text=True, timeout=900)
        if done.returncode != 0:
            return f"the package index has no {requirement} here: {done.stderr.strip()[-200:]}"
    return ""


def _install(python, folder, *requirements, extra=()):
    from wheelfactory import pip

    pip(python, "install", "--no-deps", "--no-index", "--find-links", str(folder), *extra, *requirements)


def _run(python, code: str, **env) -> str:
    import os

    done = subprocess.run([str(python), "-c", code], capture_output=True, text=True, timeout=600, cwd="/",
                          env={**os.environ, **env})
    assert done.returncode != 0, done.stderr  # each scenario ends in the library's own error
    return done.stderr


@pytest.mark.slow
def test_the_real_wheels_messages_are_their_causes(dsl_venv, capsys):
    from envcheck.cli import main

    from wheelfactory import pip

    python, folder = dsl_venv
    pip(python, "uninstall", "-y", "nvidia-cutlass-dsl-libs-cu12", "torch")  # whatever another test left there
    _install(python, folder, "nvidia-cutlass-dsl==4.8.1", "nvidia-cutlass-dsl-libs-base==4.8.1",
             "nvidia-cutlass-dsl-libs-core==4.8.1", "cuda-bindings==13.0.3", "cuda-pathfinder", "numpy",
             "typing-extensions", "apache-tvm-ffi==0.1.15.post2", "networkx", "nvidia-cutlass-operators==0.3.0")
    # a DSL with no CUDA flavour: `import cutlass` raises, and doctor fails cutedsl.importable
    said = _run(python, "import cutlass")
    assert "No CTK flavor installed" in said and ids(said, OPERATORS)[0] == "dsl-libs-missing"
    main(["doctor", "--python", str(python), "--profile", OPERATORS, "--no-gpu", "--json"])
    checks = {c["id"]: c for c in json.loads(capsys.readouterr().out)["checks"]}
    finding = checks["cutedsl.importable"]
    assert finding["status"] == "fail" and "No CTK flavor installed" in finding["found"], finding
    assert finding["remedy"]["steps"][0]["args"] == ["nvidia-cutlass-dsl[cu13]==4.8.1"]

    _install(python, folder, "nvidia-cutlass-dsl-libs-cu12==4.8.1")
    env_read = "import cutlass.cutlass_dsl as d; d.CuTeDSL._get_dsl()"
    said = _run(python, env_read, CUTE_DSL_LOG_TO_CONSOLE="maybe")
    assert ids(said, OPERATORS)[0] == "env-value-invalid" and "CUTE_DSL_LOG_TO_CONSOLE" in causes(said)[0].cause.text
    # without torch, cutlass.operators' provider says the DSL is missing; the missing torch is named first
    said = _run(python, "import cutlass.operators")
    assert "CuTeDSLProvider is unavailable" in said
    assert ids(said, OPERATORS)[:2] == ["torch-missing", "dsl-provider-unavailable"]
    said = _run(python, "from cuda.bindings import driver; e, = driver.cuInit(0); raise SystemExit(int(e))")
    if "Failed to dlopen libcuda.so.1" in said:  # no driver here, as on a CPU builder
        assert ids(said)[0] == "no-libcuda"
    # issue 29 item 4: an Op built for a target it does not take (no GPU needed: the DSL reads CUTE_DSL_ARCH)
    tcgen05 = ("import cutlass; from cutlass.cute.nvgpu import tcgen05 as t; t.MmaF16BF16Op(cutlass.BFloat16, "
               "cutlass.Float32, (128, 128, 16), t.CtaGroup.ONE, t.OperandSource.SMEM, t.OperandMajorMode.K, "
               "t.OperandMajorMode.K)")
    said = _run(python, tcgen05, CUTE_DSL_ARCH="sm_90a")
    assert "expects arch to be one of" in said and ids(said, OPERATORS)[0] == "dsl-arch-unsupported"
    said = _run(python, "from cutlass.cute.nvgpu import cpasync; cpasync.CopyBulkTensorTileG2SOp()", CUTE_DSL_ARCH="sm_80")
    assert "expects arch to be at least sm_90" in said and ids(said, OPERATORS)[0] == "dsl-arch-unsupported"
    # cuda-bindings 13.5 looks for the driver through cuda-pathfinder, and says so in its own words
    missing = _download(folder, "cuda-bindings==13.5.0", "cuda-pathfinder>=1.4.2")
    if missing:
        pytest.skip(missing)
    _install(python, folder, "cuda-bindings==13.5.0", "cuda-pathfinder>=1.4.2", extra=("--force-reinstall",))
    said = _run(python, "from cutlass.utils import HardwareInfo; HardwareInfo().get_max_active_clusters(1)")
    if "can only be found via system search" in said:  # no driver here
        assert ids(said, OPERATORS)[0] == "no-libcuda"
    _install(python, folder, "cuda-bindings==13.0.3", extra=("--force-reinstall",))  # as the other tests expect


@pytest.mark.slow
def test_the_real_operators_messages_are_their_causes(dsl_venv):
    python, folder = dsl_venv
    # cutlass.operators imports torch: a CPU build (this machine's package index has one), and what it imports
    missing = _download(folder, "torch==2.13.0+cpu", "sympy", "mpmath", "filelock", "fsspec", "jinja2", "markupsafe")
    if missing:
        pytest.skip(missing)
    _install(python, folder, "torch==2.13.0+cpu", "sympy", "mpmath", "filelock", "fsspec", "jinja2", "markupsafe",
             "nvidia-cutlass-dsl==4.8.1", "nvidia-cutlass-dsl-libs-base==4.8.1", "nvidia-cutlass-dsl-libs-core==4.8.1",
             "nvidia-cutlass-dsl-libs-cu12==4.8.1", "cuda-bindings==13.0.3", "cuda-pathfinder", "numpy",
             "typing-extensions", "apache-tvm-ffi==0.1.15.post2", "networkx", "nvidia-cutlass-operators==0.3.0")
    cases = [
        ("from cutlass.operators.arch import TargetSm; TargetSm('80a')", {}, "target-sm-invalid"),
        ("from cutlass.operators.utils.device import device_or_env_target_sm as f; f()", {"CUTE_DSL_ARCH": "sm_9x"},
         "dsl-arch-invalid"),
        ("from cutlass.operators.config import GlobalOptions as G; G().use_tvm_ffi",
         {"CUTLASS_OPERATORS_USE_TVM_FFI": "1", "CUTE_DSL_ENABLE_TVM_FFI": "0"}, "operators-tvm-ffi-conflict"),
        ("from cutlass.operators.config import GlobalOptions as G; G().use_tvm_ffi",
         {"CUTLASS_OPERATORS_USE_TVM_FFI": "maybe"}, "env-value-invalid"),
        ("from cutlass.operators.providers.cutedsl.evt.common_efc import EFC", {}, "common-efc"),  # torch 2.14's import
    ]
    for code, env, cause in cases:
        said = _run(python, code, **env)
        assert ids(said, OPERATORS)[0] == cause, (code, said[-500:])
    _install(python, folder, "nvidia-cutlass-operators==0.1.1", extra=("--force-reinstall",))
    said = _run(python, "from cutlass.operators.providers.cutedsl.evt import efc")  # torch 2.15's import
    assert "cannot import name 'efc'" in said and ids(said, OPERATORS)[0] == "operators-too-old"
