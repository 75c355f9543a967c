"""Gatherers against real things: real virtual environments, real git repositories, the real nvcc, the real absence
of NVML. And the contract: a broken or hanging gatherer still yields a report."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import git, python312
from wheelfactory import install

from envcheck.gather import Gatherers, Sources, gather
from envcheck.gather.checkout import locate_checkout, read_checkout
from envcheck.gather.driver import NvmlUnavailable, gather_driver
from envcheck.gather.interpreter import gather_interpreter
from envcheck.gather.toolkit import early_nvcc, gather_toolkit, parse_nvcc_version
from envcheck.judge import CHECK_IDS, judge
from envcheck.model import Failure, Status

SUBDIR, MODULE = "python/cutlass_api", "cutlass_api"


def findings_for(facts, policy, **kw):
    return {f.id: f for f in judge(facts, policy, **kw)}


# ---------------------------------------------------------------------------------------------------------------
# The target interpreter


def test_probe_reads_a_real_venv_without_importing_torch(venv_factory, tmp_path, monkeypatch, policy):
    python = venv_factory("torch==2.11.0+cu130", "nvidia-cutlass-dsl==4.3.5", "nvidia-matmul-heuristics", "cuda-bindings")
    mark = tmp_path / "imported"
    env = {**os.environ, "ENVCHECK_TEST_IMPORT_MARK": str(mark)}
    interpreter = gather_interpreter(str(python), env=env, modules=policy.probe_modules)
    assert interpreter.version == tuple(sys.version_info[:3]) and interpreter.in_venv
    assert interpreter.dist("torch").version == "2.11.0+cu130"
    assert interpreter.torch.version == "2.11.0+cu130" and interpreter.torch.cuda == "13.0"
    assert interpreter.dist("nvidia-cutlass-dsl").requires == ("cuda-python>=12.8",)
    assert interpreter.module("cutlass").origin.endswith("nvidia_cutlass_dsl/python_packages/cutlass/__init__.py")
    assert interpreter.module("nvMatmulHeuristics").origin is not None
    assert interpreter.module("cutlass_api").origin is None
    assert not mark.exists(), "the probe imported torch"
    # and the bait works: importing torch in that venv does leave the mark
    subprocess.run([str(python), "-c", "import torch"], env=env, check=True)
    assert mark.exists()


def test_a_cpu_build_of_torch_is_read_as_such(venv_factory, policy):
    python = venv_factory("torch==2.13.0+cpu")
    interpreter = gather_interpreter(str(python))
    assert interpreter.torch.cuda is None
    facts = gather(Sources(python=str(python)))
    assert findings_for(facts, policy)["torch.cuda-build"].status == Status.FAIL


def test_pip_target_install_on_pythonpath_is_the_pth_trap(venv_factory, wheelhouse, tmp_path, policy):
    python = venv_factory("torch==2.11.0+cu130")
    target = tmp_path / "target"
    install(python, wheelhouse, "nvidia-cutlass-dsl==4.3.5", extra=["--target", str(target)])
    env = {**os.environ, "PYTHONPATH": str(target)}
    facts = gather(Sources(python=str(python), env=env))
    interpreter = facts.interpreter
    assert interpreter.dist("nvidia-cutlass-dsl").location == str(target)
    assert interpreter.module("cutlass").origin is None
    finding = findings_for(facts, policy)["cutedsl.importable"]
    assert finding.status == Status.FAIL and ".pth" in finding.found
    # the remedy works: with python_packages on PYTHONPATH, `import cutlass` succeeds in that interpreter
    shipped = f"{target}/nvidia_cutlass_dsl/python_packages"
    assert shipped in finding.remedy.text
    fixed_env = {**os.environ, "PYTHONPATH": f"{target}{os.pathsep}{shipped}"}
    subprocess.run([str(python), "-c", "import cutlass"], env=fixed_env, check=True)
    assert findings_for(gather(Sources(python=str(python), env=fixed_env)), policy)["cutedsl.importable"].status == Status.PASS


def test_wrong_package_and_stale_split_packages(venv_factory, policy):
    wrong = venv_factory("nvidia-cutlass==3.5.0")
    finding = findings_for(gather(Sources(python=str(wrong))), policy)["cutedsl.importable"]
    assert finding.status == Status.FAIL and "nvidia-cutlass 3.5.0 is installed" in finding.found

    stale = venv_factory("nvidia-cutlass-dsl==4.3.5", "nvidia-cutlass-dsl-libs-base==4.4.0")
    by_id = findings_for(gather(Sources(python=str(stale))), policy)
    assert by_id["cutedsl.version"].status == Status.PASS
    assert by_id["cutedsl.importable"].status == Status.FAIL and "libs-base" in by_id["cutedsl.importable"].found


@pytest.mark.parametrize("other, status", [("nvidia-cutlass==3.5.0", Status.FAIL), ("nvidia-cutlass==4.2.0.0", Status.WARN)])
def test_nvidia_cutlass_beside_the_dsl(venv_factory, policy, other, status):
    """3.x installs a top-level `cutlass` that wins over the DSL's .pth entry; 4.x installs cutlass_cppgen."""
    python = venv_factory("nvidia-cutlass-dsl==4.3.5", other)
    finding = findings_for(gather(Sources(python=str(python))), policy)["cutedsl.importable"]
    assert finding.status == status, finding.found


