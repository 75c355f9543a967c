"""The CI renderers: JUnit XML read back the way a JUnit viewer reads it, GitHub annotations, step summary and
outputs, and the CI job templates."""

from __future__ import annotations

import io
import re
import shlex
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import typer.main
import yaml
from junitparser import Error, Failure, JUnitXml, Skipped

from envcheck.render.github import emit_github, github_annotations, step_outputs, step_summary
from envcheck.render.junit import junit_xml, write_junit
from envcheck.cli import app
from envcheck.errors import UsageError
from envcheck.model import Finding, Remedy, Report, Status, Step

REPO = Path(__file__).resolve().parent.parent


def finding(check_id: str, status: Status, found: str = "found it", **kw) -> Finding:
    return Finding(id=check_id, title=check_id.replace(".", " "), status=status, found=found, **kw)


REPORT = Report(
    profile="torch-2.11-nvgemm",
    target="/opt/venv/bin/python",
    findings=(
        finding("python.version", Status.PASS, "3.12.3", wanted=">=3.12"),
        finding("torch.version", Status.PASS, "2.11.0+cu130"),
        finding("cutedsl.version", Status.FAIL, "4.4.0", wanted=">=4.3.0,<=4.3.5", why="ProxyKind was removed in 4.4.0",
                remedy=Remedy("Install a 4.3.x DSL.", commands=(("pip", "install", "nvidia-cutlass-dsl==4.3.5"),),
                              steps=(Step("pip-install", ("nvidia-cutlass-dsl==4.3.5",)),))),
        finding("gpu.compute-capability", Status.SKIP, "skipped: --no-gpu"),
        finding("cuda.driver", Status.SKIP, "skipped: --no-gpu"),
        finding("gpu.kernels", Status.WARN, "SM80 kernels only", wanted="10.0"),
        finding("cutlass.checkout", Status.ERROR, "the check crashed: KeyError 'x'"),
        finding("cutlass-api.install", Status.FAIL, "not importable", details=("looked in /home/alice/.venv",)),
    ),
)


def Smoke():
    from envcheck.model import SmokeResult

    return SmokeResult(status=Status.FAIL, summary="smoke failed: cutlass_api is not importable", cause="cutlass_api missing",
                       cause_id="cutlass-api-missing")


def parse(text: str) -> ET.Element:
    return ET.fromstring(text.encode())


# --------------------------------------------------------------------------------------------------------------
# JUnit


def test_junit_has_one_testcase_per_check_in_report_order():
    root = parse(junit_xml(REPORT))
    cases = root.findall("./testsuite/testcase")
    assert [c.get("name") for c in cases] == [f.id for f in REPORT.findings]
    assert cases[2].get("classname") == "envcheck.cutedsl"


def test_junit_marks_failures_errors_and_skips_where_doctor_does():
    root = parse(junit_xml(REPORT))
    by_name = {c.get("name"): c for c in root.iter("testcase")}
    for f in REPORT.findings:
        case = by_name[f.id]
        assert (case.find("failure") is not None) == (f.status is Status.FAIL), f.id
        assert (case.find("error") is not None) == (f.status is Status.ERROR), f.id
        assert (case.find("skipped") is not None) == (f.status is Status.SKIP), f.id
    failure = by_name["cutedsl.version"].find("failure")
    assert failure.get("message") == "cutedsl version: 4.4.0 (wanted >=4.3.0,<=4.3.5)"
    assert "$ pip install nvidia-cutlass-dsl==4.3.5" in failure.text and "envcheck fix" in failure.text
    assert "WARN" in by_name["gpu.kernels"].find("system-out").text  # a warning passes, and says so


def test_junit_counts_match_what_a_viewer_counts(tmp_path):
    path = tmp_path / "junit.xml"
    path.write_text(junit_xml(REPORT))
    xml = JUnitXml.fromfile(str(path))
    (suite,) = list(xml)
    declared = (suite.tests, suite.failures, suite.errors, suite.skipped)
    assert declared == (8, 2, 1, 2)
    results = [type(r) for case in suite for r in case.result]
    assert (results.count(Failure), results.count(Error), results.count(Skipped)) == (2, 1, 2)
    suite.update_statistics()  # what a viewer recomputes from the testcases
    assert (suite.tests, suite.failures, suite.errors, suite.skipped) == declared
    root = parse(path.read_text())
    assert [root.get(k) for k in ("tests", "failures", "errors", "skipped")] == ["8", "2", "1", "2"]


def test_junit_includes_the_smoke_run_when_there_was_one():
    report = Report(REPORT.profile, REPORT.target, REPORT.findings[:2], smoke=Smoke())
    cases = parse(junit_xml(report)).findall("./testsuite/testcase")
    assert [c.get("name") for c in cases] == ["python.version", "torch.version", "smoke"]
    assert "cutlass_api is not importable" in cases[-1].find("failure").get("message")


