"""Failures that say why: fix/failure's table over every sign, then real pip runs into real venvs (a constraint
that conflicts, a resolver conflict, no such version, an index that refuses connections), real git against
repositories that do not exist or cannot be reached, and pip configuration files that envcheck's pip does not read
(one named by PIP_CONFIG_FILE, a global one under XDG_CONFIG_DIRS) while a plain `pip --isolated` does."""

from __future__ import annotations

import io
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from wheelfactory import build_wheel, make_venv

from envcheck.fix import failure
from envcheck.fix.apply import Console, apply, run_command
from envcheck.fix.pip import PipSources, install_argv, parse_requirement, pip_prefix
from envcheck.fix.pipconfig import DEFAULT_INDEX, config_files, pip_setup
from envcheck.fix.steps import Plan, PlannedStep

RETRY = "WARNING: Retrying (Retry(total=0, connect=None, read=None, redirect=None, status=None)) after connection " \
        "broken by 'NewConnectionError('<pip._vendor.urllib3.connection.HTTPSConnection object at 0x7f>: Failed to " \
        "establish a new connection: [Errno {}')': /simple/alpha/"
NO_MATCH = ["ERROR: Could not find a version that satisfies the requirement alpha==3 (from versions: none)",
            "ERROR: No matching distribution found for alpha==3"]
CONFLICT = ["ERROR: Cannot install alpha==2 because these package versions have conflicting dependencies.", "",
            "The conflict is caused by:", "    The user requested alpha==2", "{}", "",
            "To fix this you could try to:", "1. loosen the range of package versions you've specified", "",
            "ERROR: ResolutionImpossible: for help visit https://pip.pypa.io/en/latest/topics/dependency-resolution/"]

# (tool, output lines, kind, a line that must be shown): every sign of the table, and the order between them
SIGN_CASES = [
    ("pip", [RETRY.format("111] Connection refused"), *NO_MATCH], "network", "Connection refused"),
    ("pip", [RETRY.format("-3] Temporary failure in name resolution"), *NO_MATCH], "network", "name resolution"),
    ("pip", [RETRY.format("-2] Name or service not known"), *NO_MATCH], "network", "Name or service"),
    ("pip", ["... [Errno 101] Network is unreachable", *NO_MATCH], "network", "unreachable"),
    ("pip", ["...ConnectTimeoutError(...)", *NO_MATCH], "network", "ConnectTimeoutError"),
    ("pip", ["...Read timed out. (read timeout=15)"], "network", "Read timed out"),
    ("pip", ["...Connection reset by peer"], "network", "reset by peer"),
    ("pip", ["Could not fetch URL https://x/simple/a/: [SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed",
             *NO_MATCH], "certificate", "CERTIFICATE_VERIFY_FAILED"),
    ("pip", ["... SSLCertVerificationError(1, ...)"], "certificate", "SSLCertVerificationError"),
    ("pip", [ln.format("    The user requested (constraint) alpha<2") for ln in CONFLICT], "constraint", "alpha<2"),
    ("pip", [ln.format("    beta 1.0 depends on alpha<2") for ln in CONFLICT], "conflict", "ResolutionImpossible"),
    ("pip", ["ERROR: Cannot install a and b because these package versions have conflicting dependencies."],
     "conflict", "conflicting dependencies"),
    ("pip", ["Looking in links: /w", *NO_MATCH], "no-version", "No matching distribution found for alpha==3"),
    ("pip", ["ERROR: Could not find a version that satisfies the requirement alpha==3 (from versions: 1.0)"],
     "no-version", "from versions: 1.0"),
    ("pip", ["error: externally-managed-environment", "", "× This environment is externally managed"],
     "externally-managed", "externally-managed-environment"),
    ("pip", ["ERROR: Could not install packages due to an OSError: [Errno 28] No space left on device"],
     "disk-full", "No space left"),
    ("git", ["git: fatal: unable to access 'https://h/c.git/': SSL certificate problem: self-signed certificate"],
     "certificate", "SSL certificate problem"),
    ("git", ["git: fatal: unable to access 'https://h/c.git/': server certificate verification failed. CAfile: x"],
     "certificate", "verification failed"),
    ("git", ["git: fatal: '/nowhere' does not appear to be a git repository",
             "git: fatal: Could not read from remote repository."], "no-repository", "does not appear"),
    ("git", ["git: remote: Repository not found.", "git: fatal: repository 'https://h/c.git/' not found"],
     "no-repository", "' not found"),
    ("git", ["git: fatal: unable to access 'https://h/c.git/': Could not resolve host: h"], "network", "resolve host"),
    ("git", ["git: fatal: unable to access 'https://127.0.0.1:9/c.git/': Failed to connect to 127.0.0.1 port 9"],
     "network", "Failed to connect"),
    ("git", ["git: ssh: connect to host h port 22: Connection refused", "git: fatal: Could not read from remote repository."],
     "network", "Connection refused"),
    ("git", ["git: ssh: connect to host h port 22: Connection timed out"], "network", "timed out"),
    ("git", ["git: ssh: connect to host h port 22: Network is unreachable"], "network", "unreachable"),
    ("git", ["git: fatal: remote error: upload-pack: not our ref 0123"], "no-commit", "not our ref"),
    ("git", ["git: fatal: couldn't find remote ref refs/heads/x"], "no-commit", "couldn't find remote ref"),
    ("git", ["git: error: Server does not allow request for unadvertised object 0123"], "no-commit", "unadvertised"),
    ("git", ["git: fatal: write error: No space left on device"], "disk-full", "No space left"),
]