@pytest.mark.slow  # downloads a 4 MB wheel from PyPI and installs it into a fresh venv
@pytest.mark.network
def test_the_real_nvidia_cutlass_wheel_shadows_the_dsl(venv_factory, wheelhouse, tmp_path, policy):
    """The real nvidia-cutlass 3.5.1.0 from PyPI (4 MB), beside a DSL-shaped wheel: `import cutlass` is not the DSL's."""
    real = tmp_path / "real"
    done = subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:", "-d", str(real),
                           "nvidia-cutlass==3.5.1.0"], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"PyPI not reachable: {done.stderr.strip()[-200:]}")
    python = venv_factory("nvidia-cutlass-dsl==4.3.5")
    install(python, real, "nvidia-cutlass==3.5.1.0", extra=["--no-deps"])
    facts = gather(Sources(python=str(python)))
    assert facts.interpreter.module("cutlass").origin.endswith("site-packages/cutlass/__init__.py")
    finding = findings_for(facts, policy)["cutedsl.importable"]
    assert finding.status == Status.FAIL and "nvidia-cutlass 3.5.1.0 is installed" in finding.found


def test_dsl_too_new_and_mixed_cuda_majors(venv_factory, policy):
    python = venv_factory("nvidia-cutlass-dsl==4.4.0", "nvidia-cuda-runtime-cu12", "nvidia-cuda-runtime")
    facts = gather(Sources(python=str(python)))
    by_id = findings_for(facts, policy)
    # no GPU here: the <= 4.3.5 cap (runtime on compute capability 10.x only) is judged as the recipe's, and --strict fails it
    assert by_id["cutedsl.version"].status == Status.WARN and "4.4.0" in by_id["cutedsl.version"].found
    assert "recipe" in by_id["cutedsl.version"].found
    assert findings_for(facts, policy, strict=True)["cutedsl.version"].status == Status.FAIL
    assert by_id["cutedsl.importable"].status == Status.PASS  # 4.4's split package is its own, not stale
    consistency = by_id["packages.consistency"]
    assert consistency.status == Status.FAIL and "CUDA 12" in consistency.found and "CUDA 13" in consistency.found


def test_missing_interpreter_and_broken_interpreter_are_facts(tmp_path):
    with pytest.raises(RuntimeError, match="no interpreter at"):
        gather_interpreter(str(tmp_path / "nope"))
    liar = tmp_path / "liar"
    liar.write_text("#!/bin/sh\necho not json\n")
    liar.chmod(0o755)
    with pytest.raises(RuntimeError, match="not the probe's JSON"):
        gather_interpreter(str(liar))


