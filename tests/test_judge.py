"""The judges, as tables over every boundary. Pure: facts built by hand, no I/O."""

from __future__ import annotations

from dataclasses import replace

import pytest
from factsbuilder import (CHECKOUT, PINNED, SITE, checkout, dist, driver, facts, gpu, interpreter, toolkit)

from envcheck.judge import CHECK_IDS, judge
from envcheck.model import Failure, Status, TorchBuild


def verdict(policy, check_id, no_gpu=False, strict=False, **fact_kw):
    found = {f.id: f for f in judge(facts(**fact_kw), policy, no_gpu=no_gpu, strict=strict)}
    return found[check_id]


def test_the_good_machine_passes_everything(policy):
    findings = judge(facts(), policy)
    assert [f.id for f in findings] == list(CHECK_IDS)
    # the recipe has no [compile-target]: its torch compiles NVGEMM where the GPU is seen, so cutedsl.arch skips
    assert {f.id: f.status for f in findings} == {i: Status.SKIP if i == "cutedsl.arch" else Status.PASS for i in CHECK_IDS}


@pytest.mark.parametrize("version, status", [
    ((3, 10, 14), Status.FAIL), ((3, 11, 9), Status.FAIL), ((3, 12, 0), Status.PASS), ((3, 12, 3), Status.PASS),
    ((3, 13, 1), Status.PASS),
])
def test_python_version(policy, version, status):
    finding = verdict(policy, "python.version", interpreter=interpreter(version=version))
    assert finding.status == status
    if status == Status.FAIL:
        assert not finding.remedy.automatic and "virtual environment" in finding.remedy.text


@pytest.mark.parametrize("version, torch, status, first_command", [
    # torch 2.15.0 needs 3.11 (the operators profile's own floor is 3.10): without a suggested Python the venv to make
    # is a 3.11, the largest of the lower bounds (it said 3.10, the smallest)
    ((3, 10, 14), "2.15.0+cu132", Status.FAIL, ("python3.11", "-m", "venv", "nvgemm-venv")),
    ((3, 11, 0), "2.15.0+cu132", Status.PASS, None),
    ((3, 10, 14), "2.14.1+cu130", Status.PASS, None),
    ((3, 9, 18), "2.14.1+cu130", Status.FAIL, ("python3.10", "-m", "venv", "nvgemm-venv")),
])
def test_python_version_beside_torch_takes_the_largest_lower_bound(version, torch, status, first_command):
    from envcheck.profile import load_builtin

    operators = replace(load_builtin("torch-2.14-operators"), python_suggested="")
    dists = {"torch": torch}
    finding = judge(facts(interpreter=interpreter(version=version, dists=dists)), operators)[0]
    assert finding.id == "python.version" and finding.status == status, finding.found
    if first_command:
        assert finding.remedy.commands[0] == first_command
        assert f"Python {first_command[0][6:]} or newer" in finding.remedy.text


# The Python a new environment is made from (issue 31 item 3): the profile's suggested one (3.12, what the recorded
# runs had) where this machine has it or it is to be installed, not the newest found (3.13); else the newest taken.
@pytest.mark.parametrize("found, suggested, first", [
    ((("/py/3.13/bin/python3", "3.13.0"), ("/py/3.12/bin/python3", "3.12.1"), ("/py/3.11/bin/python3", "3.11.7")),
     "3.12", "/py/3.12/bin/python3"),
    ((("/py/3.13/bin/python3", "3.13.0"), ("/py/3.12/bin/python3", "3.12.1")), "", "/py/3.13/bin/python3"),
    ((("/py/3.13/bin/python3", "3.13.0"), ("/py/3.11/bin/python3", "3.11.7")), "3.12", "/py/3.13/bin/python3"),
    ((("/py/3.9/bin/python3", "3.9.18"),), "3.12", "python3.12"),  # none taken: install the suggested one
    ((), "3.12", "python3.12"),
    ((), "3.10", "python3.12"),  # a suggestion the range does not take: the range's own floor
    ((), "", "python3.12"),
])
def test_the_new_environment_is_made_from_the_suggested_python(found, suggested, first):
    from envcheck.judge.python_torch import new_venv
    from packaging.specifiers import SpecifierSet

    text, commands = new_venv(SpecifierSet(">=3.12"), found, suggested)
    assert commands[0] == (first, "-m", "venv", "nvgemm-venv") and commands[1][:3] == ("envcheck", "fix", "--python")
    assert ("or newer" in text) is (first.startswith("python") and suggested != "3.12"), text