def test_every_sign_of_the_table_has_a_case():
    assert {(s.tool, s.kind) for s in failure.SIGNS} == {(tool, kind) for tool, _, kind, _ in SIGN_CASES}
    for sign in failure.SIGNS:  # and every text of every sign is matched by some case
        for text in sign.texts:
            assert any(tool == sign.tool and any(text in ln for ln in lines) for tool, lines, _, _ in SIGN_CASES), text


@pytest.mark.parametrize("tool, lines, kind, shown", SIGN_CASES)
def test_each_sign_is_read_with_its_words_and_the_line_that_shows_it(tool, lines, kind, shown):
    cause = failure.read(tool, lines)
    assert cause.kind == kind
    assert cause.words and cause.words in cause.text()
    assert any(shown in line for line in cause.lines), cause.lines
    assert all(len(line) <= 240 and not line.startswith(("git: ", "To fix this", "Looking in")) for line in cause.lines)


def test_a_sign_of_one_tool_is_not_read_in_the_other():
    cause = failure.read("git", ["fatal: No matching distribution found for alpha"])
    assert cause.kind == "" and cause.lines == ("fatal: No matching distribution found for alpha",)


def test_output_no_sign_matches_is_shown_as_its_last_meaningful_lines():
    lines = ["$ python -m pip install x", "Collecting x", "  Downloading x-1.tar.gz", *[f"line {i}" for i in range(9)],
             "", "[notice] A new release of pip is available", "(exit 1)"]
    cause = failure.read("pip", lines)
    assert cause.kind == "" and cause.lines == tuple(f"line {i}" for i in range(3, 9))
    assert cause.text() == "pip said: line 8"
    assert failure.read("pip", []).text() == ""


def test_a_constraint_names_the_constraints_file_it_came_from():
    lines = [ln.format("    The user requested (constraint) alpha<2") for ln in CONFLICT]
    named = failure.read("pip", lines, ["/state/constraints.txt"])
    assert named.files == ("/state/constraints.txt",) and "alpha<2" in named.words
    assert named.text().endswith("(/state/constraints.txt)")
    assert "configuration" in failure.read("pip", lines).words  # no file given: pip's configuration set it


