"""`envcheck fix` through its command line: usage mistakes are exit 2 naming the flag; a real SIGKILL mid-plan."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import python312
from test_fix_apply import broken_env, freeze, profile

from envcheck.cli import main


@pytest.mark.parametrize("args, flag", [
    (["--index-url", "http://pypi.example/simple"], "--index-url"),
    (["--index-url", "--no-deps"], "--index-url"),
    (["--find-links", "/no/such/wheelhouse"], "--find-links"),
    (["--cutlass-url", "ext::sh -c id"], "--cutlass-url"),
    (["--cutlass-url", "-oProxyCommand=id"], "--cutlass-url"),
    (["--python", "/no/such/python"], "--python"),
    (["--index-url", "https://x/simple", "--no-index"], "--no-index"),
])
def test_usage_mistakes_exit_2_and_name_the_flag(args, flag, capsys):
    assert main(["fix", "--dry-run", *args]) == 2
    assert flag in capsys.readouterr().err


def cli(*args: str, env=None, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "envcheck", "fix", *args], capture_output=True, text=True,
                          env=env or os.environ.copy(), cwd=Path(__file__).resolve().parent.parent, **kw)


@pytest.mark.slow
@pytest.mark.skipif(python312() is None, reason="needs a Python >= 3.12 for cutlass_api")
def test_json_plan_then_a_real_sigkill_between_steps_then_finish(tmp_path, wheelhouse, build_backend, cutlass_repo):
    python = broken_env(tmp_path, wheelhouse)
    policy_file = profile(tmp_path, cutlass_repo)
    original = freeze(python)
    common = ["--python", str(python), "--policy", str(policy_file), "--cutlass-dir", str(tmp_path / "cutlass"),
              "--find-links", str(wheelhouse), "--find-links", str(build_backend), "--no-index", "--no-gpu"]
    done = cli(*common, "--json")
    assert done.returncode == 1, done.stderr
    plan = json.loads(done.stdout)["plan"]
    assert [s["kind"] for s in plan["steps"]][0] == "pip-uninstall"
    assert freeze(python) == original  # --json without --yes applies nothing

    # SIGKILL as soon as the fetch step reports done: the process dies between two steps, or inside the next one
    process = subprocess.Popen([sys.executable, "-m", "envcheck", "fix", *common, "--yes"], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, cwd=Path(__file__).resolve().parent.parent)
    fetched = False
    for line in process.stderr:
        if fetched and line.strip().startswith("done in"):
            process.send_signal(signal.SIGKILL)
            break
        fetched = fetched or "fetch CUTLASS" in line
    process.wait(timeout=120)
    assert process.returncode == -signal.SIGKILL

    done = cli(*common, "--yes")
    assert "Failed" not in done.stdout, done.stdout + done.stderr
    after = freeze(python)
    assert "apache-tvm-ffi==0.1.7" in after and any(line.startswith("cutlass-api") or line.startswith("-e") for line in after)
    done = cli("--undo", "--yes", "--python", str(python))
    assert done.returncode == 0, done.stdout + done.stderr
    assert freeze(python) == original


def test_the_fix_log_and_the_snapshot_may_hold_credentials_so_they_are_private(tmp_path):
    """An index URL's password: masked in the log, left out of the snapshot; both readable by their owner only."""
    import stat

    import factsbuilder as fb

    from envcheck.fix import snapshot as snapshots
    from envcheck.commands.fix import _open_log
    from envcheck.fix.pip import PipSources

    state = tmp_path / "state"
    log, path = _open_log(state, "fix", "ENVCHECK_STATE_DIR")
    with log:
        log.write("$ python -m pip install --index-url https://me:log-secret-1@host/simple torch\n")
    assert "log-secret-1" not in path.read_text() and "https://***@host/simple" in path.read_text()
    taken = snapshots.record(fb.interpreter(), None, "cutlass_api", sources=PipSources(index_url="https://me:pw-2@host/simple"))
    saved = snapshots.save(taken, state)
    assert snapshots.load(state).sources.index_url == "https://host/simple" and "pw-2" not in saved.read_text()
    assert [stat.S_IMODE(p.stat().st_mode) for p in (path, saved, path.parent)] == [0o600, 0o600, 0o700]