@pytest.mark.parametrize("profile", ["torch-2.11-nvgemm", "torch-2.14-operators"])
@pytest.mark.parametrize("version", [(3, 9, 18), (3, 10, 14), (3, 11, 9), (3, 12, 3), (3, 13, 1), (3, 14, 0)])
def test_without_torch_python_version_gives_one_remedy_for_the_profile_judged(profile, version):
    """A target without torch, judged by either profile: the finding speaks of that profile only (no other stack's
    needs, no "Keep Python ... Or, for profile ..."), and where it fails its one remedy is a venv from Python 3.12,
    the suggested one, though 3.13 is on the machine too."""
    from envcheck.profile import load_builtin

    chosen = load_builtin(profile)
    pythons = (("/py/3.13/bin/python3", "3.13.0"), ("/py/3.12/bin/python3", "3.12.1"))
    finding = judge(replace(facts(interpreter=interpreter(version=version, dists={})), pythons=pythons), chosen)[0]
    takes = chosen.python.contains(".".join(map(str, version)))
    assert finding.status is (Status.PASS if takes else Status.FAIL), finding.found
    other = "torch-2.14-operators" if profile == "torch-2.11-nvgemm" else "torch-2.11-nvgemm"
    said = finding.found + (finding.remedy.text if finding.remedy else "")
    assert other not in said and "Keep Python" not in said and "without torch" not in said, said
    if not takes:
        assert finding.remedy.commands == (("/py/3.12/bin/python3", "-m", "venv", "nvgemm-venv"),
                                           ("envcheck", "fix", "--python", "nvgemm-venv/bin/python"))
        assert finding.remedy.text.count("virtual environment") == 1 and " Or " not in finding.remedy.text


@pytest.mark.parametrize("torch_version, status", [
    ("2.10.0+cu130", Status.FAIL), ("2.10.99", Status.FAIL), ("2.11.0", Status.PASS), ("2.11.0+cu130", Status.PASS),
    ("2.11.0rc1", Status.PASS), ("2.12.0.dev20260101+cu130", Status.PASS), ("2.13.0+cu130", Status.PASS),
])
def test_torch_version(policy, torch_version, status):
    finding = verdict(policy, "torch.version", interpreter=interpreter(dists={"torch": torch_version}))
    assert finding.status == status, finding
    if status == Status.FAIL:
        step = finding.remedy.steps[0]
        assert step.kind == "pip-install" and step.index_url.endswith("/cu130") and step.reinstall


def test_torch_missing_is_installed_from_the_cuda_index(policy):
    finding = verdict(policy, "torch.version", interpreter=interpreter(dists={}))
    assert finding.status == Status.FAIL and finding.found == "not installed"
    assert finding.remedy.steps[0].args == ("torch<2.14,>=2.11",)


@pytest.mark.parametrize("cuda, driver_cuda, status, words", [
    (None, "13.1", Status.FAIL, "CPU-only"),
    ("12.8", "13.1", Status.FAIL, "CUDA 12.8"),
    ("13.0", "13.1", Status.PASS, "CUDA 13.0"),
    ("13.0", "13.0", Status.PASS, "CUDA 13.0"),
    ("13.0", "12.9", Status.FAIL, "supports CUDA 12.9 at most"),
    ("14.0", "14.0", Status.FAIL, "CUDA 14.0"),
])
def test_torch_cuda_build(policy, cuda, driver_cuda, status, words):
    torch = TorchBuild("2.11.0", cuda)
    finding = verdict(policy, "torch.cuda-build", interpreter=interpreter(torch=torch), driver=driver(cuda=driver_cuda))
    assert finding.status == status and words in finding.found


def test_torch_cuda_build_without_torch_is_skipped(policy):
    assert verdict(policy, "torch.cuda-build", interpreter=interpreter(dists={})).status == Status.SKIP


# The recipe's CUDA 13.1 driver is `recipe` (the H200 ran NVGEMM on driver 580 = CUDA 13.0): below it but of the
# same major warns, and fails under --strict; another major is a runtime failure either way.
@pytest.mark.parametrize("version, cuda, status, strict_status", [
    ("580.159.04", "13.0", Status.WARN, Status.FAIL), ("590.44.01", "13.1", Status.PASS, Status.PASS),
    ("595.45.04", "13.2", Status.PASS, Status.PASS), ("575.57.08", "12.9", Status.FAIL, Status.FAIL),
])
def test_cuda_driver(policy, version, cuda, status, strict_status):
    for strict, expected in ((False, status), (True, strict_status)):
        finding = verdict(policy, "cuda.driver", strict=strict, driver=driver(version=version, cuda=cuda))
        assert finding.status == expected, (strict, finding)
        assert "590.44.01" in finding.wanted
        if expected != Status.PASS:
            assert "590.44.01" in finding.remedy.text and not finding.remedy.automatic
        if expected == Status.WARN:
            assert "recipe" in finding.found