def test_the_tool_of_an_argv():
    assert failure.tool_of(["/v/bin/python", "-m", "pip", "install"]) == "pip"
    assert failure.tool_of(["/usr/bin/python3", "-m", "pip", "--python=/v/bin/python", "install"]) == "pip"
    assert failure.tool_of(["/opt/cuda/installer.run", "--silent"]) == "installer.run"


# --------------------------------------------------------------------------------------------------------------
# Real pip into real venvs


@pytest.fixture(scope="module")
def wheels(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("failure-wheels")
    build_wheel(folder, "alpha", "1.0", {"alpha/__init__.py": "v = 1\n"})
    build_wheel(folder, "alpha", "2.0", {"alpha/__init__.py": "v = 2\n"})
    build_wheel(folder, "beta", "1.0", {"beta/__init__.py": ""}, requires=["alpha>=2"])
    return folder


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]  # closed when the socket is: a connection to it is refused


def _install(python: Path, *requirements: str, sources: PipSources, constraints: str | None = None) -> PlannedStep:
    argv = install_argv(pip_prefix(str(python), False), [parse_requirement(r) for r in requirements], sources=sources,
                        constraints=constraints)
    return PlannedStep("pip-install", f"install {' '.join(requirements)}", "a test", (argv,))


def _apply(*steps: PlannedStep):
    err = io.StringIO()
    outcome = apply(Plan("target", steps), io.StringIO(), console=Console(err))
    return outcome, err.getvalue()


def _installed(python: Path, name: str) -> str:
    done = subprocess.run([str(python), "-c", f"import {name}; print({name}.v)"], capture_output=True, text=True)
    return done.stdout.strip()


@pytest.mark.slow
def test_real_pip_failures_are_read_for_what_they_are(tmp_path, wheels):
    python = make_venv(tmp_path / "venv")
    local = PipSources(find_links=(str(wheels),), no_index=True)
    constraints = tmp_path / "constraints.txt"
    constraints.write_text("alpha<2\n")
    cases = [
        (_install(python, "alpha==2", sources=local, constraints=str(constraints)), "constraint"),
        (_install(python, "alpha==1", "beta", sources=local), "conflict"),
        (_install(python, "alpha==3", sources=local), "no-version"),
        (_install(python, "alpha", sources=PipSources(index_url=f"https://127.0.0.1:{_closed_port()}/simple")), "network"),
    ]
    for step, kind in cases:
        outcome, said = _apply(step)
        failed = outcome.failed
        assert failed is not None and failed.cause is not None, said
        assert failed.cause.kind == kind, failed.cause
        assert failed.cause.words in failed.message and "exited with 1" in failed.message
        assert all(f"      pip: {line}" in said for line in failed.cause.lines), said  # the terminal shows pip's words
        assert failed.to_json()["cause"]["kind"] == kind
    constraint = _apply(cases[0][0])[0].failed.cause
    assert constraint.files == (str(constraints),) and "alpha<2" in constraint.words
    assert any("127.0.0.1" in line or "Connection refused" in line for line in _apply(cases[3][0])[0].failed.cause.lines)


