"""diff and fleet on real reports: real doctor runs on real venvs (the stack's small wheels, a real cutlass_api
checkout), varied one package at a time; plus the node formats (prom, npd) read by their consumers' own parsers."""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
from pathlib import Path

import pytest

from conftest import git, python312
from mutations import applied, mutations, spelled
from wheelfactory import pip

from envcheck.cli import main
from envcheck.errors import UsageError
from envcheck.fleet import Fleet, Group, diff, merge, read_node, read_nodes
from envcheck.fleet.node import Node
from envcheck.render.fleet import render_diff, render_fleet
from envcheck.own import own_dependencies

# A test that builds its own real venv with an editable cutlass_api (about 30 s on a 2-core machine) is slow.
slow = pytest.mark.slow
DATA = Path(__file__).parent / "data" / "fleet"

STACK = ("torch==2.11.0+cu130", "nvidia-cutlass-dsl==4.3.5", "apache-tvm-ffi==0.1.7", "torch-c-dlpack-ext==0.1.5",
         "nvidia-matmul-heuristics==0.1.0.27", "cuda-python==13.3.1")


@pytest.fixture
def node_venv(venv_factory, cutlass_repo, build_backend, tmp_path):
    """A venv where every check doctor can run without a GPU passes, and the profile that says so (this machine's
    nvcc is 13.0, so the toolkit is a recommendation here)."""
    python = python312()
    if python is None:
        pytest.skip("cutlass_api needs Python >= 3.12 and none is on this machine")
    target = venv_factory(*STACK, python=python)
    pip(target, "install", "--no-deps", "--no-index", "--find-links", str(build_backend), "-e", str(cutlass_repo / "python" / "cutlass_api"))
    commit = git("rev-parse", "HEAD", cwd=cutlass_repo)
    profile = tmp_path / "profile.toml"
    profile.write_text(f'extends = "torch-2.11-nvgemm"\n\n[cuda]\ntoolkit-level = "recommended"\n\n'
                       f'[cutlass]\nurl = "{cutlass_repo.as_uri()}"\ncommit = "{commit}"\n')
    return target, profile


def doctor(target: Path, profile: Path, out: Path, *extra: str) -> int:
    return main(["doctor", "--json", "--no-gpu", "--python", str(target), "--policy", str(profile), "-o", str(out), *extra])


@pytest.fixture
def reports(node_venv, wheelhouse, tmp_path):
    """Five nodes: three identical good ones, one with an older tvm-ffi, one with DSL 4.4.0 (and its split libs)."""
    target, profile = node_venv
    folder = tmp_path / "reports"
    folder.mkdir()  # -o writes into a folder that exists
    assert doctor(target, profile, folder / "node1.json") == 0
    shutil.copy(folder / "node1.json", folder / "node2.json")
    shutil.copy(folder / "node1.json", folder / "node3.json")
    pip(target, "install", "--no-deps", "--no-index", "--find-links", str(wheelhouse), "apache-tvm-ffi==0.1.6")
    # cutlass_api's tvm-ffi pin is the recipe's beside DSL 4.3.5 (a warning): a team bound to the recipe fails it
    assert doctor(target, profile, folder / "node4.json") == 0
    assert doctor(target, profile, folder / "node4.json", "--strict") == 1
    pip(target, "install", "--no-deps", "--no-index", "--find-links", str(wheelhouse), "apache-tvm-ffi==0.1.7",
        "nvidia-cutlass-dsl==4.4.0", "nvidia-cutlass-dsl-libs-base==4.4.0")
    # --strict: without a GPU the DSL <= 4.3.5 cap is judged as the recipe's (a warning); a team bound to it fails it
    assert doctor(target, profile, folder / "node5.json", "--strict") == 1
    return folder


