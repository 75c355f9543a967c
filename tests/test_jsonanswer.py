"""--json prints JSON on standard output whatever happens: bad usage and bad input (exit 2), a crash (3), Ctrl-C (130),
and a command with nothing to do its work on (bench without a GPU, exit 1); the exit code stays what it was. Every
command's object, its answer or its failure, has `status` and `exit_code` at its top, the exit code the one it exits
with (issue 26)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from envcheck.cli import main
from envcheck.jsonanswer import STATUS, answer, asked_for_json
from wheelfactory import build_wheel

DATA = Path(__file__).parent / "data"
STATUSES = {"pass", "warn", "fail", "skip", "error", "crash", "interrupted"}


@pytest.mark.parametrize("args, asked", [
    (["doctor", "--json"], True),
    (["doctor", "--format", "json"], True),
    (["doctor", "--format=json"], True),
    (["fleet", "--format", "table", "reports/"], False),
    (["doctor"], False),
    (["explain", "--", "--json"], False),  # after `--` it is a file's name
    (["doctor", "--format"], False),
    (["diff", "--format", "markdown", "a.json", "json"], False),  # "json" there is a file, not --format's value
])
def test_asked_for_json(args, asked):
    assert asked_for_json(args) is asked


def one_object(text: str) -> dict:
    document = json.loads(text)  # the whole of standard output is one JSON document
    assert isinstance(document, dict)
    return document


@pytest.mark.parametrize("args, words", [
    (["doctor", "--json", "--policy", "/no/such/policy.toml"], "/no/such/policy.toml"),
    (["doctor", "--format", "json", "--bogus"], "No such option: --bogus"),
    (["fix", "--json", "--python", "/no/such/python"], "/no/such/python"),
    (["smoke", "--json", "--python", "/no/such/python"], "/no/such/python"),
    (["smoke", "--json", "--timeout", "0"], "--timeout 0"),
    (["bench", "--json", "--shapes", "0x1x1"], "every dimension must be between 1"),
    (["bench", "--json", "--compare", "one.json"], "--compare: expected two to 26 bench results"),
    (["explain", "--json", "/no/such.log"], "/no/such.log: no such file"),
    (["diff", "--json", "/no/a.json", "/no/b.json"], "/no/a.json"),
    (["fleet", "--json", "/no/such/reports"], "/no/such/reports"),
])
def test_bad_input_with_json_is_a_json_error_on_stdout_and_exit_2(args, words, capsys):
    assert main(args) == 2
    captured = capsys.readouterr()
    document = one_object(captured.out)
    assert document["status"] == "error" and document["exit_code"] == 2 and document["command"] == args[0]
    assert words in document["message"] and words in captured.err  # standard error says it as before


def test_without_json_an_error_leaves_stdout_empty(capsys):
    assert main(["doctor", "--policy", "/no/such/policy.toml"]) == 2
    assert capsys.readouterr().out == ""


def test_a_crash_with_json_is_a_json_object_naming_the_log(monkeypatch, capsys):
    import envcheck.judge as judge_module

    def broken(*args, **kwargs):
        raise RuntimeError("a bug in envcheck")

    monkeypatch.setattr(judge_module, "judge", broken)
    assert main(["doctor", "--json"]) == 3
    captured = capsys.readouterr()
    document = one_object(captured.out)
    assert document["status"] == "crash" and document["exit_code"] == 3 and "a bug in envcheck" in document["message"]
    assert document["log"] in captured.err and "a bug in envcheck" in open(document["log"], encoding="utf-8").read()


def test_an_interrupt_with_json_is_a_json_object(monkeypatch, capsys):
    import envcheck.judge as judge_module

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(judge_module, "judge", interrupted)
    assert main(["doctor", "--json"]) == 130
    assert one_object(capsys.readouterr().out)["status"] == "interrupted"


def test_bench_json_without_a_gpu_prints_json_and_exits_1(tmp_path):
    env = {**os.environ, "ENVCHECK_CACHE_DIR": str(tmp_path)}
    done = subprocess.run([sys.executable, "-m", "envcheck", "bench", "--json"], capture_output=True, text=True,
                          env=env, timeout=60)
    if done.returncode == 0:
        pytest.skip("this machine has a GPU")
    document = one_object(done.stdout)
    assert done.returncode == document["exit_code"] == 1 and document["status"] == "skip"
    assert document["message"].startswith("no GPU to measure on: ") and document["command"] == "bench"
    assert done.stderr == f"envcheck bench: {document['message']}\n"  # the one line people read, as before


def test_fix_undo_json_with_nothing_to_undo_is_json(tmp_path, capsys):
    assert main(["fix", "--undo", "--json", "--no-gpu"]) == 0
    document = one_object(capsys.readouterr().out)
    assert document["outcome"] is None and document["message"].startswith("Nothing to undo: ")


def test_a_command_that_answered_in_json_is_not_answered_twice(capsys):
    """doctor's report is its JSON answer even where it exits 1: nothing is added to it."""
    code = main(["doctor", "--json", "--no-gpu"])
    document = one_object(capsys.readouterr().out)
    assert document["exit_code"] == code and "checks" in document


# --------------------------------------------------------------------------------------------------------------
# Every command's answer: status and exit_code at its top, whatever happens