@pytest.mark.slow
def test_pip_configuration_files_apply_to_pip_isolated_but_not_to_envchecks_pip(tmp_path, wheels, monkeypatch):
    """pip's own rule, shown with a real pip: --isolated still reads PIP_CONFIG_FILE's file and the global one; the
    same install through envcheck's runner reads neither, and the plan names both as not read."""
    python = make_venv(tmp_path / "venv")
    (tmp_path / "c.txt").write_text("alpha<2\n")
    named, global_dir = tmp_path / "named.conf", tmp_path / "xdg"
    (global_dir / "pip").mkdir(parents=True)
    for path in (named, global_dir / "pip" / "pip.conf"):
        path.write_text(f"[global]\nconstraint = {tmp_path / 'c.txt'}\n")
    clean = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    argv = install_argv(pip_prefix(str(python), False), [parse_requirement("alpha==2")],
                        sources=PipSources(find_links=(str(wheels),), no_index=True))
    for env in ({"PIP_CONFIG_FILE": str(named), "XDG_CONFIG_DIRS": str(tmp_path / "none")},
                {"XDG_CONFIG_DIRS": str(global_dir)}):
        plain = subprocess.run(argv, capture_output=True, text=True, env={**clean, **env}, cwd=tmp_path)
        assert plain.returncode == 1 and "(constraint) alpha<2" in plain.stdout + plain.stderr  # --isolated reads it
        assert failure.read("pip", (plain.stdout + plain.stderr).splitlines()).kind == "constraint"
    monkeypatch.setenv("PIP_CONFIG_FILE", str(named))
    monkeypatch.setenv("XDG_CONFIG_DIRS", str(global_dir))
    step = PlannedStep("pip-install", "install alpha 2", "a test", (argv,))
    outcome, said = _apply(step)
    assert outcome.ok, said
    assert _installed(python, "alpha") == "2"

    files = config_files(str(python.parent.parent), dict(os.environ))
    scopes = {f.path: (f.scope, f.keys) for f in files}
    assert scopes[str(named)] == ("PIP_CONFIG_FILE", ("global.constraint",))
    assert scopes[str(global_dir / "pip" / "pip.conf")] == ("global", ("global.constraint",))


def test_the_pip_setup_names_each_steps_indexes_and_wheel_folders():
    pip = ("/v/bin/python", "-m", "pip")
    commands = [
        (1, (*pip, "uninstall", "--isolated", "--yes", "--", "x")),
        (2, install_argv(pip, [parse_requirement("torch")], step_index_url="https://download.example/cu130")),
        (3, install_argv(pip, [parse_requirement("a")])),
        (3, install_argv(pip, [parse_requirement("b")], sources=PipSources(find_links=("/w",), no_index=True))),
        (4, install_argv(pip, [parse_requirement("c")], sources=PipSources(find_links=("/w",)))),
        (5, (*pip, "install", "--extra-index-url=https://extra/simple", "--", "d")),
    ]
    setup = pip_setup(commands)
    assert [(s.kind, s.value, s.steps, s.default) for s in setup.sources] == [
        ("index", "https://download.example/cu130", (2,), False),
        ("index", DEFAULT_INDEX, (3, 4, 5), True),
        ("find-links", "/w", (3, 4), False),
        ("index", "https://extra/simple", (5,), False),
    ]
    assert json.loads(json.dumps(setup.to_json()))["env"] == {"PIP_CONFIG_FILE": os.devnull}


def test_config_files_are_found_where_pip_looks_and_unreadable_ones_said(tmp_path):
    home, prefix, xdg1, xdg2 = tmp_path / "home", tmp_path / "venv", tmp_path / "x1", tmp_path / "x2"
    for path, text in [(home / ".pip" / "pip.conf", "[global]\nindex-url = https://a/simple\n"),
                       (home / ".config" / "pip" / "pip.conf", "[install]\nfind-links = /w\n"),
                       (xdg2 / "pip" / "pip.conf", "[global]\ncert = /c\nconstraint = /k\n"),
                       (prefix / "pip.conf", "not an ini file\n")]:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    found = config_files(str(prefix), {"HOME": str(home), "XDG_CONFIG_DIRS": f"{xdg1}:{xdg2}"})
    got = [(f.scope, f.path, f.keys) for f in found if not f.path.startswith("/etc/")]
    assert got == [
        ("global", str(xdg2 / "pip" / "pip.conf"), ("global.cert", "global.constraint")),
        ("user", str(home / ".pip" / "pip.conf"), ("global.index-url",)),
        ("user", str(home / ".config" / "pip" / "pip.conf"), ("install.find-links",)),
        ("site", str(prefix / "pip.conf"), ("(unreadable: MissingSectionHeaderError)",)),
    ]
    devnull = config_files(str(prefix), {"HOME": str(home), "PIP_CONFIG_FILE": os.devnull})
    assert "PIP_CONFIG_FILE" not in {f.scope for f in devnull}  # pip's "no configuration file", not a file