@pytest.mark.slow
@pytest.mark.skipif(python312() is None, reason="needs a Python >= 3.12 for cutlass_api")
@pytest.mark.parametrize("mode", ["default", "compat"])
def test_editable_cutlass_api_leads_to_its_checkout(mode, tmp_path, cutlass_repo, wheelhouse, build_backend, policy):
    """setuptools' default mode (what fix installs) puts a finder behind a .pth import line, which the probe does not
    run: it reads the finder's MAPPING; compat mode adds a .pth path line."""
    from wheelfactory import make_venv, pip
    python = make_venv(tmp_path / "venv312", python312())
    install(python, wheelhouse, "torch==2.11.0+cu130", "nvidia-cutlass-dsl==4.3.5", "apache-tvm-ffi==0.1.7",
            "torch-c-dlpack-ext", "nvidia-matmul-heuristics", "cuda-python")
    settings = [] if mode == "default" else ["--config-settings", f"editable_mode={mode}"]
    pip(python, "install", "--no-index", "--find-links", str(wheelhouse), "--find-links", str(build_backend), *settings,
        "-e", f"{cutlass_repo}/{SUBDIR}[torch]")
    head = git("rev-parse", "HEAD", cwd=cutlass_repo)
    pinned = replace(policy, cutlass=replace(policy.cutlass, commit=head))
    facts = gather(Sources(python=str(python)))
    finders = [p for p in facts.interpreter.pth_imports if "__editable___cutlass_api" in p.line]
    assert bool(finders) == (mode == "default")
    assert facts.checkout.source == "editable cutlass-api install"
    assert Path(facts.checkout.path) == cutlass_repo and facts.checkout.commit == head
    by_id = findings_for(facts, pinned)
    checks = ["python.version", "torch.version", "torch.cuda-build", "cutedsl.version", "cutedsl.importable",
              "nvgemm.deps", "cutlass.checkout", "cutlass-api.install"]
    # compat mode puts the source folder itself on the path, with the cutlass_api.egg-info its build left there: a
    # second copy of the distribution that Python's importlib.metadata sees too (packages.consistency warns)
    checks += ["packages.consistency"] if mode == "default" else []
    for check in checks:
        assert by_id[check].status == Status.PASS, (check, by_id[check].found)
    # against the real pin, the same checkout is off the pinned commit
    assert findings_for(facts, policy)["cutlass.checkout"].status == Status.FAIL


# ---------------------------------------------------------------------------------------------------------------
# The host: nvcc and NVML


def fake_nvcc(folder: Path, version: str = "13.1.80") -> Path:
    """An nvcc that answers --version as the real one does (tests use only what they build, not this machine's)."""
    major_minor = version.rsplit(".", 1)[0]
    folder.mkdir(parents=True, exist_ok=True)
    nvcc = folder / "nvcc"
    nvcc.write_text(
        "#!/bin/sh\necho 'nvcc: NVIDIA (R) Cuda compiler driver'\n"
        f"echo 'Cuda compilation tools, release {major_minor}, V{version}'\n"
    )
    nvcc.chmod(0o755)
    return nvcc


def test_nvcc_on_path(tmp_path):
    nvcc = fake_nvcc(tmp_path / "bin", "13.0.88")
    toolkit = gather_toolkit({"PATH": str(nvcc.parent)}, None, system_cuda=str(tmp_path / "no-system-cuda"))
    chosen = toolkit.chosen
    assert chosen is not None and chosen.source == "PATH" and chosen.version == "13.0.88"
    assert [c.path for c in toolkit.candidates] == [str(nvcc)]