def test_junit_escapes_what_xml_cannot_hold():
    nasty = 'a <tag> & "quote" \x1b[31m red\x00\nsecond line'
    report = Report("p", "t", (finding("x.y", Status.FAIL, nasty),))
    failure = parse(junit_xml(report)).find("./testsuite/testcase/failure")
    assert failure.get("message") == 'x y: a <tag> & "quote" [31m red\nsecond line'


def test_an_empty_report_is_still_a_valid_suite():
    root = parse(junit_xml(Report("p", "t", ())))
    assert root.find("testsuite").get("tests") == "0"


def test_write_junit_redacts_and_names_an_unwritable_file(tmp_path):
    path = tmp_path / "out" / "junit.xml"
    path.parent.mkdir()  # envcheck makes no folder for it
    write_junit(REPORT, path, redact=lambda text: text.replace("/home/alice", "~"))
    assert "/home/alice" not in path.read_text() and "~/.venv" in path.read_text()
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(UsageError, match="--junit"):
        write_junit(REPORT, blocker / "junit.xml")


def test_write_junit_redacts_home_paths_by_default(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", "/home/alice")
    path = tmp_path / "junit.xml"
    write_junit(REPORT, path)
    assert "alice" not in path.read_text()


# --------------------------------------------------------------------------------------------------------------
# GitHub Actions


def test_annotations_only_for_what_needs_attention():
    lines = github_annotations(REPORT).splitlines()
    kinds = [re.match(r"::(\w+) ", line)[1] for line in lines]
    assert kinds == ["error", "warning", "error", "error"]
    assert lines[0].startswith("::error title=envcheck cutedsl.version%3A fail::cutedsl version: 4.4.0")


def test_annotations_escape_workflow_command_syntax():
    report = Report("p", "t", (finding("a.b", Status.FAIL, "100% broken\nnext, line: here"),))
    (line,) = github_annotations(report).splitlines()
    assert "100%25 broken%0Anext, line: here" in line and "\n" not in line


def test_step_summary_has_a_row_per_check_and_the_fixes():
    text = step_summary(REPORT)
    assert text.startswith("### envcheck doctor — profile `torch-2.11-nvgemm`")
    assert "❌ required checks failed (2 pass, 2 skip, 1 warn, 2 fail, 1 error)" in text
    assert sum(line.startswith("| ") and "`" in line for line in text.splitlines()) == len(REPORT.findings)
    assert "`pip install nvidia-cutlass-dsl==4.3.5`" in text


def test_step_outputs():
    assert step_outputs(REPORT).splitlines()[:3] == ["worst=error", "exit-code=1", "pass=2"]


def test_emit_github_does_nothing_outside_github_actions(tmp_path):
    out = io.StringIO()
    assert emit_github(REPORT, {"GITHUB_STEP_SUMMARY": str(tmp_path / "s")}, out) is False
    assert out.getvalue() == "" and not (tmp_path / "s").exists()


def test_emit_github_writes_annotations_summary_and_outputs(tmp_path):
    summary, outputs = tmp_path / "summary.md", tmp_path / "output"
    summary.write_text("earlier step\n")
    env = {"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(summary), "GITHUB_OUTPUT": str(outputs),
           "GITHUB_TOKEN": "ghp_secretsecretsecret"}
    report = Report("p", "t", (finding("a.b", Status.FAIL, "token ghp_secretsecretsecret in /home/alice/x"),))
    out = io.StringIO()
    assert emit_github(report, env, out) is True
    assert out.getvalue().startswith("::error ") and "ghp_secret" not in out.getvalue() and "alice" not in out.getvalue()
    assert summary.read_text().startswith("earlier step\n### envcheck doctor")  # appended, never replaced
    assert "worst=fail" in outputs.read_text()


def test_emit_github_survives_an_unwritable_summary(tmp_path):
    out = io.StringIO()
    env = {"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(tmp_path / "missing" / "dir" / "x")}
    assert emit_github(REPORT, env, out) is True
    assert "::warning title=envcheck::cannot append to $GITHUB_STEP_SUMMARY" in out.getvalue()


# --------------------------------------------------------------------------------------------------------------
# The CI job templates


def load(name: str) -> dict:
    return yaml.safe_load((REPO / "templates" / name).read_text())


def scripts(node) -> list[str]:
    """Every shell line of a workflow: GitHub's `run` values and GitLab's `script` lists, wherever they are."""
    found = []
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "run" and isinstance(value, str):
                found.extend(value.splitlines())
            elif key == "script" and isinstance(value, list):
                found.extend(str(line) for line in value)
            else:
                found.extend(scripts(value))
    elif isinstance(node, list):
        for item in node:
            found.extend(scripts(item))
    return found


def envcheck_commands(data) -> list[list[str]]:
    """Every `envcheck ...` command in a template, as argument lists after the program."""
    commands = []
    for line in scripts(data):
        words = shlex.split(line)
        if words and Path(words[0]).name == "envcheck":
            commands.append(words[1:])
    return commands


def doctor_options() -> set[str]:
    command = typer.main.get_command(app).commands["doctor"]
    return {opt for param in command.params for opt in param.opts}


def test_github_job_runs_doctor_without_a_gpu_and_keeps_the_junit():
    workflow = load("github-actions.yml")
    steps = workflow["jobs"]["envcheck"]["steps"]
    (doctor,) = [s for s in steps if "envcheck doctor" in s.get("run", "")]
    assert "--no-gpu" in doctor["run"] and "--junit envcheck-junit.xml" in doctor["run"]
    (upload,) = [s for s in steps if s.get("uses", "").startswith("actions/upload-artifact")]
    assert upload["if"] == "always()" and upload["with"]["path"] == "envcheck-junit.xml"
    assert workflow["jobs"]["image"]["needs"] == "envcheck"


def test_gitlab_job_runs_doctor_without_a_gpu_and_reports_the_junit():
    jobs = load("gitlab-ci.yml")
    script = jobs["envcheck"]["script"]
    assert any("envcheck doctor --no-gpu" in line and "--junit envcheck-junit.xml" in line for line in script)
    assert jobs["envcheck"]["artifacts"]["reports"]["junit"] == "envcheck-junit.xml"
    assert jobs["envcheck"]["artifacts"]["when"] == "always"


@pytest.mark.parametrize("name", ["github-actions.yml", "gitlab-ci.yml"])
def test_every_envcheck_command_in_the_templates_parses(name, tmp_path, monkeypatch):
    """Each job's lines in order, in a fresh folder (the job's checkout; the runner's own folders, ${RUNNER_TEMP},
    exist): its `mkdir -p` lines make their folders, and every envcheck command parses there, a file it writes in a
    folder that exists (envcheck makes none: `-o build/Dockerfile` needs the `mkdir -p build` before it)."""
    data = load(name)
    assert {c[0] for c in envcheck_commands(data)} >= {"lock", "verify", "doctor", "dockerfile"}
    group = typer.main.get_command(app)
    jobs = data["jobs"] if "jobs" in data else {k: v for k, v in data.items() if isinstance(v, dict) and "script" in v}
    for job_name, job in jobs.items():
        checkout = tmp_path / job_name
        checkout.mkdir()
        monkeypatch.chdir(checkout)
        for line in scripts(job):
            words = [re.sub(r"\$\{\w+\}", str(tmp_path), word) for word in shlex.split(line)]
            if words[:2] == ["mkdir", "-p"]:
                for folder in words[2:]:
                    (checkout / folder).mkdir(parents=True, exist_ok=True)
            elif words and Path(words[0]).name == "envcheck":
                # raises on an unknown option, a missing value, or a file to write in a folder not made before
                group.commands[words[1]].make_context(words[1], words[2:])


# --------------------------------------------------------------------------------------------------------------
# A real doctor run, as JUnit


def test_a_real_doctor_report_becomes_one_testcase_per_check(venv_factory, policy, tmp_path):
    """doctor on a real venv with a broken stack (DSL 4.4.0, no cutlass_api), without a GPU: every check is a
    testcase, and exactly the checks doctor failed carry a <failure>."""
    from envcheck.diagnose import diagnose

    python = venv_factory("torch==2.11.0+cu130", "nvidia-cutlass-dsl==4.4.0", "apache-tvm-ffi==0.1.7")
    report = diagnose(str(python), None, policy, no_gpu=True)
    assert any(f.status is Status.FAIL for f in report.findings)
    path = tmp_path / "junit.xml"
    write_junit(report, path)
    (suite,) = list(JUnitXml.fromfile(str(path)))
    cases = {case.name: case for case in suite}
    assert list(cases) == [f.id for f in report.findings]
    for f in report.findings:
        kinds = {type(r) for r in cases[f.id].result}
        assert (Failure in kinds) == (f.status is Status.FAIL), f.id
        assert (Error in kinds) == (f.status is Status.ERROR), f.id
        assert (Skipped in kinds) == (f.status is Status.SKIP), f.id
    declared = (suite.tests, suite.failures, suite.errors, suite.skipped)
    suite.update_statistics()
    assert declared == (suite.tests, suite.failures, suite.errors, suite.skipped)