# --------------------------------------------------------------------------------------------------------------
# Real git


@pytest.mark.slow
@pytest.mark.parametrize("where, kind", [("missing", "no-repository"), ("closed", "network")])
def test_a_fetch_that_fails_says_why_from_gits_own_words(tmp_path, where, kind):
    url = (tmp_path / "no-such-repo").as_uri() if where == "missing" else f"https://127.0.0.1:{_closed_port()}/c.git"
    step = PlannedStep("cutlass-fetch", "fetch CUTLASS", "a test", params=(
        ("dest", str(tmp_path / "cutlass")), ("url", url), ("branch", "cutlass_api"), ("commit", "a" * 40),
        ("subdir", "python/cutlass_api")))
    log = io.StringIO()
    err = io.StringIO()
    outcome = apply(Plan("target", (step,)), log, console=Console(err))
    cause = outcome.failed.cause
    assert cause is not None and cause.kind == kind, (cause, log.getvalue())
    assert cause.words in outcome.failed.message
    assert any(line.startswith("fatal:") for line in cause.lines)
    assert "git: fatal:" in log.getvalue()  # git's fatal lines reach the log too
    assert f"      git: {cause.lines[0]}" in err.getvalue()


# --------------------------------------------------------------------------------------------------------------
# Through the command line: the plan names what pip reads and where it takes packages from; a failure says why


@pytest.mark.slow
def test_fix_names_the_pip_files_it_does_not_read_and_says_why_its_pip_step_failed(tmp_path):
    python = make_venv(tmp_path / "target")
    profile = tmp_path / "profile.toml"
    profile.write_text('extends = "torch-2.11-nvgemm"\n\n[python]\nversion = ">=3.10"\n')
    named = tmp_path / "named.conf"
    named.write_text(f"[global]\nconstraint = {tmp_path / 'c.txt'}\nindex-url = https://elsewhere.example/simple\n")
    url = f"https://127.0.0.1:{_closed_port()}/simple"
    env = {**os.environ, "PIP_CONFIG_FILE": str(named)}

    def fix(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "envcheck", "fix", "--python", str(python), "--policy", str(profile),
                               "--no-gpu", "--cutlass-dir", str(tmp_path / "cutlass"), "--index-url", url, *args],
                              capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)

    plan = json.loads(fix("--json").stdout)
    pip_steps = [n for n, s in enumerate(plan["plan"]["steps"], 1)
                 if any(c[1:3] == ["-m", "pip"] and "install" in c for c in s["commands"])]
    assert {"path": str(named), "scope": "PIP_CONFIG_FILE", "keys": ["global.constraint", "global.index-url"],
            "used": False} in plan["pip"]["config_files"]
    assert plan["pip"]["sources"] == [{"kind": "index", "value": url, "steps": pip_steps, "default": False}]
    text = fix("--dry-run").stdout
    assert f"not read: {named} (PIP_CONFIG_FILE: global.constraint, global.index-url)" in text
    assert f"index: {url}, steps {', '.join(map(str, pip_steps))}" in text

    done = fix("--yes", "--json")
    assert done.returncode == 1, done.stderr
    failed = [r for r in json.loads(done.stdout)["outcome"]["done"] if not r["ok"]][0]
    assert failed["cause"]["kind"] == "network" and failed["cause"]["tool"] == "pip"
    assert any("Connection refused" in line for line in failed["cause"]["lines"])
    assert "      pip: " in done.stderr and "pip could not reach the package index" in done.stderr
    shown = fix("--yes").stdout
    assert "Failed: install torch" in shown and "pip could not reach the package index" in shown, shown
    assert "\n  pip: " in shown and "Connection refused" in shown