def test_cuda_home_first_then_path_then_the_system_toolkit_and_a_wheel_nvcc(tmp_path, venv_factory):
    home = fake_nvcc(tmp_path / "cuda-home" / "bin", "13.1.80").parent.parent
    on_path = fake_nvcc(tmp_path / "path-bin", "13.0.88")
    system = fake_nvcc(tmp_path / "system-cuda" / "bin", "12.8.93").parent.parent
    python = venv_factory()
    interpreter = gather_interpreter(str(python))
    fake_nvcc(Path(interpreter.site_dirs[0]) / "nvidia" / "cu13" / "bin", "13.0.48")
    toolkit = gather_toolkit({"CUDA_HOME": str(home), "PATH": str(on_path.parent)}, interpreter, system_cuda=str(system))
    assert [(c.source, c.version) for c in toolkit.candidates] == [
        ("CUDA_HOME", "13.1.80"), ("PATH", "13.0.88"), (str(system), "12.8.93"), ("nvidia-cuda-nvcc wheel", "13.0.48"),
    ]
    assert toolkit.chosen.path == str(home / "bin" / "nvcc")


def test_cuda_home_pointing_nowhere_is_reported(tmp_path):
    toolkit = gather_toolkit({"CUDA_HOME": str(tmp_path / "nothing"), "PATH": ""}, None, system_cuda=str(tmp_path / "none"))
    first = toolkit.candidates[0]
    assert first.source == "CUDA_HOME" and first.version is None and first.error == "no nvcc there"


@pytest.mark.parametrize("text, version", [
    ("Cuda compilation tools, release 13.0, V13.0.88\nBuild cuda_13.0.r13.0/compiler.36424714_0", "13.0.88"),
    ("Cuda compilation tools, release 13.1, V13.1.80", "13.1.80"),
    ("nvcc: command not found", None),
])
def test_parse_nvcc_version(text, version):
    assert parse_nvcc_version(text) == version


def _nvml_present() -> bool:
    try:
        gather_driver()
        return True
    except NvmlUnavailable:
        return False


@pytest.mark.skipif(_nvml_present(), reason="this machine has an NVIDIA driver")
def test_no_nvml_here_is_reported_as_such(policy):
    with pytest.raises(NvmlUnavailable, match="NVML library not found"):
        gather_driver()
    facts = gather(Sources())
    assert isinstance(facts.driver, Failure) and "NVML library not found" in facts.driver.message


# ---------------------------------------------------------------------------------------------------------------
# The CUTLASS checkout, on real repositories


def test_checkout_on_a_branch_clean(cutlass_repo):
    checkout = read_checkout(str(cutlass_repo), "--cutlass-dir", SUBDIR, MODULE)
    assert checkout.is_repo and checkout.is_cutlass and checkout.branch == "cutlass_api"
    assert checkout.commit == git("rev-parse", "HEAD", cwd=cutlass_repo)
    assert not checkout.dirty and checkout.has_package and checkout.package_version == "0.1.0a1"
    assert not checkout.shallow and not checkout.sparse


def test_checkout_detached_at_a_tag_and_dirty(cutlass_repo):
    git("checkout", "-q", "v0.1.0a1^", cwd=cutlass_repo)
    (cutlass_repo / "include" / "cutlass" / "cutlass.h").write_text("// changed\n")
    (cutlass_repo / "untracked.txt").write_text("new\n")
    checkout = read_checkout(str(cutlass_repo), "--cutlass-dir", SUBDIR, MODULE)
    assert checkout.branch is None
    assert set(checkout.dirty_files) == {"include/cutlass/cutlass.h", "untracked.txt"}
    assert checkout.has_package  # the commit before the tag lacks the README, not the package
    assert checkout.commit == git("rev-parse", "HEAD", cwd=cutlass_repo)


def test_checkout_found_from_a_subdirectory(cutlass_repo):
    checkout = read_checkout(str(cutlass_repo / SUBDIR), "--cutlass-dir", SUBDIR, MODULE)
    assert Path(checkout.path) == cutlass_repo and checkout.has_package