def test_cuda_driver_offers_forward_compat_on_datacenter_gpus_only(policy):
    datacenter = verdict(policy, "cuda.driver", driver=driver("580.159.04", "13.0", [gpu((9, 0), "NVIDIA H200")]))
    assert "cuda-compat-13-1" in datacenter.remedy.text and datacenter.remedy.commands
    consumer = verdict(policy, "cuda.driver", driver=driver("580.159.04", "13.0", [gpu((12, 0), "NVIDIA GeForce RTX 5090")]))
    assert "datacenter GPUs only" in consumer.remedy.text and not consumer.remedy.commands


def test_no_driver_is_stated_plainly_and_no_gpu_flag_skips(policy):
    missing = Failure("driver", "NVML library not found (libnvidia-ml.so.1): no NVIDIA driver is installed here")
    finding = verdict(policy, "cuda.driver", driver=missing)
    assert finding.status == Status.FAIL and "NVML library not found" in finding.found
    gpu_finding = verdict(policy, "gpu.compute-capability", driver=missing)
    assert gpu_finding.status == Status.FAIL and gpu_finding.found.startswith("no GPU visible")
    for check in ("cuda.driver", "gpu.compute-capability"):
        assert verdict(policy, check, no_gpu=True, driver=missing).status == Status.SKIP


# The recipe's CUDA 13.1 toolkit is `recipe`: a deviation warns, and fails under --strict.
@pytest.mark.parametrize("versions, deviates", [
    (("13.1.80",), False), (("13.0.88",), True), (("12.9.86",), True), (("13.2.51",), False),
    (("14.0.10",), True), ((None,), True), ((), False),
])
def test_cuda_toolkit(policy, versions, deviates):
    tk = toolkit(*versions) if versions else toolkit()
    for strict, bad in ((False, Status.WARN), (True, Status.FAIL)):
        finding = verdict(policy, "cuda.toolkit", strict=strict, toolkit=tk)
        assert finding.status == (bad if deviates else Status.PASS)
        if deviates:
            assert finding.remedy.steps[0].kind == "toolkit-install" and "recipe" in finding.found


def test_cuda_toolkit_points_at_a_fitting_nvcc_already_here(policy):
    finding = verdict(policy, "cuda.toolkit", strict=True, toolkit=toolkit("13.0.88", "13.1.80"))
    assert finding.status == Status.FAIL and "export CUDA_HOME=/usr/local/cuda-1" in finding.remedy.text
    assert not finding.remedy.automatic


def test_cuda_toolkit_nothing_found(policy):
    from envcheck.model import Toolkit
    finding = verdict(policy, "cuda.toolkit", toolkit=Toolkit(()))
    assert finding.status == Status.WARN and finding.found.startswith("no nvcc found")


@pytest.mark.parametrize("capability, status, words", [
    ((7, 5), Status.FAIL, "none"), ((8, 0), Status.WARN, "SM80"), ((8, 6), Status.WARN, "SM80"),
    ((8, 7), Status.WARN, "not verified"), ((8, 9), Status.WARN, "SM80"), ((9, 0), Status.WARN, "no Hopper kernels"),
    ((10, 0), Status.PASS, "full"), ((10, 3), Status.WARN, "untested"), ((10, 7), Status.FAIL, "no sm_107"),
    ((11, 0), Status.WARN, "not verified"), ((12, 0), Status.WARN, "fails to compile"), ((12, 1), Status.WARN, "not verified"),
])
def test_gpu_compute_capability(policy, capability, status, words):
    finding = verdict(policy, "gpu.compute-capability", driver=driver(gpus=[gpu(capability)]))
    assert finding.status == status and words in finding.found


def test_gpu_mig_and_mixed_gpus_and_none(policy):
    assert "MIG" in verdict(policy, "gpu.compute-capability", driver=driver(gpus=[gpu(mig=True)])).found
    mixed = verdict(policy, "gpu.compute-capability", driver=driver(gpus=[gpu((10, 0)), gpu((9, 0), "NVIDIA H100", 1)]))
    assert mixed.status == Status.WARN and any("device 0" in d for d in mixed.details)
    none = verdict(policy, "gpu.compute-capability", driver=driver(gpus=[]))
    assert none.status == Status.FAIL and "sees no GPU" in none.found


@pytest.mark.parametrize("version, status", [
    # on the default machine's B200 (10.0) the cap is runtime from 4.6 (ProxyKind gone): 4.3.6-4.5.x are recipe
    ("4.2.1", Status.FAIL), ("4.3.0", Status.PASS), ("4.3.5", Status.PASS), ("4.3.6", Status.WARN),
    ("4.4.0", Status.WARN), ("4.3.5.post1", Status.WARN), ("4.5.3", Status.WARN), ("4.6.0", Status.FAIL),
    ("4.8.1", Status.FAIL),
])
def test_cutedsl_version(policy, version, status):
    dists = {"nvidia-cutlass-dsl": version}
    finding = verdict(policy, "cutedsl.version", interpreter=interpreter(dists=dists))
    assert finding.status == status
    if status != Status.PASS:
        assert "ProxyKind" in finding.why
        assert finding.remedy.steps[0].args == ("nvidia-cutlass-dsl<=4.3.5,>=4.3.0",)