@slow
def test_doctor_writes_a_host_object_and_anonymizes_the_hostname(node_venv, tmp_path):
    target, profile = node_venv
    assert doctor(target, profile, tmp_path / "a.json", "--anonymize") == 0
    host = json.loads((tmp_path / "a.json").read_text())["host"]
    assert host["hostname"].startswith("sha256:") and len(host["hostname"]) == 23
    assert set(host) >= {"hostname", "driver", "gpus", "gpu_uuids"}
    assert doctor(target, profile, tmp_path / "b.json") == 0
    import socket
    assert json.loads((tmp_path / "b.json").read_text())["host"]["hostname"] == socket.gethostname()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary file left behind


@slow
def test_fleet_groups_nodes_by_outcome_counts_checks_and_names_outliers(reports, capsys):
    fleet = merge(read_nodes([reports]))
    assert [(len(g.nodes), g.failed) for g in fleet.groups] == [(3, False), (1, True), (1, True)]
    warned = [f"{id_} warn" for id_, status, _ in read_node(reports / "node1.json").checks if status == "warn"]
    outcome = fleet.groups[0].outcome  # "all pass" only where nothing warned (this machine's nvcc may warn)
    assert (outcome == "all pass") if not warned else outcome.startswith(warned[0]), outcome
    assert fleet.groups[0].nodes == ("node1", "node2", "node3")
    outcomes = {g.nodes: g.outcome for g in fleet.groups[1:]}
    assert "nvgemm.deps fail" in outcomes[("node4",)] and "0.1.6" in outcomes[("node4",)]
    assert "cutedsl.version fail" in outcomes[("node5",)]
    assert fleet.failed == ("node4", "node5") and fleet.exit_code == 1
    assert dict(dict(fleet.checks)["cutedsl.version"]) == {"pass": 4, "fail": 1}
    assert [(o.node, o.fact, o.value, o.majority) for o in fleet.outliers] == [("node5", "dsl", "4.4.0", "4.3.5")]
    assert dict(fleet.smoke) == {"none": 5}

    assert main(["fleet", str(reports)]) == 1
    out = capsys.readouterr().out
    assert f"3 nodes: {outcome[:40]}" in out and "node5: dsl 4.4.0 (majority: 4.3.5)" in out and "2 of 5 nodes fail." in out
    assert main(["fleet", "--json", *(str(reports / f"node{i}.json") for i in (1, 2))]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["groups"] == [{"outcome": outcome, "failed": False, "count": 2, "nodes": ["node1", "node2"]}]
    assert main(["fleet", "--format", "markdown", str(reports)]) == 1
    assert "### envcheck fleet: 2 of 5 nodes fail" in capsys.readouterr().out


@slow
def test_diff_names_the_regressions_first(reports, capsys):
    result = diff(read_node(reports / "node1.json"), read_node(reports / "node5.json"))
    assert result.exit_code == 1
    first = result.changes[0]
    assert (first.kind, first.before, first.after, first.regression) == ("outcome", "0", "1", True)
    regressed = {c.subject for c in result.regressions}
    assert {"cutedsl.version", "doctor exit code"} <= regressed
    dsl = next(c for c in result.changes if c.kind == "dsl")
    assert (dsl.before, dsl.after) == ("4.3.5", "4.4.0")
    added = next(c for c in result.changes if c.subject == "nvidia-cutlass-dsl-libs-base")
    assert (added.before, added.after, added.regression) == ("", "4.4.0", False)
    # The other way round, B is the better one: nothing regresses.
    assert diff(read_node(reports / "node5.json"), read_node(reports / "node1.json")).exit_code == 0
    assert main(["diff", str(reports / "node1.json"), str(reports / "node2.json")]) == 0
    assert "no differences" in capsys.readouterr().out
    assert main(["diff", "--format", "markdown", str(reports / "node1.json"), str(reports / "node4.json")]) == 1
    assert re.search(r"\| ❌ regression \| `nvgemm.deps` \| pass \(.+\) \| fail \(.*0\.1\.6.*\) \|", capsys.readouterr().out)


@slow
def test_diff_a_report_against_a_lock_names_the_drift(reports, node_venv, wheelhouse, tmp_path, capsys):
    lock = tmp_path / "pylock.toml"
    target, profile = node_venv
    # node1's environment, locked live (the venv now has DSL 4.4.0: lock from a copy of node1's stack instead).
    assert main(["lock", "--profile", str(profile), "--no-index", "--find-links", str(wheelhouse), "-o", str(lock)]) == 0
    assert main(["diff", "--json", str(lock), str(reports / "node5.json")]) == 1
    data = json.loads(capsys.readouterr().out)
    regressions = {(c["kind"], c["subject"]) for c in data["changes"] if c["regression"]}
    assert ("dsl", "nvidia-cutlass-dsl") in regressions


# --------------------------------------------------------------------------------------------------------------
# diff as people read it: both values of a changed check; envcheck's own dependencies left out (a real H200 report,
# changed one value at a time)

H200 = DATA / "h200-doctor14.json"


def changed(tmp_path: Path, name: str, change) -> Path:
    data = json.loads(H200.read_text(encoding="utf-8"))
    change(data)
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def older_python(data: dict) -> None:
    check = next(c for c in data["checks"] if c["id"] == "python.version")
    check.update(status="fail", found="Python 3.10.14")
    data["exit_code"] = 1


def with_packages(**versions: str):
    def change(data: dict) -> None:
        data["facts"]["interpreter"]["distributions"] += [{"name": n, "version": v} for n, v in versions.items()]
    return change


def test_diff_shows_what_a_changed_check_found_on_each_side(tmp_path, capsys):
    b = changed(tmp_path, "b", older_python)
    result = diff(read_node(H200), read_node(b))
    check = next(c for c in result.changes if c.subject == "python.version")
    assert (check.found_before, check.found_after, check.regression) == ("Python 3.12.3", "Python 3.10.14", True)
    assert main(["diff", str(H200), str(b)]) == 1
    out = capsys.readouterr().out
    assert re.search(r"REGRESSION\s+python\.version\s+pass \(Python 3\.12\.3\) -> fail \(Python 3\.10\.14\)", out), out
    assert main(["diff", "--format", "markdown", str(H200), str(b)]) == 1
    assert "| `python.version` | pass (Python 3.12.3) | fail (Python 3.10.14) |" in capsys.readouterr().out
    assert main(["diff", "--json", str(H200), str(b)]) == 1
    found = next(c for c in json.loads(capsys.readouterr().out)["changes"] if c["subject"] == "python.version")
    assert (found["before"], found["after"], found["found_before"], found["found_after"]) == (
        "pass", "fail", "Python 3.12.3", "Python 3.10.14")


def test_envcheck_s_own_dependencies_are_read_from_its_installed_metadata():
    own = own_dependencies()
    assert {"nvgemm-envcheck", "typer", "packaging", "gitpython", "gitdb", "nvidia-ml-py"} <= own  # gitdb: gitpython's
    assert not own & {"torch", "nvidia-cutlass-dsl", "pytest", "matplotlib"}  # the stack, and extras, are not its own


def test_diff_leaves_out_envcheck_s_own_dependencies_unless_asked(tmp_path, capsys):
    a = changed(tmp_path, "a", with_packages(typer="0.29.2", click="8.3.0", numpy="2.3.0"))
    b = changed(tmp_path, "b", with_packages(typer="0.30.0", click="8.3.0", numpy="2.4.0"))
    assert main(["diff", str(a), str(b)]) == 0
    out = capsys.readouterr().out
    assert re.search(r"package\s+numpy\s+2\.3\.0 -> 2\.4\.0", out) and " typer " not in out
    assert "1 change of envcheck's own dependencies left out (typer; --all-packages lists them)." in out
    assert main(["diff", "--all-packages", str(a), str(b)]) == 0
    out = capsys.readouterr().out
    assert re.search(r"package\s+typer\s+0\.29\.2 -> 0\.30\.0", out) and "left out" not in out
    assert main(["diff", "--json", str(a), str(b)]) == 0
    assert json.loads(capsys.readouterr().out)["left_out"] == ["typer"]


def test_a_regression_is_never_left_out():
    lock_like = dataclasses.replace(read_node(H200), kind="lock", packages=(("typer", "0.29.2"),))
    result = diff(lock_like, read_node(H200), leave_out={"typer"})
    assert [(c.subject, c.regression) for c in result.changes if c.kind == "package"] == [("typer", True)]
    assert result.left_out == ()


# --------------------------------------------------------------------------------------------------------------
# fleet's table keeps to the terminal


def a_fleet(names: tuple[str, ...], smoke: tuple[tuple[str, int], ...] = (("none", 2), ("pass", 3))) -> Fleet:
    group = Group("nvgemm.deps fail (apache-tvm-ffi 0.1.6 is not ==0.1.7 (required)); cutedsl.version fail (4.4.0)",
                  True, names)
    return Fleet((), (group,), (), (), smoke, ())


@pytest.mark.parametrize("width", [60, 100, 160])
def test_fleet_wraps_its_groups_to_the_terminal_and_counts_what_does_not_fit(width):
    names = tuple(f"gpu-node-{i:04d}.cluster.example.com" for i in range(500))
    text = render_fleet(a_fleet(names), "table", width)
    assert max(len(line) for line in text.splitlines()) <= width
    listed = [line for line in text.splitlines() if "gpu-node-" in line]
    assert 1 <= len(listed) <= 3
    shown = sum(line.count("gpu-node-") for line in listed)
    assert listed[-1].endswith(f"and {500 - shown} more")
    assert text.count("gpu-node-0000.cluster") == 1 and "gpu-node-0499" not in text


def _node(name: str, *statuses: str, exit_code: int = 0, smoke: str = "") -> Node:
    checks = tuple((f"check.{i}", status, f"found {i}") for i, status in enumerate(statuses))
    return Node(name, f"{name}.json", "report", "p", exit_code, checks, (), smoke=smoke)


@pytest.mark.parametrize("statuses, exit_code, outcome", [
    (("pass", "pass", "skip"), 0, "all pass"),
    (("pass", "warn"), 0, "check.1 warn (found 1)"),  # a warning is not "all pass" (it was)
    (("warn", "warn"), 0, "check.0 warn (found 0); check.1 warn (found 1)"),
    (("warn", "fail"), 1, "check.1 fail (found 1)"),  # a failure is the outcome; its warnings are not listed
    (("pass", "error"), 1, "check.1 error (found 1)"),
    (("pass",), 1, "doctor exit code 1"),
])
def test_a_node_s_outcome(statuses, exit_code, outcome):
    fleet = merge((_node("n1", *statuses, exit_code=exit_code), _node("n2", *statuses, exit_code=exit_code)))
    assert [(g.outcome, g.nodes, g.failed) for g in fleet.groups] == [(outcome, ("n1", "n2"), exit_code != 0)]


def test_a_warning_node_is_grouped_apart_from_the_passing_ones():
    fleet = merge((_node("good", "pass"), _node("warned", "warn"), _node("good2", "pass")))
    assert [(g.outcome, g.nodes) for g in fleet.groups] == [("all pass", ("good", "good2")),
                                                            ("check.0 warn (found 0)", ("warned",))]


def test_a_short_group_is_listed_whole():
    text = render_fleet(a_fleet(("n1", "n2", "n3")), "table", 100)
    assert "        n1, n2, n3\n" in text and "more" not in text


def test_fleet_says_what_a_smoke_of_none_means():
    text = render_fleet(a_fleet(("n1",)), "table", 100)
    assert "smoke: 2 not run (doctor without --smoke), 3 pass" in text and "2 none" not in text
    assert "Smoke: 2 not run (doctor without --smoke), 3 pass" in render_fleet(a_fleet(("n1",)), "markdown")
    assert json.loads(render_fleet(a_fleet(("n1",)), "json"))["smoke"] == {"none": 2, "pass": 3}  # the key stays


@pytest.mark.parametrize(
    "content, message",
    [("{", "not valid JSON"), ("[]", "not a doctor report"), ('{"checks": [], "exit_code": "x"}', "key exit_code"),
     ('{"checks": [{"id": 1}], "exit_code": 0}', "key checks")],
)
def test_a_file_that_is_not_a_report_is_a_usage_error_naming_it(tmp_path, content, message, capsys):
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(UsageError, match=message):
        read_node(path)
    assert main(["fleet", str(path)]) == 2
    assert str(path) in capsys.readouterr().err


def test_an_empty_folder_is_a_usage_error(tmp_path, capsys):
    assert main(["fleet", str(tmp_path)]) == 2
    assert "no *.json reports" in capsys.readouterr().err


# --------------------------------------------------------------------------------------------------------------
# Node formats


@slow
def test_prom_textfile_reads_with_prometheus_clients_parser(node_venv, tmp_path):
    from prometheus_client.parser import text_string_to_metric_families

    target, profile = node_venv
    out = tmp_path / "envcheck.prom"
    assert main(["doctor", "--format", "prom", "--no-gpu", "--python", str(target), "--policy", str(profile), "-o", str(out)]) == 0
    families = {f.name: f for f in text_string_to_metric_families(out.read_text())}
    statuses = {(s.labels["check"], s.labels["status"]): s.value for s in families["envcheck_check_status"].samples}
    assert statuses[("cutedsl.version", "pass")] == 1 and statuses[("cutedsl.version", "fail")] == 0
    assert families["envcheck_ok"].samples[0].value == 1
    info = families["envcheck_info"].samples[0].labels
    assert info["torch"] == "2.11.0+cu130" and info["dsl"] == "4.3.5" and info["profile"] == "torch-2.11-nvgemm"


@slow
def test_npd_mode_prints_one_line_and_exits_0_1_or_2(node_venv, wheelhouse, tmp_path, capfd):
    target, profile = node_venv
    args = ["doctor", "--format", "npd", "--no-gpu", "--python", str(target), "--policy", str(profile)]
    assert main(args) == 0
    line = capfd.readouterr().out
    assert line.startswith("OK: ") and line.count("\n") == 1 and len(line) <= 81
    pip(target, "install", "--no-deps", "--no-index", "--find-links", str(wheelhouse), "apache-tvm-ffi==0.1.6")
    assert main(args) == 0  # a recipe deviation warns
    capfd.readouterr()
    assert main([*args, "--strict"]) == 1
    line = capfd.readouterr().out
    assert line.startswith("nvgemm.deps fail") and line.count("\n") == 1
    assert main(["doctor", "--format", "npd", "--policy", str(tmp_path / "missing.toml")]) == 2
    assert capfd.readouterr().out.startswith("UNKNOWN: ")


# --------------------------------------------------------------------------------------------------------------
# Mistyped reports (issue 15): a finding about that node in fleet, exit 2 naming the file and key in diff


def _names_its_key(problem: str, file: Path, path, how) -> bool:
    if (path, how) == (("checks",), "missing"):  # no checks at all: not a report
        return problem.startswith(f"{file}: not a doctor report (no key checks)")
    return problem.startswith(f"{file}: key {spelled(path)} ")


@pytest.fixture(scope="module")
def mutated(tmp_path_factory):
    """A folder of the real report (good.json) and each of its mutations (m<N>.json), and what each mutation was."""
    folder = tmp_path_factory.mktemp("mutated")
    real = json.loads((DATA / "h200-doctor14.json").read_text())
    shutil.copy(DATA / "h200-doctor14.json", folder / "good.json")
    cases = {}
    for number, (path, how, value) in enumerate(mutations(real)):
        (folder / f"m{number:04d}.json").write_text(json.dumps(applied(real, path, how, value)))
        cases[f"m{number:04d}"] = (path, how)
    return folder, cases


def test_every_mistyped_field_is_a_finding_about_its_node_never_the_end_of_the_view(mutated):
    """fleet over the real report and every mutation of it, through the real CLI in one run: the good node is in the
    view, each mutation is either read (a key fleet does not read, or one it may miss) or "unreadable" naming its
    file, its key and the type expected; the run itself never fails."""
    import subprocess
    import sys

    folder, cases = mutated
    assert len(cases) > 500
    done = subprocess.run([sys.executable, "-m", "envcheck", "fleet", "--json", str(folder)], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr[-2000:]
    view = json.loads(done.stdout)
    assert view["nodes"] == len(cases) + 1 and "good" not in view["failed"]
    # the H200's report warns on packages.consistency: its group says so, not "all pass"
    assert any("good" in group["nodes"] and group["outcome"].startswith("packages.consistency warn (") for group in view["groups"])
    unreadable = {u["node"]: u["problem"] for u in view["unreadable"]}
    for node, problem in unreadable.items():
        path, how = cases[node]
        assert _names_its_key(problem, folder / f"{node}.json", path, how), (path, how, problem)
    # What fleet reads: each of these keys, mistyped, makes the node unreadable (the issue's cases among them).
    for read in ("checks", "checks[0]", "checks[0].id", "checks[0].status", "checks[0].found", "exit_code", "host",
                 "host.gpus", "host.gpus[0]", "host.driver", "host.hostname", "facts", "facts.interpreter",
                 "facts.interpreter.distributions", "facts.interpreter.distributions[0].name",
                 "facts.interpreter.distributions[0].version", "facts.interpreter.torch",
                 "facts.interpreter.torch.version", "facts.interpreter.torch.cuda", "facts.driver",
                 "facts.driver.version", "profile.id", "smoke", "smoke.status", "smoke.summary"):
        wrong = [node for node, (path, how) in cases.items() if spelled(path) == read and how != "missing"
                 and not (how == "as null" and read not in ("checks", "checks[0]", "checks[0].id", "checks[0].status",
                                                            "exit_code", "host.gpus[0]",
                                                            "facts.interpreter.distributions[0].name"))]
        assert wrong and all(node in unreadable for node in wrong), read
    text = subprocess.run([sys.executable, "-m", "envcheck", "fleet", str(folder)], capture_output=True, text=True,
                          timeout=300)
    assert text.returncode == 1 and "packages.consistency warn" in text.stdout and "all pass" not in text.stdout
    for node, problem in unreadable.items():
        assert f"unreadable: {problem}" in text.stdout


def test_diff_names_the_file_and_the_key_of_every_mistyped_field(mutated):
    """diff reads both sides as fleet does (read_node): a mutation it cannot read is a UsageError (exit 2) naming the
    file and the key; any other is compared."""
    folder, cases = mutated
    good = read_node(folder / "good.json")
    for node, (path, how) in cases.items():
        try:
            diff(good, read_node(folder / f"{node}.json"))
        except UsageError as exc:
            assert _names_its_key(str(exc), folder / f"{node}.json", path, how), (path, how, str(exc))


@pytest.mark.parametrize("change, key, expected", [
    (lambda d: d.update(checks=5), "checks", "an array, got an integer"),
    (lambda d: d["host"].update(gpus=5), "host.gpus", "an array, got an integer"),
    (lambda d: d["facts"].update(interpreter=[1]), "facts.interpreter", "an object, got an array"),
    (lambda d: d["facts"].update(driver=[1]), "facts.driver", "an object, got an array"),
    (lambda d: d["facts"]["interpreter"].update(distributions=5), "facts.interpreter.distributions",
     "an array, got an integer"),
])
def test_the_issues_reports_through_the_cli(tmp_path, change, key, expected):
    """fleet: the bad node is a finding and the good one is still judged (exit 1); diff: exit 2 naming file and key."""
    import subprocess
    import sys

    good, bad = tmp_path / "good.json", tmp_path / "bad.json"
    shutil.copy(DATA / "h200-doctor14.json", good)
    data = json.loads(good.read_text())
    change(data)
    bad.write_text(json.dumps(data))
    fleet = subprocess.run([sys.executable, "-m", "envcheck", "fleet", str(good), str(bad)], capture_output=True,
                           text=True, timeout=60)
    assert fleet.returncode == 1 and "1 node : packages.consistency warn" in fleet.stdout, fleet.stdout + fleet.stderr
    assert f"unreadable: {bad}: key {key} expected {expected}" in fleet.stdout
    done = subprocess.run([sys.executable, "-m", "envcheck", "diff", str(good), str(bad)], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 2 and f"{bad}: key {key} expected {expected}" in done.stderr
    assert "Traceback" not in fleet.stderr + done.stderr


# --------------------------------------------------------------------------------------------------------------
# Trust III (issue 24): what B does not say is not "no differences"; a report of another schema is not read as ours


def _h200(tmp_path: Path, name: str, change=None) -> Path:
    data = json.loads((DATA / "h200-doctor14.json").read_text())
    if change is not None:
        change(data)
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return path


@pytest.mark.parametrize("dropped, regression", [("python.version", True), ("gpu.compute-capability", True)])
def test_diff_names_a_check_b_lacks_and_a_passed_as_a_regression(tmp_path, capsys, dropped, regression):
    a = _h200(tmp_path, "a.json")
    b = _h200(tmp_path, "b.json", lambda d: d.update(checks=[c for c in d["checks"] if c["id"] != dropped]))
    result = diff(read_node(a), read_node(b))
    lost = [c for c in result.changes if c.subject == dropped]
    assert len(lost) == 1 and lost[0].after == "" and lost[0].regression is regression
    assert main(["diff", str(a), str(b)]) == (1 if regression else 0)
    out = capsys.readouterr().out
    assert dropped in out and "(none)" in out and "no differences" not in out.lower()


def test_diff_of_a_report_with_no_checks_against_one_with_checks_is_not_no_differences(tmp_path, capsys):
    a = _h200(tmp_path, "a.json")
    b = _h200(tmp_path, "b.json", lambda d: d.update(checks=[]))
    assert main(["diff", str(a), str(b)]) == 1
    assert "no differences" not in capsys.readouterr().out.lower()


def test_a_check_a_failed_and_b_lacks_is_listed_not_a_regression(tmp_path):
    def failing(d):
        d["checks"][0]["status"] = "fail"
    a, b = _h200(tmp_path, "a.json", failing), _h200(tmp_path, "b.json", lambda d: d["checks"].pop(0))
    lost = [c for c in diff(read_node(a), read_node(b)).changes if c.after == ""]
    assert [(c.before, c.regression) for c in lost] == [("fail", False)]


@pytest.mark.parametrize("version, readable", [(1, True), (2, True), (3, False), (0, False), ("2", False)])
def test_an_unknown_schema_version_is_refused_naming_it(tmp_path, capsys, version, readable):
    a = _h200(tmp_path, "a.json")
    b = _h200(tmp_path, "b.json", lambda d: d.update(schema_version=version))
    code = main(["diff", str(a), str(b)])
    err = capsys.readouterr().err
    assert (code != 2) is readable, err
    if not readable:
        assert f"{b}: key schema_version " in err


def test_the_newest_schema_is_one_diff_reads():
    from envcheck.fleet.node import SCHEMAS
    from envcheck.render.report import SCHEMA_VERSION

    assert SCHEMA_VERSION in SCHEMAS


@pytest.mark.parametrize("change", [
    lambda d: d.update(exit_code=10 ** 30),
    lambda d: d.update(exit_code=float("inf")),
    lambda d: d["checks"].append({"id": "x", "status": "pass", "found": "", "seconds": 5e-324}),
])
def test_a_node_with_a_number_no_one_computes_with_is_unreadable_and_the_rest_are_judged(tmp_path, change):
    import subprocess
    import sys

    good = _h200(tmp_path, "good.json")
    bad = tmp_path / "bad.json"
    data = json.loads(good.read_text())
    change(data)
    bad.write_text(json.dumps(data).replace("Infinity", "1e999"))
    fleet = subprocess.run([sys.executable, "-m", "envcheck", "fleet", str(good), str(bad)], capture_output=True,
                           text=True, timeout=60)
    # the good node is judged as usual: the H200's report only warns (packages.consistency), so it is grouped by
    # that warning, not under "all pass"
    assert fleet.returncode == 1 and "1 node : packages.consistency warn" in fleet.stdout, fleet.stdout + fleet.stderr
    assert f"unreadable: {bad}: key " in fleet.stdout and "Traceback" not in fleet.stderr
