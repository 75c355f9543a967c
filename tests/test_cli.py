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
    assert "envcheck: interrupted" in capsys.readouterr().err  # envcheck's own handler ran, not typer's


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
        main(["doctor", "--format", fmt, "-v", "--profile", "torch-2.11-nvgemm"])  # the recipe reads the checkout
        out = capsys.readouterr().out
        assert "ghp_SeCrEtToKeN123" not in out and "hf_AnotherSecretValue" not in out, fmt
        assert str(home) not in out and "alice" not in out, fmt
        assert "~/work/cutlass" in out, fmt


def test_doctor_junit_and_github_annotations(tmp_path):
    """The pre-build CI step: a JUnit file with a testcase per check, annotations on stderr beside JSON on stdout."""
    import xml.etree.ElementTree as ET

    junit, summary = tmp_path / "reports" / "doctor.xml", tmp_path / "summary.md"
    junit.parent.mkdir()  # envcheck makes no folder for --junit
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


# --------------------------------------------------------------------------------------------------------------
# Standard output and error that cannot take what envcheck writes (issue 15): real processes, real pipes, /dev/full


def test_a_terminal_that_cannot_encode_gets_escapes_not_a_crash():
    """PYTHONIOENCODING=ascii: the table's "—" is written as \\u2014 (it was a UnicodeEncodeError, exit 3)."""
    done = run_cli("doctor", "--no-gpu", env={"PYTHONIOENCODING": "ascii"})
    assert done.returncode in (0, 1), done.stderr
    assert "doctor \\u2014 profile" in done.stdout and "Traceback" not in done.stderr and "internal error" not in done.stderr


@pytest.mark.parametrize("argv", [["doctor", "--json", "--no-gpu"], ["doctor", "--no-gpu", "-v"], ["--help"],
                                  ["explain", "--help"]])
def test_a_full_disk_is_exit_2_saying_so(argv):
    """> /dev/full: one line that says what could not be written and why, exit 2, no traceback (it was exit 3)."""
    with open("/dev/full", "w") as full:
        done = subprocess.run([sys.executable, "-m", "envcheck", *argv], stdout=full, stderr=subprocess.PIPE,
                              text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    assert done.stderr == "envcheck: error: cannot write standard output: no space left on device\n"


@pytest.mark.parametrize("rich", ["1", "0"])
@pytest.mark.parametrize("argv", [["--help"], ["explain", "--help"], ["doctor", "--json", "--no-gpu"],
                                  ["doctor", "--no-gpu"], ["fix", "--dry-run", "--no-gpu"]])
def test_a_reader_that_went_away_ends_the_run_quietly_with_141(argv, rich):
    """`envcheck ... | head` with the pipe closed before envcheck writes: exit 141 (128 + SIGPIPE, as git and coreutils
    end) and nothing on stderr (it was BrokenPipeError, exit 3, or rich's exit 1). With and without rich's help."""
    read, write = os.pipe()
    os.close(read)  # the reader is gone before the first write
    try:
        done = subprocess.run([sys.executable, "-m", "envcheck", *argv], stdout=write, stderr=subprocess.PIPE,
                              text=True, timeout=120, env={**os.environ, "TYPER_USE_RICH": rich})
    finally:
        os.close(write)
    assert done.returncode == 141 and done.stderr == "", done.stderr


def test_head_closing_the_pipe_early_is_quiet():
    """The pipeline itself: head takes one line and exits while envcheck still writes a long help."""
    done = subprocess.run(["bash", "-c", "set -o pipefail; for i in 1 2 3 4 5; do "
                                         f"'{sys.executable}' -m envcheck fix --help | head -c 1 > /dev/null; "
                                         "echo \"rc=$?\"; done"], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "COLUMNS": "20"})
    assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr and "Error" not in done.stderr
    assert set(done.stdout.split()) <= {"rc=0", "rc=141"}, done.stdout


def test_a_closed_stdout_is_said_and_a_closed_stderr_is_only_quiet():
    """`>&-`: the result cannot be written: exit 2 saying so. `2>&-`: diagnostics go nowhere, the result is whole."""
    closed_out = subprocess.run(["bash", "-c", f"'{sys.executable}' -m envcheck doctor --no-gpu >&-"],
                                capture_output=True, text=True, timeout=120)
    assert closed_out.returncode == 2 and closed_out.stderr == "envcheck: error: cannot write standard output: it is closed\n"
    closed_err = subprocess.run(["bash", "-c", f"'{sys.executable}' -m envcheck doctor --no-gpu --json 2>&-"],
                                capture_output=True, text=True, timeout=120)
    assert closed_err.returncode in (0, 1) and json.loads(closed_err.stdout)["schema_version"] == 2


# --------------------------------------------------------------------------------------------------------------
# A file to write in a folder that does not exist (issue 26): exit 2 naming it, nothing made, on every command


WRITES = ("-o", "--junit", "--plot")  # every option naming a file a command writes
# What each command that writes a file needs besides (the check runs as the option is parsed: none of it is read).
WRITER_ARGS = {"doctor": ["--no-gpu"], "smoke": [], "explain": ["some.log"], "bench": [], "lock": [],
               "verify": ["--lock", "pylock.toml"], "bundle": ["--profile", "torch-2.11-nvgemm"], "dockerfile": [],
               "diff": ["a.json", "b.json"], "fleet": ["reports"]}


def _writers() -> list[tuple[str, str]]:
    import typer

    from envcheck.cli import app

    group = typer.main.get_command(app)
    return [(name, flag) for name, command in sorted(group.commands.items()) for param in command.params
            for flag in WRITES if flag in param.opts]


def test_every_command_that_writes_a_file_is_in_the_table():
    """A command given -o later is checked below too: it must be named here first."""
    assert {name for name, _ in _writers()} == set(WRITER_ARGS)
    assert {"verify", "explain"} <= {name for name, flag in _writers() if flag == "-o"}


@pytest.mark.parametrize("command, flag", _writers())
def test_a_file_in_a_folder_that_does_not_exist_is_exit_2_naming_it_and_nothing_is_made(command, flag, tmp_path,
                                                                                       capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "no" / "such" / "out.png"
    assert main([command, *WRITER_ARGS[command], flag, str(path)]) == 2
    err = capsys.readouterr().err
    assert f"{flag} {path}: the folder {path.parent} does not exist" in err and "Traceback" not in err
    assert list(tmp_path.iterdir()) == []  # not the folder, not a temporary, not a log