def test_cutedsl_missing(policy):
    finding = verdict(policy, "cutedsl.version", interpreter=interpreter(dists={}))
    assert finding.status == Status.FAIL and finding.found == "not installed"
    assert verdict(policy, "cutedsl.importable", interpreter=interpreter(dists={})).status == Status.SKIP


def test_cutedsl_pth_trap(policy):
    target = "/tmp/target-dir"
    trapped = interpreter(dists={}, extra=(dist("nvidia-cutlass-dsl", "4.3.5", location=target),), modules={"cutlass": None})
    finding = verdict(policy, "cutedsl.importable", interpreter=trapped)
    assert finding.status == Status.FAIL and "not a site directory" in finding.found and ".pth" in finding.found
    assert f"{target}/nvidia_cutlass_dsl/python_packages" in finding.remedy.text


def test_cutedsl_shadowed_by_nvidia_cutlass(policy):
    shadowed = interpreter(extra=(dist("nvidia-cutlass", "3.5.0"),), modules={"cutlass": f"{SITE}/cutlass/__init__.py"})
    finding = verdict(policy, "cutedsl.importable", interpreter=shadowed)
    assert finding.status == Status.FAIL and "nvidia-cutlass 3.5.0 is installed" in finding.found
    kinds = [s.kind for s in finding.remedy.steps]
    assert kinds == ["pip-uninstall", "pip-install"] and finding.remedy.steps[0].args == ("nvidia-cutlass",)


def test_nvidia_cutlass_beside_the_dsl_that_shadows_nothing_is_a_warning(policy):
    beside = interpreter(extra=(dist("nvidia-cutlass", "4.2.0.0"),))
    finding = verdict(policy, "cutedsl.importable", interpreter=beside)
    assert finding.status == Status.WARN and "nvidia-cutlass 4.2.0.0 is installed" in finding.found
    assert finding.remedy.steps[0].args == ("nvidia-cutlass",)


def test_cutedsl_wrong_package_instead(policy):
    dists = {k: v for k, v in __import__("factsbuilder").GOOD_DISTS.items() if k != "nvidia-cutlass-dsl"}
    wrong = interpreter(dists=dists, extra=(dist("nvidia-cutlass", "3.5.0"),), modules={"cutlass": f"{SITE}/cutlass/__init__.py"})
    finding = verdict(policy, "cutedsl.importable", interpreter=wrong)
    assert finding.status == Status.FAIL and "not installed" in finding.found
    assert [s.kind for s in finding.remedy.steps] == ["pip-uninstall", "pip-install"]


def test_stale_split_packages_after_a_downgrade(policy):
    stale = interpreter(extra=(dist("nvidia-cutlass-dsl-libs-base", "4.4.0"),))
    finding = verdict(policy, "cutedsl.importable", interpreter=stale)
    assert finding.status == Status.FAIL and "nvidia-cutlass-dsl-libs-base" in finding.found
    assert finding.remedy.steps[0].args == ("nvidia-cutlass-dsl-libs-base",)


def test_split_packages_the_installed_dsl_needs_are_not_stale(policy):
    dsl44 = dist("nvidia-cutlass-dsl", "4.4.0")
    dsl44 = replace(dsl44, requires=("nvidia-cutlass-dsl-libs-base==4.4.0",))
    libs_site = f"{SITE}"
    env = interpreter(dists={"torch": "2.11.0+cu130"}, extra=(dsl44, dist("nvidia-cutlass-dsl-libs-base", "4.4.0", location=libs_site)),
                      modules={"cutlass": f"{SITE}/nvidia_cutlass_dsl/python_packages/cutlass/__init__.py"})
    assert verdict(policy, "cutedsl.importable", interpreter=env).status == Status.PASS
    assert verdict(policy, "cutedsl.version", interpreter=env).status == Status.WARN  # 4.4 keeps ProxyKind (10.0)


