"""The command line as a user meets it: real runs on this machine, exit codes, formats, redaction, start-up weight."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from envcheck.cli import main
from envcheck.judge import CHECK_IDS
from envcheck.model import Finding, Report, Status


def run_cli(*args: str, env=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "envcheck", *args], capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, timeout=120)


def test_doctor_json_on_this_machine():
    done = run_cli("doctor", "--json")
    data = json.loads(done.stdout)
    assert data["schema_version"] == 2 and [c["id"] for c in data["checks"]] == list(CHECK_IDS)
    assert done.returncode == data["exit_code"] == (1 if data["status"] in ("fail", "error") else 0)
    by_id = {c["id"]: c for c in data["checks"]}
    for check in by_id.values():
        assert check["status"] in {"pass", "warn", "fail", "skip", "error"}
        if check["status"] in ("fail", "error", "warn"):
            assert check["remedy"] and check["remedy"]["text"], check["id"]
    if "NVML library not found" in json.dumps(data["facts"]["driver"]):
        assert by_id["cuda.driver"]["status"] == "fail" and by_id["gpu.compute-capability"]["status"] == "fail"


def test_no_gpu_skips_what_needs_a_gpu_and_nothing_else():
    data = json.loads(run_cli("doctor", "--json", "--no-gpu").stdout)
    statuses = {c["id"]: c["status"] for c in data["checks"]}
    assert statuses["cuda.driver"] == statuses["gpu.compute-capability"] == "skip"
    assert statuses["python.version"] != "skip"


def test_table_and_markdown(capsys):
    assert main(["doctor", "--no-gpu"]) in (0, 1)
    table = capsys.readouterr().out
    assert all(check in table for check in CHECK_IDS) and "checks:" in table
    assert main(["doctor", "--format", "markdown", "-v"]) in (0, 1)
    md = capsys.readouterr().out
    assert "| | check | found | wanted |" in md and "`cuda.driver`" in md and "<details>" in md


@pytest.mark.parametrize("args, words", [
    (["doctor", "--format", "yaml"], "--format 'yaml'"),
    (["doctor", "--python", "/no/such/python"], "--python /no/such/python"),
    (["doctor", "--policy", "/no/such/policy.toml"], "/no/such/policy.toml"),
    (["doctor", "--unknown-flag"], "No such option"),
])
def test_bad_usage_exits_2_with_a_message_and_no_traceback(args, words):
    done = run_cli(*args)
    assert done.returncode == 2, done
    assert words in done.stderr and "Traceback" not in done.stderr and done.stdout == ""


def test_a_crash_inside_envcheck_exits_3_with_a_log(monkeypatch, capsys):
    import envcheck.judge as judge_module

    def broken(*args, **kwargs):
        raise RuntimeError("a bug in envcheck")

    monkeypatch.setattr(judge_module, "judge", broken)
    assert main(["doctor"]) == 3
    err = capsys.readouterr().err
    log = Path(re.search(r"The full traceback is in (\S+)", err)[1])
    assert "Traceback" not in err and "a bug in envcheck" in log.read_text()


def test_interrupt_exits_130(monkeypatch, capsys):
    import envcheck.judge as judge_module

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(judge_module, "judge", interrupted)
    assert main(["doctor"]) == 130


@pytest.mark.parametrize("statuses, code", [
    ((Status.PASS,), 0), ((Status.PASS, Status.WARN), 0), ((Status.SKIP,), 0), ((Status.WARN, Status.FAIL), 1),
    ((Status.ERROR,), 1), ((), 0),
])
def test_exit_code_follows_the_worst_finding(statuses, code):
    report = Report("p", "python", tuple(Finding(f"c.{i}", "t", s, "found") for i, s in enumerate(statuses)))
    assert report.exit_code == code


def test_doctor_imports_no_torch_cutlass_or_triton_in_any_process(venv_factory, tmp_path):
    """envcheck's own process (-X importtime lists every import) and the probe (a torch that marks its import)."""
    python = venv_factory("torch==2.11.0+cu130", "nvidia-cutlass-dsl==4.3.5")
    mark = tmp_path / "mark"
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "envcheck", "doctor", "--json", "--python", str(python)],
                          capture_output=True, text=True, env={**os.environ, "ENVCHECK_TEST_IMPORT_MARK": str(mark)})
    imported = {line.split("|")[-1].strip().split(".")[0] for line in done.stderr.splitlines() if line.startswith("import time:")}
    assert imported and not imported & {"torch", "cutlass", "cutlass_api", "triton"}
    assert not mark.exists()
    data = json.loads(done.stdout)
    assert {c["id"]: c["status"] for c in data["checks"]}["cutedsl.version"] == "pass"


