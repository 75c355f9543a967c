"""--json prints JSON on standard output whatever happens: bad usage and bad input (exit 2), a crash (3), Ctrl-C (130),
and a command with nothing to do its work on (bench without a GPU, exit 1); the exit code stays what it was."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from envcheck.cli import main
from envcheck.jsonanswer import asked_for_json


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
