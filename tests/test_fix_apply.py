"""`envcheck fix` against real broken virtual environments, real wheels and a real CUTLASS-shaped git repository:
fix brings doctor's checks to pass, undo gives back the same `pip freeze --all`, dry-run changes nothing, and a fix
killed at any step boundary ends, when run again, where an uninterrupted one does."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import git, python312
from wheelfactory import install, make_venv

from envcheck.commands.fix import FixOptions, Io, run_fix
from envcheck.fix.apply import run_command
from envcheck.gather import Sources, gather
from envcheck.judge import judge
from envcheck.model import Status

# Real venvs, real pip: slow (run by .ci/run after the default command).
pytestmark = [pytest.mark.slow, pytest.mark.skipif(python312() is None, reason="needs a Python >= 3.12 for cutlass_api")]

# The checks whose failures the fixer owns (the driver, the GPU and nvcc are not its to fix).
OWNED = ("torch.version", "torch.cuda-build", "cutedsl.version", "cutedsl.importable", "nvgemm.deps",
         "cutlass.checkout", "cutlass-api.install", "packages.consistency")


def freeze(python: Path) -> list[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    done = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "--isolated", "--disable-pip-version-check",
         "freeze", "--all"],
        capture_output=True, text=True, check=True, env={**env, "PIP_CONFIG_FILE": os.devnull},
    )
    return sorted(done.stdout.splitlines())


def profile(tmp_path: Path, repo: Path) -> Path:
    """The default profile, pinned to the test repository's cutlass_api commit."""
    commit = git("rev-parse", "HEAD", cwd=repo)
    path = tmp_path / "profile.toml"
    path.write_text(
        f'extends = "torch-2.11-nvgemm"\n\n[cutlass]\nurl = "{repo.as_uri()}"\ncommit = "{commit}"\n\n'
        '[cuda]\ntoolkit-level = "recommended"\n'  # this machine's nvcc is not the fixer's to change
    )
    return path


def tree_state(*folders: Path) -> dict:
    """Every file under the folders with its size and modification time: to prove nothing changed."""
    state = {}
    for folder in folders:
        for root, _dirs, files in os.walk(folder):
            for name in files:
                path = os.path.join(root, name)
                if "__pycache__" in path:
                    continue
                st = os.lstat(path)
                state[path] = (st.st_size, st.st_mtime_ns)
    return state


def owned_findings(python: Path, policy_file: Path, cutlass_dir: Path | None = None) -> dict:
    from envcheck.profile import load

    facts = gather(Sources(python=str(python), cutlass_dir=str(cutlass_dir) if cutlass_dir else None))
    return {f.id: f for f in judge(facts, load(policy_file), no_gpu=True) if f.id in OWNED}


def broken_env(tmp_path: Path, wheelhouse: Path) -> Path:
    """torch 2.11 cu130 with DSL 4.4 and its split libs, the wrong nvidia-cutlass, tvm-ffi 0.1.6, no cutlass_api."""
    python = make_venv(tmp_path / "target", python312())
    install(python, wheelhouse, "torch==2.11.0+cu130", "cuda-bindings", "nvidia-cutlass-dsl==4.4.0",
            "nvidia-cutlass==3.5.0", "apache-tvm-ffi==0.1.6")
    return python


def options(python: Path, policy_file: Path, cutlass_dir: Path, wheelhouse: Path, backend: Path, **kw) -> FixOptions:
    return FixOptions(
        python=str(python), profile=str(policy_file), cutlass_dir=str(cutlass_dir),
        find_links=(str(wheelhouse), str(backend)), no_index=True, no_gpu=True, **kw,
    )


def run(opts: FixOptions, runner=run_command) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run_fix(opts, Io(out=out, err=err, runner=runner))
    return code, out.getvalue(), err.getvalue()