@pytest.mark.parametrize("change, status", [
    ({}, Status.PASS),
    ({"apache-tvm-ffi": "0.1.6"}, Status.WARN),  # cutlass_api's pin is the recipe's; beside DSL 4.3.5 nothing breaks
    ({"apache-tvm-ffi": None}, Status.FAIL),
    ({"torch-c-dlpack-ext": None}, Status.PASS),  # optional: torch >= 2.10 has the exchange API itself
    ({"nvidia-matmul-heuristics": None}, Status.WARN),
])
def test_nvgemm_deps(policy, change, status):
    from factsbuilder import GOOD_DISTS
    dists = {k: v for k, v in {**GOOD_DISTS, **change}.items() if v is not None}
    finding = verdict(policy, "nvgemm.deps", interpreter=interpreter(dists=dists))
    assert finding.status == status
    if status != Status.PASS:
        assert finding.remedy.steps[0].kind == "pip-install"


def test_missing_cuda_python_is_noticed_and_explained(policy):
    from factsbuilder import GOOD_DISTS
    dists = {k: v for k, v in GOOD_DISTS.items() if k != "cuda-python"}
    finding = verdict(policy, "packages.consistency", interpreter=interpreter(dists=dists))
    assert finding.status == Status.WARN
    assert "nvidia-cutlass-dsl 4.3.5 requires cuda-python>=12.8, which is not installed" in finding.found
    assert "cuda-bindings 13.3.1 is, and that is enough to run" in finding.found
    # installing the cuda-python meta package would move cuda-bindings, pinned by cuda-core and torch: never offered
    assert finding.remedy is None and "nothing to install" in finding.found
    without_stand_in = {k: v for k, v in dists.items() if k != "cuda-bindings"}
    finding = verdict(policy, "packages.consistency", interpreter=interpreter(dists=without_stand_in))
    assert "cuda-python>=12.8" in finding.remedy.steps[0].args


@pytest.mark.parametrize("text, skipped", [
    ('pytest>=6; extra == "test"', True),
    ("sphinx; extra=='doc' and python_version >= '3.8'", True),
    ('jaraco.develop>=7.21; (python_version >= "3.9" and sys_platform != "cygwin") and extra == "test"', True),
    ('foo; extra == "x" or python_version < "3.99"', False),
    ("cuda-python>=12.8", False),
    ("numpy; python_version >= '3.99'", False),
    ("extra-package>=1", False),
])
def test_requirements_only_for_an_extra_are_passed_over_unparsed(text, skipped):
    from envcheck.judge.packages import _for_an_extra_only
    assert _for_an_extra_only(text) == skipped


def test_requirement_markers_are_evaluated_for_the_target(policy):
    # numpy is required only for python_version >= '3.99' and torch's pin only on Linux: neither is broken here.
    assert verdict(policy, "packages.consistency").status == Status.PASS


def test_mixed_cuda_majors_fail(policy):
    mixed = interpreter(extra=(dist("nvidia-cuda-runtime-cu12", "12.8.90"), dist("nvidia-cuda-runtime", "13.0.96"),
                               dist("nvidia-ml-py", "13.580.82")))
    finding = verdict(policy, "packages.consistency", interpreter=mixed)
    assert finding.status == Status.FAIL and "CUDA 12: nvidia-cuda-runtime-cu12" in finding.found
    assert "nvidia-ml-py" not in finding.found


# Every nvidia-* wheel of the H200 image's torch 2.11.0+cu130 environment (2026-11-29): one CUDA major, although
# cufile, curand, cufft, cusolver and cusparse carry library versions of their own.
H200_NVIDIA = {
    "nvidia-cufile": "1.15.1.6", "nvidia-curand": "10.4.0.35", "nvidia-cusolver": "12.0.4.66",
    "nvidia-cufft": "12.0.0.61", "nvidia-cusparse": "12.6.3.3", "nvidia-nvtx": "13.0.85",
    "nvidia-nvshmem-cu13": "3.4.5", "nvidia-cudnn-cu13": "9.19.0.56", "nvidia-nccl-cu13": "2.28.9",
    "nvidia-cuda-nvrtc": "13.0.88", "nvidia-cusparselt-cu13": "0.8.0", "nvidia-nvjitlink": "13.0.88",
    "nvidia-cuda-cupti": "13.0.85", "nvidia-cuda-runtime": "13.0.96", "nvidia-cublas": "13.1.0.3",
    "nvidia-ml-py": "13.580.82", "nvidia-cutlass-dsl": "4.3.5",
}


@pytest.mark.parametrize("extra, majors", [
    (H200_NVIDIA, {13}),
    ({"nvidia-cublas-cu12": "12.8.4.1", "nvidia-cuda-runtime-cu12": "12.8.90", "nvidia-cufft-cu12": "11.3.3.83"}, {12}),
    ({**H200_NVIDIA, "nvidia-cuda-runtime-cu12": "12.8.90"}, {12, 13}),
    ({"nvidia-cufft": "12.0.0.61", "nvidia-curand": "10.4.0.35"}, set()),
])
def test_cuda_majors_of_real_wheel_sets(extra, majors):
    from envcheck.judge.packages import cuda_majors
    env = interpreter(dists={}, extra=tuple(dist(n, v) for n, v in extra.items()))
    assert set(cuda_majors(env)) == majors


