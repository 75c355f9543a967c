"""The README as a newcomer reads it: it starts with the two commands (install and run doctor; install the test
dependencies and run the tests, the very commands `.ci/run` runs), its quick start quotes doctor's table as doctor
prints it today (every check, in order, with a summary that adds up), and the license it names is the one declared
and shipped."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from envcheck.judge import CHECKS

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def code_blocks(text: str) -> list[tuple[str, str]]:
    """(language, body) of every fenced block, in order."""
    return re.findall(r"^```(\w*)\n(.*?)^```$", text, flags=re.M | re.S)


def commands(line: str) -> list[list[str]]:
    """The commands of one shell line joined by `&&`, each as argv."""
    return [shlex.split(part) for part in line.split("&&")]


def ci_commands() -> list[list[str]]:
    lines = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    return [shlex.split(line) for line in lines if line.strip() and not line.lstrip().startswith("#")]


def is_subsequence(part: list, whole: list) -> bool:
    rest = iter(whole)
    return all(any(item == other for other in rest) for item in part)


def test_the_readme_starts_with_the_two_commands():
    head = README.split("\n## ", 1)[0]
    (first, _), (second, _) = [(body.strip(), lang) for lang, body in code_blocks(head)][:2]
    assert "\n" not in first and "\n" not in second  # one line each, to paste
    doctor = commands(first)
    assert any(argv[-3:] == ["pip", "install", "."] for argv in doctor)
    assert doctor[-1][-1] == "doctor" and doctor[-1][0].endswith("envcheck")
    tests = commands(second)
    assert any(argv[-2:] == ["-e", ".[test]"] and "pip" in argv for argv in tests)
    assert tests[-1] == ["python", "-m", "pytest"]


def test_ci_runs_the_readmes_test_command():
    head = README.split("\n## ", 1)[0]
    second = code_blocks(head)[1][1].strip()
    readme = commands(second)
    assert is_subsequence(readme, ci_commands()), (readme, ci_commands())


@pytest.mark.parametrize("readme, found", [
    ([["python", "-m", "pytest"]], True),
    ([["python", "-m", "pytest", "-x"]], False),  # a command .ci/run does not run
    ([["python", "-m", "pytest"], ["python3", "-m", "venv", ".venv"]], False),  # out of order
])
def test_the_subsequence_rule(readme, found):
    assert is_subsequence(readme, [["python3", "-m", "venv", ".venv"], ["python", "-m", "pytest"]]) is found


def doctor_tables() -> list[str]:
    return [body for _, body in code_blocks(README) if re.match(r"envcheck \S+ doctor — profile ", body)]


def test_the_quick_start_quotes_a_failing_and_a_healthy_doctor_run():
    tables = doctor_tables()
    assert len(tables) >= 2
    summaries = [re.search(r"^\d+ checks: .*$", t, flags=re.M).group(0) for t in tables]
    assert any("failed" in s for s in summaries) and any("failed" not in s and "warned" not in s for s in summaries)


@pytest.mark.parametrize("index", [0, 1])
def test_each_quoted_doctor_table_lists_every_check_in_order_and_adds_up(index):
    table = doctor_tables()[index]
    rows = re.findall(r"^  (PASS|WARN|FAIL|SKIP|ERROR)  (\S+)", table, flags=re.M)
    assert [check for _, check in rows] == [check_id for check_id, _ in CHECKS]
    summary = re.search(r"^(\d+) checks: (.*)\.$", table, flags=re.M)
    assert int(summary.group(1)) == len(rows)
    words = {"passed": "PASS", "warned": "WARN", "failed": "FAIL", "skipped": "SKIP", "errors": "ERROR"}
    said = {words[word]: int(n) for n, word in re.findall(r"(\d+) (\w+)", summary.group(2))}
    assert said == {status: sum(1 for s, _ in rows if s == status) for status in {s for s, _ in rows}}


def test_the_license_is_declared_shipped_and_named():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["license"] == "Apache-2.0" and project["license-files"] == ["LICENSE"]
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert "Apache License" in text and "Version 2.0, January 2004" in text
    section = README.split("\n## License\n", 1)[1]
    assert "Apache License, Version 2.0" in section and "LICENSE" in section