def test_ctrl_c_mid_plan_says_what_was_done_what_was_not_and_how_to_undo(tmp_path, venv_factory, wheelhouse):
    """A real SIGINT to a real `envcheck fix --yes` while its first pip step runs: exit 130 and the account,
    printed by envcheck's own handler (typer's would swallow it)."""
    python = venv_factory("torch==2.11.0+cu130", "cuda-bindings", "nvidia-cutlass-dsl==4.4.0")
    policy_file = tmp_path / "profile.toml"
    policy_file.write_text('extends = "torch-2.11-nvgemm"\n\n[python]\nversion = ">=3.10"\n')
    process = subprocess.Popen(
        [sys.executable, "-m", "envcheck", "fix", "--yes", "--python", str(python), "--policy", str(policy_file),
         "--cutlass-dir", str(tmp_path / "cutlass"), "--no-index", "--find-links", str(wheelhouse), "--no-gpu"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
        # Ctrl-C as a terminal delivers it: a test run in the background of a shell without job control (`cmd &`)
        # starts with SIGINT ignored, which Python then keeps, and the child would inherit that
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    for line in process.stderr:
        if line.startswith("[1/"):
            process.send_signal(signal.SIGINT)
            break
    out, err = process.communicate(timeout=120)
    assert process.returncode == 130, out + err
    assert "Interrupted (Ctrl-C) during: " in out and "Not done: " in out, out
    assert f"Undo with: envcheck fix --undo --python {python}" in out
    assert "Traceback" not in out + err


# --------------------------------------------------------------------------------------------------------------
# A snapshot that is not one: exit 2 naming the file and what to do, never a traceback, nothing changed


def _valid_snapshot(prefix: Path) -> dict:
    from dataclasses import replace

    import factsbuilder as fb

    from envcheck.fix import snapshot as snapshots
    from envcheck.cutlass_fetch import CheckoutState

    interpreter = replace(fb.interpreter(), executable=str(prefix / "bin" / "python"), prefix=str(prefix))
    return snapshots.record(interpreter, CheckoutState(str(prefix.parent / "cutlass"), exists=False), "cutlass_api").to_json()


def _with(document: dict, path: str, value) -> dict:
    """document with the key at path ("a.b.0.c") set to value, or removed when value is _GONE."""
    copy = json.loads(json.dumps(document))
    *parents, last = path.split(".")
    where = copy
    for key in parents:
        where = where[int(key)] if isinstance(where, list) else where[key]
    last = int(last) if isinstance(where, list) else last
    if value is _GONE:
        del where[last]
    else:
        where[last] = value
    return copy


_GONE = object()
# (case, how the file is made from a valid snapshot's text, what the message says is wrong)
CORRUPTIONS = [
    ("truncated", lambda doc, text: text[: len(text) // 2], "not JSON (truncated?)"),
    ("empty", lambda doc, text: "", "not JSON (truncated?)"),
    ("not UTF-8", lambda doc, text: b"\xff\xfe{}", "not UTF-8 text"),
    ("a list", lambda doc, text: "[]", "the document is a list, expected an object"),
    ("a doctor report", lambda doc, text: '{"schema_version": 2, "checks": []}', "schema_version is 2"),
    ("schema true", lambda doc, text: _with(doc, "schema_version", True), "schema_version is true or false, expected a whole number"),
    ("no prefix", lambda doc, text: _with(doc, "prefix", _GONE), "prefix is missing"),
    ("distributions 5", lambda doc, text: _with(doc, "distributions", 5), "distributions is a whole number, expected a list"),
    ("a name of 1", lambda doc, text: _with(doc, "distributions.0.name", 1), "distributions[0].name is a whole number, expected text"),
    ("no version", lambda doc, text: _with(doc, "distributions.0.version", _GONE), "distributions[0].version is missing"),
    ("not a requirement", lambda doc, text: _with(doc, "distributions.0.name", "a b; c"), "distributions[0] is not a distribution"),
    ("checkout text", lambda doc, text: _with(doc, "checkout", "here"), "checkout is text, expected an object or null"),
    ("checkout without exists", lambda doc, text: _with(doc, "checkout.exists", _GONE), "checkout.exists is missing"),
    ("created [1]", lambda doc, text: _with(doc, "created", [1]), "created[0] is a whole number, expected text"),
    ("find_links text", lambda doc, text: _with(doc, "sources.find_links", "/x"), "sources.find_links is text, expected a list"),
    ("status odd", lambda doc, text: _with(doc, "status", "half"), "status is 'half', expected 'in progress' or 'done'"),
    ("nested deeply", lambda doc, text: "[" * 100000 + "]" * 100000, "nested too deeply"),
    ("another environment", lambda doc, text: _with(doc, "prefix", "/elsewhere/venv"), "it records another environment ('/elsewhere/venv')"),
    ("a folder", "folder", "not a regular file"),
    ("a link to another snapshot", "link", "a symbolic link, not the file envcheck wrote"),
]


@pytest.mark.parametrize("case, make, words", CORRUPTIONS, ids=[c[0] for c in CORRUPTIONS])
def test_a_snapshot_that_is_not_one_is_exit_2_naming_it_for_undo_and_fix(tmp_path, case, make, words, capsys):
    from wheelfactory import make_venv

    from envcheck.fix.snapshot import state_dir

    python = make_venv(tmp_path / "venv")
    state = state_dir(str(tmp_path / "venv"))
    state.mkdir(parents=True, mode=0o700)
    snapshot = state / "snapshot.json"
    document = _valid_snapshot(tmp_path / "venv")
    if make == "folder":
        snapshot.mkdir()
    elif make == "link":
        (tmp_path / "other.json").write_text(json.dumps(document))
        snapshot.symlink_to(tmp_path / "other.json")
    else:
        made = make(document, json.dumps(document, indent=2))
        if isinstance(made, dict):
            made = json.dumps(made)
        (snapshot.write_bytes if isinstance(made, bytes) else snapshot.write_text)(made)
    before = snapshot.read_bytes() if snapshot.is_file() else None
    policy_file = tmp_path / "profile.toml"
    policy_file.write_text('extends = "torch-2.11-nvgemm"\n\n[python]\nversion = ">=3.10"\n')
    (tmp_path / "empty").mkdir()
    runs = [("--undo", "--yes", "--python", str(python))]
    if case in ("truncated", "a folder"):
        runs.append(("--undo", "--dry-run", "--python", str(python)))
    if case in ("truncated", "distributions 5", "a link to another snapshot", "another environment"):
        runs.append(("--yes", "--python", str(python), "--policy", str(policy_file), "--no-index", "--find-links",
                     str(tmp_path / "empty"), "--no-gpu"))  # fix reads it before its first change
    for args in runs:
        code = main(["fix", *args])
        err = capsys.readouterr().err
        assert code == 2, f"{args}: {err[-1500:]}"
        assert f"the snapshot {snapshot}: " in err and words in err, err
        assert "Move it away to start over" in err and "Traceback" not in err
        assert (snapshot.read_bytes() if snapshot.is_file() else None) == before  # left as it was: it is evidence
    assert [p.name for p in state.iterdir() if p.name.startswith("snapshot")] == ["snapshot.json"]


# ---------------------------------------------------------------------------------------------------------------
# The words of a plan: the same advice as doctor's, in doctor's terms, wrapped at word boundaries


def _run(*args: str, env: dict, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "envcheck", *args], capture_output=True, text=True, env=env, cwd=cwd,
                          timeout=120)


def _fake_python(root: Path, version: str) -> Path:
    """An interpreter where pyenv keeps its own, answering the version question as Python does."""
    python = root / "versions" / version / "bin" / "python3"
    python.parent.mkdir(parents=True)
    python.write_text(f"#!/bin/sh\necho {version}\n")
    python.chmod(0o755)
    return python


def test_doctor_and_fix_name_the_same_interpreter_for_a_python_too_old(tmp_path):
    """The target's Python is too old for the profile (>=9.9); a 9.9.0 is where pyenv keeps its interpreters: doctor's
    remedy and fix's plan name it, in the same words and commands (they named python3.12 and a pyenv 3.13)."""
    found = _fake_python(tmp_path / "pyenv", "9.9.0")
    profile = tmp_path / "p.toml"
    profile.write_text('extends = "torch-2.11-nvgemm"\n[python]\nversion = ">=9.9"\n')
    env = {**os.environ, "PYENV_ROOT": str(tmp_path / "pyenv"), "HOME": str(tmp_path / "home"), "PATH": "/usr/bin:/bin",
           "ENVCHECK_CACHE_DIR": str(tmp_path / "cache"), "XDG_STATE_HOME": str(tmp_path / "state")}
    doctor = _run("doctor", "--json", "--no-gpu", "--policy", str(profile), env=env, cwd=tmp_path)
    fix = _run("fix", "--dry-run", "--json", "--no-gpu", "--policy", str(profile), env=env, cwd=tmp_path)
    assert doctor.returncode == 1 and fix.returncode == 1, doctor.stderr + fix.stderr
    remedy = next(c for c in json.loads(doctor.stdout)["checks"] if c["id"] == "python.version")["remedy"]
    advice = next(m for m in json.loads(fix.stdout)["plan"]["manual"] if m["check"] == "python.version")
    assert (advice["text"], advice["commands"]) == (remedy["text"], remedy["commands"])
    assert [str(found), "-m", "venv", "nvgemm-venv"] in advice["commands"]
    assert f"Python 9.9.0 is on this machine at {found}" in advice["text"]


def test_fix_says_the_nvcc_found_is_too_old_and_wraps_its_plan_at_columns(tmp_path):
    """nvcc 13.0.88 on PATH against the recipe's >=13.1, <14: too old (it said missing). The text plan keeps to
    COLUMNS, breaking between words only, each command whole on its line."""
    from envcheck.profile import load_builtin, spec_text

    nvcc = tmp_path / "bin" / "nvcc"
    nvcc.parent.mkdir()
    nvcc.write_text("#!/bin/sh\necho 'Cuda compilation tools, release 13.0, V13.0.88'\n")
    nvcc.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k not in ("CUDA_HOME", "CUDA_PATH")}
    env.update(PATH=f"{nvcc.parent}:/usr/bin:/bin", HOME=str(tmp_path / "home"),  # no interpreter shims to ask
               ENVCHECK_CACHE_DIR=str(tmp_path / "cache"), XDG_STATE_HOME=str(tmp_path / "state"))
    done = _run("fix", "--dry-run", "--json", "--no-gpu", "--profile", "torch-2.11-nvgemm", env=env, cwd=tmp_path)
    toolkit = next(s for s in json.loads(done.stdout)["plan"]["offered"] if s["kind"] == "toolkit-install")
    wanted = spec_text(load_builtin("torch-2.11-nvgemm").toolkit)
    assert toolkit["why"] == f"nvcc is too old (found 13.0.88, needs {wanted})", toolkit
    recipe = ("--profile", "torch-2.11-nvgemm")  # without torch the operators stack, whose nvcc 13.0 passes
    wide = _run("fix", "--dry-run", "--no-gpu", *recipe, env={**env, "COLUMNS": "1000"}, cwd=tmp_path).stdout.splitlines()
    lines = _run("fix", "--dry-run", "--no-gpu", *recipe, env={**env, "COLUMNS": "60"}, cwd=tmp_path).stdout.splitlines()
    assert f"why: nvcc is too old (found 13.0.88, needs {wanted})" in " ".join(" ".join(lines).split())
    assert [line for line in lines if "$ " in line] == [line for line in wide if "$ " in line]
    assert all(len(line) <= 60 or "$ " in line or " " not in line.strip() for line in lines), lines
    assert " ".join(" ".join(lines).split()) == " ".join(" ".join(wide).split())