def test_shallow_sparse_blobless_clone(cutlass_repo, tmp_path):
    clone = tmp_path / "clone"
    git("-c", "protocol.file.allow=always", "clone", "-q", "--depth", "1", "--filter=blob:none", "--sparse",
        "--branch", "cutlass_api", "--upload-pack=git -c uploadpack.allowFilter=true upload-pack",
        f"file://{cutlass_repo}", str(clone), cwd=tmp_path)
    git("sparse-checkout", "set", SUBDIR, cwd=clone)
    assert not (clone / "include").exists()
    checkout = read_checkout(str(clone), "--cutlass-dir", SUBDIR, MODULE)
    assert checkout.shallow and checkout.sparse and checkout.is_cutlass and checkout.has_package
    assert checkout.remotes == (f"file://{cutlass_repo}",) and not checkout.dirty


def test_unrelated_repository_is_not_cutlass(tmp_path, policy):
    other = tmp_path / "other"
    other.mkdir()
    (other / "README").write_text("hello\n")
    git("init", "-q", cwd=other)
    git("add", "-A", cwd=other)
    git("commit", "-q", "-m", "x", cwd=other)
    git("remote", "add", "origin", "https://example.com/other.git", cwd=other)
    checkout = read_checkout(str(other), "--cutlass-dir", SUBDIR, MODULE)
    assert checkout.is_repo and not checkout.is_cutlass and not checkout.has_package
    facts = gather(Sources(cutlass_dir=str(other)))
    finding = findings_for(facts, policy)["cutlass.checkout"]
    assert finding.status == Status.FAIL and "not CUTLASS" in finding.found and "example.com" in finding.found


def test_plain_directory_empty_repo_and_missing_path(tmp_path):
    plain = tmp_path / "plain"
    (plain / SUBDIR).mkdir(parents=True)
    (plain / SUBDIR / "pyproject.toml").write_text("")
    checkout = read_checkout(str(plain), "--cutlass-dir", SUBDIR, MODULE)
    assert checkout.exists and not checkout.is_repo and checkout.has_package
    empty = tmp_path / "empty"
    empty.mkdir()
    git("init", "-q", cwd=empty)
    assert read_checkout(str(empty), "--cutlass-dir", SUBDIR, MODULE).error == "no commits"
    assert not read_checkout(str(tmp_path / "missing"), "--cutlass-dir", SUBDIR, MODULE).exists


def test_a_checkout_git_will_not_read_as_this_user_is_said_so(cutlass_repo):
    """Owned by someone else, git refuses the repository ("dubious ownership"): a fact naming that, not "no repo"."""
    if os.geteuid() != 0:
        pytest.skip("needs root to give the checkout to another user")
    for root, dirs, files in os.walk(cutlass_repo):
        for name in dirs + files:
            os.lchown(os.path.join(root, name), 65534, 65534)
    os.lchown(cutlass_repo, 65534, 65534)
    with pytest.raises(RuntimeError, match="dubious ownership"):
        read_checkout(str(cutlass_repo), "--cutlass-dir", SUBDIR, MODULE)
    facts = gather(Sources(python=sys.executable, cutlass_dir=str(cutlass_repo)))
    assert isinstance(facts.checkout, Failure) and "dubious ownership" in facts.checkout.message


def test_where_the_checkout_is_looked_for(tmp_path, monkeypatch):
    env = {"ENVCHECK_CACHE_DIR": str(tmp_path / "cache")}
    assert locate_checkout("/flag", {**env, "ENVCHECK_CUTLASS_DIR": "/env"}, None, "cutlass-api", SUBDIR) == ("/flag", "--cutlass-dir")
    assert locate_checkout(None, {**env, "ENVCHECK_CUTLASS_DIR": "/env"}, None, "cutlass-api", SUBDIR) == ("/env", "ENVCHECK_CUTLASS_DIR")
    assert locate_checkout(None, env, None, "cutlass-api", SUBDIR) is None
    (tmp_path / "cache" / "cutlass").mkdir(parents=True)
    assert locate_checkout(None, env, None, "cutlass-api", SUBDIR) == (str(tmp_path / "cache" / "cutlass"), "envcheck's default checkout")