def test_duplicate_copies_are_reported(policy):
    twice = interpreter(extra=(dist("apache-tvm-ffi", "0.1.6", location="/tmp/target"),))
    finding = verdict(policy, "packages.consistency", interpreter=twice)
    assert finding.status == Status.WARN and "installed 2 times" in finding.found


def test_60000_distributions_are_looked_up_by_name_in_path_order(policy):
    """Each lookup reads an index made once, not every distribution (issue 24: doctor on a target with 60,000 hung;
    benchmarks/duplicate_checks.py times it): the copies of a name in path order, the first the one Python uses."""
    many = tuple(dist(f"p{i}", "1.0") for i in range(60_000))
    crowded = interpreter(extra=many + (dist("p7", "2.0", location="/tmp/later"),))
    assert [d.version for d in crowded.installed("P7")] == ["1.0", "2.0"] and crowded.dist("p7").version == "1.0"
    assert crowded.installed("absent") == () and crowded.dist("absent") is None
    finding = verdict(policy, "packages.consistency", interpreter=crowded)
    assert "p7 is installed 2 times: 1.0 in" in finding.found and finding.found.count("installed 2 times") == 1


@pytest.mark.parametrize("change, status, words", [
    ({}, Status.PASS, "clean"),
    ({"dirty_files": ("python/cutlass_api/cutlass_api/__init__.py",)}, Status.WARN, "local changes"),
    ({"commit": "1" * 40}, Status.FAIL, "not the pinned commit"),
    ({"commit": "1" * 40, "dirty_files": ("x",)}, Status.FAIL, "not the pinned commit"),
    ({"is_cutlass": False, "commit": "2" * 40}, Status.FAIL, "not CUTLASS"),
    ({"is_repo": False, "commit": None}, Status.FAIL, "not a git repository"),
    ({"exists": False}, Status.FAIL, "does not exist"),
    ({"has_package": False}, Status.FAIL, "not in the work tree"),
])
def test_cutlass_checkout(policy, change, status, words):
    finding = verdict(policy, "cutlass.checkout", checkout=checkout(**change))
    assert finding.status == status and words in finding.found, finding.found


def test_a_dirty_checkout_off_the_pin_is_never_moved(policy):
    finding = verdict(policy, "cutlass.checkout", checkout=checkout(commit="1" * 40, dirty_files=("x",)))
    assert not finding.remedy.automatic and "will not move it" in finding.remedy.text
    clean = verdict(policy, "cutlass.checkout", checkout=checkout(commit="1" * 40))
    assert [s.kind for s in clean.remedy.steps] == ["cutlass-fetch", "cutlass-install"]


def test_no_checkout_anywhere(policy):
    finding = verdict(policy, "cutlass.checkout", checkout=None)
    assert finding.status == Status.FAIL and finding.remedy.steps[0].kind == "cutlass-fetch"


def test_unreadable_checkout_is_an_error(policy):
    assert verdict(policy, "cutlass.checkout", checkout=Failure("checkout", "boom")).status == Status.ERROR


@pytest.mark.parametrize("setup, status, words", [
    ("good", Status.PASS, "editable from"),
    ("missing", Status.FAIL, "not installed"),
    ("missing-old-python", Status.FAIL, "needs Python"),
    ("not-importable", Status.FAIL, "finds nothing"),
    ("other-checkout", Status.WARN, "not from the checkout checked"),
    ("checkout-off-pin", Status.FAIL, "not the pinned"),
    ("vcs-pinned", Status.PASS, f"at {PINNED[:9]}"),
    ("vcs-other", Status.FAIL, "not the pinned"),
    ("no-record", Status.WARN, "cannot be verified"),
    ("path-hack", Status.WARN, "path hack"),
])
def test_cutlass_api_install(policy, setup, status, words):
    from factsbuilder import GOOD_DISTS
    no_api = {k: v for k, v in GOOD_DISTS.items() if k != "cutlass-api"}
    api = lambda **kw: dist("cutlass-api", "0.1.0a1", **kw)  # noqa: E731
    kw = {}
    if setup == "missing":
        kw["interpreter"] = interpreter(dists=no_api)
    elif setup == "missing-old-python":
        kw["interpreter"] = interpreter(version=(3, 11, 7), dists=no_api)
    elif setup == "not-importable":
        kw["interpreter"] = interpreter(modules={"cutlass_api": None})
    elif setup == "other-checkout":
        kw["checkout"] = checkout(path="/elsewhere/cutlass", source="--cutlass-dir")
    elif setup == "checkout-off-pin":
        kw["checkout"] = checkout(commit="3" * 40)
    elif setup in ("vcs-pinned", "vcs-other", "no-record"):
        commit = {"vcs-pinned": PINNED, "vcs-other": "4" * 40, "no-record": None}[setup]
        url = "https://github.com/NVIDIA/cutlass" if commit else None
        kw["interpreter"] = interpreter(dists=no_api, extra=(api(url=url, commit=commit),),
                                        modules={"cutlass_api": f"{SITE}/cutlass_api/__init__.py"})
        kw["checkout"] = None
    elif setup == "path-hack":
        kw["interpreter"] = interpreter(dists=no_api, modules={"cutlass_api": f"{CHECKOUT}/python/cutlass_api/cutlass_api/__init__.py"})
    finding = verdict(policy, "cutlass-api.install", **kw)
    assert finding.status == status and words in finding.found, finding.found