def test_fix_then_undo_a_broken_environment(tmp_path, wheelhouse, build_backend, cutlass_repo):
    python = broken_env(tmp_path, wheelhouse)
    policy_file = profile(tmp_path, cutlass_repo)
    cutlass_dir = tmp_path / "cutlass"
    before = freeze(python)
    assert any(f.status.is_problem for f in owned_findings(python, policy_file).values())

    code, out, err = run(options(python, policy_file, cutlass_dir, wheelhouse, build_backend, yes=True))
    assert code == 0, out + err
    assert "Done:" in out and "Log: " in out
    findings = owned_findings(python, policy_file)
    assert {i: f.status for i, f in findings.items() if f.status.is_problem} == {}, {i: f.found for i, f in findings.items()}
    after = freeze(python)
    assert "nvidia-cutlass-dsl==4.3.5" in after and "apache-tvm-ffi==0.1.7" in after
    assert not any(line.startswith(("nvidia-cutlass==", "nvidia-cutlass-dsl-libs")) for line in after)
    assert "torch==2.11.0+cu130" in after
    assert git("rev-parse", "HEAD", cwd=cutlass_dir) == git("rev-parse", "HEAD", cwd=cutlass_repo)

    # a second run has nothing left to do
    code, out, _ = run(options(python, policy_file, cutlass_dir, wheelhouse, build_backend, yes=True))
    assert code == 0 and "nothing to do" in out

    code, out, err = run(options(python, policy_file, cutlass_dir, wheelhouse, build_backend, yes=True, undo=True))
    assert code == 0, out + err
    assert freeze(python) == before
    assert not cutlass_dir.exists()  # envcheck fetched it, so undo takes it away


def test_dry_run_changes_nothing(tmp_path, wheelhouse, build_backend, cutlass_repo):
    python = broken_env(tmp_path, wheelhouse)
    policy_file = profile(tmp_path, cutlass_repo)
    cutlass_dir = tmp_path / "cutlass"
    watched = (tmp_path / "target", cutlass_repo, Path(os.environ["ENVCHECK_CACHE_DIR"]).parent)
    state = tree_state(*watched)
    before = freeze(python)
    code, out, _ = run(options(python, policy_file, cutlass_dir, wheelhouse, build_backend, dry_run=True))
    assert code == 1  # the environment still fails
    assert "--dry-run: nothing was changed." in out and "uninstall" in out
    assert freeze(python) == before
    assert tree_state(*watched) == state
    assert not cutlass_dir.exists()

    code, out, _ = run(options(python, policy_file, cutlass_dir, wheelhouse, build_backend, as_json=True))
    document = json.loads(out)
    kinds = [s["kind"] for s in document["plan"]["steps"]]
    assert kinds[0] == "pip-uninstall" and kinds[-1] == "cutlass-install" and "cutlass-fetch" in kinds
    for step in document["plan"]["steps"]:
        assert step["what"] and step["why"] and step["commands"]
    assert tree_state(*watched) == state


class Killed(BaseException):
    """Stands for SIGKILL between two steps: nothing after it runs, no cleanup code either."""


def killed_and_finished(tmp_path, wheelhouse, build_backend, cutlass_repo, boundaries) -> None:
    """A fix killed (no cleanup at all) after `boundary` steps, then run again, ends where an uninterrupted one does;
    at the first and the last boundary, undo then gives back the environment as it was before the first run.
    `boundaries(total)` picks the boundaries among 1 .. total-1."""
    policy_file = profile(tmp_path, cutlass_repo)
    reference = broken_env(tmp_path / "reference", wheelhouse)
    original = freeze(reference)
    code, out, _ = run(options(reference, policy_file, tmp_path / "reference-cutlass", wheelhouse, build_backend,
                               yes=True, as_json=True))
    assert code == 0
    expected = freeze(reference)
    total = len(json.loads(out)["plan"]["steps"])
    assert total >= 4

    for boundary in boundaries(total):
        python = broken_env(tmp_path / f"k{boundary}", wheelhouse)
        cutlass_dir = tmp_path / f"k{boundary}-cutlass"
        calls = {"steps": 0}

        import envcheck.fix.apply as apply_module

        original_run_step = apply_module._run_step

        def run_step(step, *args, **kwargs):
            if calls["steps"] == boundary:
                raise Killed()
            calls["steps"] += 1
            return original_run_step(step, *args, **kwargs)

        apply_module._run_step = run_step
        try:
            with pytest.raises(Killed):
                run(options(python, policy_file, cutlass_dir, wheelhouse, build_backend, yes=True))
        finally:
            apply_module._run_step = original_run_step
        code, out, err = run(options(python, policy_file, cutlass_dir, wheelhouse, build_backend, yes=True))
        assert code == 0, f"boundary {boundary}: {out}{err}"
        assert freeze(python) == expected, f"boundary {boundary}"
        if boundary in (1, total - 1):  # the snapshot of the first, interrupted run is the one undo goes back to
            code, out, err = run(options(python, policy_file, cutlass_dir, wheelhouse, build_backend, yes=True, undo=True))
            assert code == 0, f"boundary {boundary}: {out}{err}"
            assert freeze(python) == original, f"boundary {boundary}"