# ---------------------------------------------------------------------------------------------------------------
# The contract: breaking any gatherer still yields a full report


def _raises(*args, **kwargs):
    raise OSError("simulated breakage")


def _hangs(*args, **kwargs):
    time.sleep(5)


@pytest.mark.parametrize("part", ["interpreter", "driver", "toolkit", "checkout"])
@pytest.mark.parametrize("breakage", [_raises, _hangs], ids=["raises", "hangs"])
def test_a_broken_gatherer_still_yields_a_report(part, breakage, policy, cutlass_repo):
    gatherers = replace(Gatherers(), **{part: breakage})
    started = time.monotonic()
    facts = gather(Sources(cutlass_dir=str(cutlass_repo), timeout=1.5), gatherers)
    assert time.monotonic() - started < 4
    failure = getattr(facts, part)
    assert isinstance(failure, Failure) and failure.source == part
    assert ("simulated breakage" if breakage is _raises else "time limit") in failure.message
    findings = judge(facts, policy)
    assert len(findings) == len(CHECK_IDS)
    from envcheck.model import Report
    from envcheck.render import render
    report = Report(policy.id, "python", findings, facts)
    for fmt in ("table", "json", "markdown"):
        assert render(report, fmt)


@pytest.mark.parametrize("porcelain, changed", [
    ("", []),
    (" M include/cutlass/cutlass.h\0", ["include/cutlass/cutlass.h"]),
    ("?? python/cutlass_api/cutlass_api.egg-info/\0", []),
    ("?? python/cutlass_api/cutlass_api/__pycache__/\0?? notes.txt\0", ["notes.txt"]),
    ("?? build/\0 M python/cutlass_api/build.py\0", ["python/cutlass_api/build.py"]),
    ("?? python/cutlass_api/my.egg-info.txt\0", ["python/cutlass_api/my.egg-info.txt"]),
    # -z: paths verbatim (a newline or a space is part of the name), a rename's source is not an entry
    (" M a\nb.txt\0?? c d\0", ["a\nb.txt", "c d"]),
    ("R  new.h\0old.h\0 M x\0", ["new.h", "x"]),
    ("C  copy.h\0orig.h\0", ["copy.h"]),
])
def test_install_byproducts_are_not_local_changes(porcelain, changed):
    from envcheck.gather.checkout import changed_paths
    assert changed_paths(porcelain) == changed


def test_an_nvcc_started_early_is_taken_not_asked_again_and_the_toolkit_is_the_same(tmp_path):
    log = tmp_path / "asked"
    nvcc = fake_nvcc(tmp_path / "bin", "13.0.88")
    nvcc.write_text(nvcc.read_text().replace("#!/bin/sh\n", f"#!/bin/sh\necho x >> '{log}'\n"))
    home = fake_nvcc(tmp_path / "home" / "bin", "13.1.80").parent.parent
    system = str(tmp_path / "no-system-cuda")
    early = early_nvcc({"PATH": str(nvcc.parent)}, system_cuda=system)  # before CUDA_HOME is known: PATH only
    assert list(early) == [(str(nvcc), "PATH")]
    env = {"CUDA_HOME": str(home), "PATH": str(nvcc.parent)}
    taken = gather_toolkit(env, None, system_cuda=system, started=early)
    assert log.read_text() == "x\n"  # the PATH nvcc once: taken from the early start; CUDA_HOME's asked now
    assert taken == gather_toolkit(env, None, system_cuda=system)
    assert [(c.source, c.version) for c in taken.candidates] == [("CUDA_HOME", "13.1.80"), ("PATH", "13.0.88")]


def test_the_hostname_is_the_one_socket_gives():
    import socket

    from envcheck.gather.host import host_of, local_hostname

    assert local_hostname() == socket.gethostname() == host_of(None).hostname