def test_an_unreadable_interpreter_is_an_error_for_every_package_check(policy):
    broken = judge(facts(interpreter=Failure("interpreter", "no interpreter at /nope")), policy)
    by_id = {f.id: f for f in broken}
    for check in ("python.version", "torch.version", "torch.cuda-build", "cutedsl.version", "cutedsl.importable",
                  "nvgemm.deps", "cutlass-api.install", "packages.consistency"):
        assert by_id[check].status == Status.ERROR and "/nope" in by_id[check].found
    assert by_id["cuda.driver"].status == Status.PASS


def test_a_check_that_raises_becomes_an_error_finding(policy, monkeypatch):
    import envcheck.judge as judge_module

    def broken(ctx):
        raise ZeroDivisionError("bug")

    checks = tuple((i, broken if i == "nvgemm.deps" else c) for i, c in judge_module.CHECKS)
    monkeypatch.setattr(judge_module, "CHECKS", checks)
    by_id = {f.id: f for f in judge_module.judge(facts(), policy)}
    assert by_id["nvgemm.deps"].status == Status.ERROR and "ZeroDivisionError" in by_id["nvgemm.deps"].found
    assert by_id["cutedsl.version"].status == Status.PASS


# ---------------------------------------------------------------------------------------------------------------
# Why a step is in fix's plan: in doctor's terms, missing, too old or too new


@pytest.mark.parametrize("version, specifier, said", [
    (None, ">=13.1,<14", "nvcc is missing (needs >=13.1, <14)"),
    (None, "", "nvcc is missing"),
    ("13.0.88", ">=13.1,<14", "nvcc is too old (found 13.0.88, needs >=13.1, <14)"),
    ("13.1.0", ">=13.1,<14", "nvcc 13.1.0 meets >=13.1, <14"),  # the boundary: no shortfall
    ("14.0.10", ">=13.1,<14", "nvcc is too new (found 14.0.10, needs >=13.1, <14)"),
    ("4.4.0", ">=4.3.0,<=4.3.5", "nvcc is too new (found 4.4.0, needs >=4.3.0, <=4.3.5)"),
    ("4.2.9", ">=4.3.0,<=4.3.5", "nvcc is too old (found 4.2.9, needs >=4.3.0, <=4.3.5)"),
    ("0.1.6", "==0.1.7", "nvcc is too old (found 0.1.6, needs ==0.1.7)"),
    ("0.1.8", "==0.1.7", "nvcc is too new (found 0.1.8, needs ==0.1.7)"),
    ("13.2.1", "==13.1.*", "nvcc is too new (found 13.2.1, needs ==13.1.*)"),
    ("13.0.9", "==13.1.*", "nvcc is too old (found 13.0.9, needs ==13.1.*)"),
    ("2.3.0", "!=2.3.0", "nvcc is excluded (found 2.3.0, needs !=2.3.0)"),
    ("2.14.0+cu130", "<2.14,>=2.11", "nvcc is too new (found 2.14.0+cu130, needs >=2.11, <2.14)"),
    ("4.3.0rc1", ">=4.3.0", "nvcc is too old (found 4.3.0rc1, needs >=4.3.0)"),
    ("banana", ">=1", "nvcc banana is not a version envcheck can read (needs >=1)"),
])
def test_shortfall_says_missing_too_old_or_too_new(version, specifier, said):
    from packaging.specifiers import SpecifierSet

    from envcheck.judge._common import shortfall

    assert shortfall("nvcc", version, SpecifierSet(specifier)) == said


def _step_why(finding, kind="pip-install"):
    return [s.why for s in finding.remedy.steps if s.kind == kind]