def test_secrets_and_home_are_redacted_in_every_format(tmp_path, monkeypatch, capsys):
    """A checkout whose remote carries a token, under a home directory, with a token in the environment."""
    from conftest import git

    home = tmp_path / "home" / "alice"
    repo = home / "work" / "cutlass"
    repo.mkdir(parents=True)
    (repo / "f").write_text("x")
    git("init", "-q", cwd=repo)
    git("add", "-A", cwd=repo)
    git("commit", "-q", "-m", "x", cwd=repo)
    git("remote", "add", "origin", "https://oauth2:ghp_SeCrEtToKeN123@github.com/NVIDIA/cutlass", cwd=repo)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("HF_TOKEN", "hf_AnotherSecretValue")
    monkeypatch.setenv("ENVCHECK_CUTLASS_DIR", f"{repo}/../cutlass")
    monkeypatch.setenv("PYTHONPATH", "hf_AnotherSecretValue")
    for fmt in ("table", "json", "markdown"):
        main(["doctor", "--format", fmt, "-v"])
        out = capsys.readouterr().out
        assert "ghp_SeCrEtToKeN123" not in out and "hf_AnotherSecretValue" not in out, fmt
        assert str(home) not in out and "alice" not in out, fmt
        assert "~/work/cutlass" in out, fmt


def test_doctor_junit_and_github_annotations(tmp_path):
    """The pre-build CI step: a JUnit file with a testcase per check, annotations on stderr beside JSON on stdout."""
    import xml.etree.ElementTree as ET

    junit, summary = tmp_path / "reports" / "doctor.xml", tmp_path / "summary.md"
    done = run_cli("doctor", "--json", "--no-gpu", "--junit", str(junit),
                   env={"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(summary)})
    data = json.loads(done.stdout)
    suite = ET.parse(junit).getroot().find("testsuite")
    cases = suite.findall("testcase")
    assert [c.get("name") for c in cases] == [c["id"] for c in data["checks"]]
    failed = {c.get("name") for c in cases if c.find("failure") is not None}
    assert failed == {c["id"] for c in data["checks"] if c["status"] == "fail"}
    assert int(suite.get("failures")) == len(failed) and int(suite.get("tests")) == len(cases)
    assert ("::error" in done.stderr) == bool(failed)
    assert "envcheck doctor" in summary.read_text()


def test_unwritable_junit_path_is_a_usage_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    done = run_cli("doctor", "--no-gpu", "--junit", str(blocker / "doctor.xml"))
    assert done.returncode == 2 and "--junit" in done.stderr and "Traceback" not in done.stderr


def test_doctor_smoke_without_a_gpu_is_a_quick_skip_in_every_format():
    import time

    started = time.monotonic()
    done = run_cli("doctor", "--json", "--smoke")
    data = json.loads(done.stdout)
    if "NVML library not found" not in json.dumps(data["facts"]["driver"]):
        pytest.skip("this machine has a GPU")
    assert time.monotonic() - started < 10
    assert data["smoke"]["status"] == "skip" and "No GPU" in data["smoke"]["summary"]
    table = run_cli("doctor", "--smoke").stdout
    assert "smoke  SKIP" in table


@pytest.mark.parametrize("command", ["smoke", "fix", "lock", "doctor"])
def test_every_command_refuses_a_python_that_is_not_there(command):
    done = run_cli(command, "--python", "/no/such/python", *(["--dry-run"] if command == "fix" else []))
    assert done.returncode == 2 and "--python /no/such/python" in done.stderr and "Traceback" not in done.stderr