@pytest.mark.parametrize("document, code, status, top", [
    ({"schema_version": 2, "envcheck_version": "x", "profile": {}}, 1, None,
     ["schema_version", "envcheck_version", "status", "exit_code", "profile"]),
    ({"plan": []}, 0, None, ["status", "exit_code", "plan"]),  # no schema_version: status first
    ({"schema_version": 1, "status": "stale", "exit_code": 9, "x": 1}, 0, "warn", ["schema_version", "status", "exit_code", "x"]),
    ({"schema_version": 1, "command": "bench"}, 130, None, ["schema_version", "command", "status", "exit_code"]),
])
def test_answer_puts_status_and_exit_code_at_the_top(document, code, status, top):
    shown = json.loads(answer(document, code, status))
    assert list(shown) == top and shown["exit_code"] == code
    assert shown["status"] == (status or STATUS[code])


@pytest.mark.parametrize("code, status", [(0, "pass"), (1, "fail"), (2, "error"), (3, "crash"), (130, "interrupted"),
                                          (141, "error")])
def test_each_exit_code_has_its_word(code, status):
    assert json.loads(answer({}, code))["status"] == status


def _saved_verify_lock(tmp_path: Path, *names: str) -> Path:
    """A lock of apache-tvm-ffi 0.1.7 (what venv_factory installed) and, for drift, packages the venv lacks."""
    wheel = build_wheel(tmp_path / "lock" / "wh", "apache-tvm-ffi", "0.1.7", {"tvm_ffi/__init__.py": ""})
    from envcheck.bundle.manifest import sha256_of

    entries = "".join(f'[[packages]]\nname = "{n}"\nversion = "1.0"\nwheels = [{{ name = "{n.replace("-", "_")}-1.0-py3-none-any.whl", '
                      f'url = "https://example.com/{n}-1.0-py3-none-any.whl", hashes = {{ sha256 = "{"0" * 64}" }} }}]\n\n'
                      for n in names)
    lock = tmp_path / "lock" / "pylock.toml"
    lock.write_text('lock-version = "1.0"\ncreated-by = "t"\n\n[[packages]]\nname = "apache-tvm-ffi"\nversion = "0.1.7"\n'
                    f'wheels = [{{ name = "{wheel.name}", path = "wh/{wheel.name}", hashes = {{ sha256 = "{sha256_of(wheel)}" }} }}]\n\n'
                    + entries)
    return lock


def _commands(tmp_path: Path, venv_factory) -> dict:
    """(argv, exit code expected) by name: every command that answers in JSON, each way it can end here (no GPU)."""
    report = tmp_path / "doctor.json"
    assert main(["doctor", "--json", "--no-gpu", "-o", str(report)]) in (0, 1)
    failing, clean = tmp_path / "failing.log", tmp_path / "clean.log"
    failing.write_text((DATA / "smoke" / "no-cutlass-api.log").read_text(encoding="utf-8"), encoding="utf-8")
    clean.write_text("all went well\n", encoding="utf-8")
    venv = venv_factory("apache-tvm-ffi==0.1.7")
    bench = DATA / "bench" / "h200-4"
    return {
        "doctor": (["doctor", "--json", "--no-gpu"], None),
        "doctor-format": (["doctor", "--format", "json", "--no-gpu"], None),
        "smoke": (["smoke", "--json"], 1),
        "smoke-allow-skip": (["smoke", "--json", "--allow-skip"], 0),
        "explain-found": (["explain", str(failing), "--json"], 1),
        "explain-clean": (["explain", str(clean), "--json"], 0),
        "bench": (["bench", "--json"], 1),
        "bench-compare": (["bench", "--compare", str(bench / "rec-llm-warm.json"), str(bench / "bench-llm-warm.json"),
                           "--json"], 0),
        "fix": (["fix", "--json", "--dry-run", "--no-gpu"], None),
        "fix-undo": (["fix", "--undo", "--json", "--no-gpu"], 0),
        "diff": (["diff", str(report), str(report), "--json"], 0),
        "fleet": (["fleet", str(report), "--json"], None),
        "verify-same": (["verify", "--lock", str(_saved_verify_lock(tmp_path / "a")), "--python", str(venv), "--json"], 0),
        "verify-drift": (["verify", "--lock", str(_saved_verify_lock(tmp_path / "b", "cuda-python")), "--python",
                          str(venv), "--json"], 1),
        "refused": (["verify", "--lock", str(tmp_path / "none.toml"), "--json"], 2),
        "refused-output": (["explain", str(clean), "--json", "-o", str(tmp_path / "no" / "such" / "x.json")], 2),
    }


def test_every_command_s_json_has_status_and_exit_code_at_its_top(tmp_path, venv_factory, capsys):
    """Each command line of the table, run as a user runs it: one JSON object on standard output whose exit_code is
    the code it exits with and whose status is one of the words, both before the command's own keys; and -o FILE
    holds the same object. fix, explain and smoke had neither; diff and fleet had no status; verify no --json."""
    table = _commands(tmp_path, venv_factory)
    capsys.readouterr()
    for name, (argv, expected) in table.items():
        code = main(argv)
        document = one_object(capsys.readouterr().out)
        assert code == document["exit_code"] and (expected is None or code == expected), (name, code, document)
        assert document["status"] in STATUSES, (name, document["status"])
        keys = [k for k in document if k not in ("schema_version", "envcheck_version", "command")]
        assert keys[:2] == ["status", "exit_code"], (name, list(document))
        if code in (0, 1) and "-o" not in argv and argv[0] != "fix":  # fix has no -o
            written = tmp_path / f"{name}.json"
            assert main([*argv, "-o", str(written)]) == code and capsys.readouterr().out == ""
            assert json.loads(written.read_text(encoding="utf-8"))["exit_code"] == code, name