def test_the_toolkit_step_says_the_nvcc_found_is_too_old_not_missing(policy):
    from envcheck.profile import spec_text

    wanted = spec_text(policy.toolkit)
    assert _step_why(verdict(policy, "cuda.toolkit", toolkit=toolkit("13.0.88")), "toolkit-install") == [
        f"nvcc is too old (found 13.0.88, needs {wanted})"]
    assert _step_why(verdict(policy, "cuda.toolkit", toolkit=toolkit("14.0.10")), "toolkit-install") == [
        f"nvcc is too new (found 14.0.10, needs {wanted})"]
    from envcheck.model import Toolkit
    assert _step_why(verdict(policy, "cuda.toolkit", toolkit=Toolkit(())), "toolkit-install") == [
        f"nvcc is missing (needs {wanted})"]
    unusable = verdict(policy, "cuda.toolkit", toolkit=toolkit(None))  # an nvcc that says no version is none
    assert _step_why(unusable, "toolkit-install") == [f"nvcc is missing (needs {wanted})"]


def test_the_torch_dsl_and_companion_steps_say_what_is_wrong_with_each(policy):
    from envcheck.profile import spec_text

    torch = spec_text(policy.torch)
    dsl = spec_text(policy.cutedsl.specifier)
    no_torch = verdict(policy, "torch.version", interpreter=interpreter(dists={**_good_without("torch")}, torch=None))
    assert _step_why(no_torch) == [f"torch is missing (needs {torch})"]
    newer = verdict(policy, "torch.version", interpreter=interpreter(dists={**_good_without(), "torch": "2.14.1+cu130"},
                                                                      torch=TorchBuild("2.14.1+cu130", "13.0", None)))
    assert _step_why(newer) == [f"torch is too new (found 2.14.1+cu130, needs {torch})"]
    dsl_new = verdict(policy, "cutedsl.version", interpreter=interpreter(dists={**_good_without(), "nvidia-cutlass-dsl": "4.4.0"}))
    assert _step_why(dsl_new) == [f"nvidia-cutlass-dsl is too new (found 4.4.0, needs {dsl})"]
    deps = verdict(policy, "nvgemm.deps", interpreter=interpreter(dists={**_good_without("nvidia-matmul-heuristics"),
                                                                          "apache-tvm-ffi": "0.1.6"}))
    assert _step_why(deps) == ["apache-tvm-ffi is too old (found 0.1.6, needs ==0.1.7)",
                               "nvidia-matmul-heuristics is missing"]


def _good_without(*names):
    """The good machine's distributions, but these."""
    from factsbuilder import GOOD_DISTS

    return {k: v for k, v in GOOD_DISTS.items() if k not in names}


# What torch lacks of its own is torch's, what the stack's own packages lack is the stack's (issue 31 item 7): the
# one is said with the command to run, the other is a step of fix's.
TORCH_2150_REQUIRES = ("filelock", "typing-extensions>=4.13.0", "sympy>=1.13.3",
                       'cuda-toolkit[cublas,cudart]==13.2.2; platform_system == "Linux"')


@pytest.mark.parametrize("lacking, steps, said", [
    ("torch", False, "torch 2.15.0+cu132 lacks requirements of its own (not the NVGEMM stack's"),
    ("nvidia-cutlass-dsl", True, "nvidia-cutlass-dsl 4.8.1 requires filelock, which is not installed"),
    ("nvidia-cutlass-operators", True, "nvidia-cutlass-operators 0.3.0 requires filelock"),
    ("nvidia-matmul-heuristics", True, "nvidia-matmul-heuristics 0.1.0.27 requires filelock"),
    ("cuda-bindings", False, "cuda-bindings 13.3.1 lacks requirements of its own"),
])
def test_a_requirement_torch_lacks_is_torchs_and_one_the_stack_lacks_is_fixed(lacking, steps, said):
    from factsbuilder import stack

    from envcheck.profile import load_builtin

    env = stack(torch="2.15.0")
    env = replace(env, distributions=tuple(
        replace(d, requires=d.requires + (TORCH_2150_REQUIRES if lacking == "torch" else ("filelock",)))
        if d.name == lacking else d for d in env.distributions))
    finding = {f.id: f for f in judge(facts(interpreter=env), load_builtin("torch-2.14-operators"))}["packages.consistency"]
    assert finding.status is Status.WARN and f"{lacking} " in finding.found
    remedy = finding.remedy
    assert bool(remedy.steps) is steps and said in (remedy.text + (remedy.steps[0].why if steps else "")), remedy
    if not steps:  # the command a person runs: every requirement it lacks, the marker's own text left out
        assert remedy.commands == ((("/opt/venv/bin/python", "-m", "pip", "install", *(
            ("filelock", "typing-extensions>=4.13.0", "sympy>=1.13.3", "cuda-toolkit[cublas,cudart]==13.2.2")
            if lacking == "torch" else ("filelock",)))),), remedy.commands
        assert "envcheck fix" not in " ".join(map(" ".join, remedy.commands))