def test_a_fix_killed_before_its_last_step_ends_where_an_uninterrupted_one_does(
    tmp_path, wheelhouse, build_backend, cutlass_repo
):
    """One boundary of the sample, undo checked too: `pytest -m exhaustive` runs every other boundary."""
    killed_and_finished(tmp_path, wheelhouse, build_backend, cutlass_repo, lambda total: (total - 1,))


@pytest.mark.exhaustive
def test_a_fix_killed_at_every_other_step_boundary_ends_where_an_uninterrupted_one_does(
    tmp_path, wheelhouse, build_backend, cutlass_repo
):
    killed_and_finished(tmp_path, wheelhouse, build_backend, cutlass_repo, lambda total: range(1, total - 1))


def test_dry_run_does_not_even_refresh_an_existing_checkouts_index(tmp_path, wheelhouse, build_backend, cutlass_repo):
    import time

    python = broken_env(tmp_path, wheelhouse)
    policy_file = profile(tmp_path, cutlass_repo)
    cutlass_dir = tmp_path / "mine"
    git("clone", "-q", str(cutlass_repo), str(cutlass_dir), cwd=tmp_path)
    git("checkout", "-q", "HEAD~1", cwd=cutlass_dir)
    time.sleep(1.1)
    os.utime(cutlass_dir / "python" / "cutlass_api" / "pyproject.toml")  # stale stat data: git status would refresh
    state = tree_state(cutlass_dir, tmp_path / "target")
    code, out, _ = run(options(python, policy_file, cutlass_dir, wheelhouse, build_backend, dry_run=True))
    assert "fetch CUTLASS" in out and "--dry-run: nothing was changed." in out
    assert tree_state(cutlass_dir, tmp_path / "target") == state


def test_the_toolkit_step_installs_into_its_own_prefix_and_writes_an_env_file(tmp_path, wheelhouse, policy):
    from wheelfactory import build_wheel

    from envcheck.fix.apply import apply
    from envcheck.fix.pip import PipSources, pip_prefix
    from envcheck.fix.plan import make_plan
    from envcheck.fix.steps import PlanOptions
    from envcheck.model import Facts, Failure, Finding, Remedy, Step

    nvcc = "#!/bin/sh\necho 'Cuda compilation tools, release 13.1, V13.1.80'\n"
    toolkit_wheels = tmp_path / "toolkit-wheels"
    build_wheel(toolkit_wheels, "cuda-toolkit", "13.1.0", {"nvidia/cu13/bin/nvcc": nvcc})
    python = make_venv(tmp_path / "target", python312())
    install(python, wheelhouse, "torch==2.11.0+cu130", "cuda-bindings")
    before = freeze(python)
    interpreter = gather(Sources(python=str(python))).interpreter
    prefix = tmp_path / "cuda-13.1"
    finding = Finding("cuda.toolkit", "toolkit", Status.FAIL, "nvcc 13.0", remedy=Remedy(
        "x", steps=(Step("toolkit-install", ("cuda-toolkit[nvcc]==13.1.*",), "nvcc 13.1 is missing"),)))
    plan = make_plan((finding,), Facts(interpreter, Failure("d", ""), Failure("t", ""), None), policy, PlanOptions(
        python=str(python), pip=pip_prefix(str(python), False), state_dir=str(tmp_path / "state"),
        cutlass_dir=str(tmp_path / "c"), cutlass_url="https://github.com/NVIDIA/cutlass",
        sources=PipSources(find_links=(str(toolkit_wheels),), no_index=True), toolkit=True, toolkit_prefix=str(prefix)))
    assert [s.kind for s in plan.steps] == ["toolkit-install"]
    with open(tmp_path / "log", "w") as log:
        assert apply(plan, log).ok
    env_file = prefix / "env.sh"
    (prefix / "nvidia" / "cu13" / "bin" / "nvcc").chmod(0o755)  # the test's hand-made wheel carries no file modes
    done = subprocess.run(["sh", "-c", f". {env_file} && nvcc --version && echo $CUDA_HOME"], capture_output=True, text=True)
    assert "release 13.1" in done.stdout and done.stdout.strip().endswith("nvidia/cu13")
    assert freeze(python) == before  # torch's environment is untouched
    from envcheck.fix import manifest

    assert manifest.changed_since(prefix) == []  # the step listed all that pip and fix put there: undo may remove it
    assert "removed" in manifest.remove_if_untouched(prefix) and not prefix.exists()
