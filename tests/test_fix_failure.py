"""Failures that say why: fix/failure's table over every sign, then real pip runs into real venvs (a constraint
that conflicts, a resolver conflict, no such version, an index that refuses connections), real git against
repositories that do not exist or cannot be reached, and pip configuration files that envcheck's pip does not read
(one named by PIP_CONFIG_FILE, a global one under XDG_CONFIG_DIRS) while a plain `pip --isolated` does."""

from __future__ import annotations

import io
import json
import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import flat
from wheelfactory import build_wheel, make_venv

from envcheck.fix import failure
from envcheck.fix.apply import Console, apply, run_command
from envcheck.fix.pip import PipSources, install_argv, parse_requirement, pip_prefix
from envcheck.fix.pipconfig import DEFAULT_INDEX, ConfigFile, config_files, pip_setup
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
    # a retry pip recovered from does not hide how it ended (the review's cases)
    ("pip", [RETRY.format("110] Read timed out"), "ERROR: Could not install packages due to an OSError: [Errno 28] "
             "No space left on device"], "disk-full", "No space left"),
    ("pip", [RETRY.format("110] Read timed out"), *[ln.format("    The user requested (constraint) alpha<2")
                                                   for ln in CONFLICT]], "constraint", "alpha<2"),
    ("pip", [RETRY.format("110] Read timed out"), *[ln.format("    beta 1.0 depends on alpha<2") for ln in CONFLICT]],
     "conflict", "ResolutionImpossible"),
    ("pip", [RETRY.format("110] Read timed out"), "error: externally-managed-environment"], "externally-managed",
     "externally-managed-environment"),
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
    assert named.text().endswith("from the constraints file envcheck gives pip (/state/constraints.txt)")
    configured = failure.read("pip", lines, (), [("/etc/xdg/pip/pip.conf", "/etc/c.txt https://u:t@h/c.txt")])
    assert configured.text().endswith(
        "alpha<2, from a constraint from /etc/xdg/pip/pip.conf (constraint = /etc/c.txt https://***@h/c.txt)")
    assert configured.files == ("/etc/xdg/pip/pip.conf",)
    both = failure.read("pip", lines, ["/s/c.txt"], [("/etc/pip.conf", "/k")])
    assert both.files == ("/s/c.txt", "/etc/pip.conf") and " or a constraint from /etc/pip.conf (constraint = /k)" in both.words
    assert "configuration" in failure.read("pip", lines).words  # no file known: pip's configuration set it


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


def _conf(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def _pip_env(monkeypatch, tmp_path: Path, **env: str) -> None:
    """envcheck's environment for a test: no PIP_* variable, the user's and the global places in tmp_path, then env."""
    for name in [k for k in os.environ if k.startswith("PIP_")]:
        monkeypatch.delenv(name)
    defaults = {"HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(tmp_path / "config-home"),
                "XDG_CONFIG_DIRS": str(tmp_path / "no-global")}
    for name, value in {**defaults, **env}.items():
        monkeypatch.setenv(name, value)


@pytest.mark.slow
@pytest.mark.parametrize("scope", ["global", "site"])
def test_a_machine_wide_file_applies_and_a_constraint_it_sets_is_named(tmp_path, wheels, monkeypatch, scope):
    """The administrator's files apply to envcheck's pip (a global one under XDG_CONFIG_DIRS, the target
    environment's own pip.conf), and a constraint conflict names the file that set the constraint."""
    python = make_venv(tmp_path / "venv")
    prefix = tmp_path / "venv"
    caps = _conf(tmp_path / "c.txt", "alpha<2\n")
    where = tmp_path / "xdg" / "pip" / "pip.conf" if scope == "global" else prefix / "pip.conf"
    _conf(where, f"[install]\nconstraint = {caps}\n")
    _pip_env(monkeypatch, tmp_path, XDG_CONFIG_DIRS=f"{tmp_path / 'none'}:{tmp_path / 'xdg'}")
    files = config_files(str(prefix), dict(os.environ))
    assert [(f.path, f.scope, f.read) for f in files if f.path == str(where)] == [(str(where), scope, True)]

    step = _install(python, "alpha==2", sources=PipSources(find_links=(str(wheels),), no_index=True))
    outcome = apply(Plan("target", (step,)), io.StringIO(), console=Console(io.StringIO()), pip_files=files)
    cause = outcome.failed.cause
    assert cause.kind == "constraint", cause
    assert f"alpha<2, from a constraint from {where} (constraint = {caps})" in cause.text()
    assert cause.files == (str(where),)
    assert _installed(python, "alpha") == ""  # nothing was installed


@pytest.mark.slow
@pytest.mark.parametrize("which", ["PIP_CONFIG_FILE", "~/.pip/pip.conf", "XDG_CONFIG_HOME"])
def test_a_users_or_a_variables_file_does_not_apply(tmp_path, wheels, monkeypatch, which):
    """A file PIP_CONFIG_FILE names, ~/.pip/pip.conf and $XDG_CONFIG_HOME/pip/pip.conf: pip itself reads each (shown
    first), envcheck's pip reads none, and the plan says so and why."""
    python = make_venv(tmp_path / "venv")
    caps = _conf(tmp_path / "c.txt", "alpha<2\n")
    place = {"PIP_CONFIG_FILE": tmp_path / "named.conf", "~/.pip/pip.conf": tmp_path / "home" / ".pip" / "pip.conf",
             "XDG_CONFIG_HOME": tmp_path / "config-home" / "pip" / "pip.conf"}[which]
    _conf(place, f"[global]\nconstraint = {caps}\n")
    _pip_env(monkeypatch, tmp_path, **({"PIP_CONFIG_FILE": str(place)} if which == "PIP_CONFIG_FILE" else {}))
    step = _install(python, "alpha==2", sources=PipSources(find_links=(str(wheels),), no_index=True))
    argv = step.commands[0]
    plain = [a for a in argv if a != "--isolated"] if which != "PIP_CONFIG_FILE" else argv  # pip's own rule
    done = subprocess.run(plain, capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 1 and "(constraint) alpha<2" in done.stdout + done.stderr  # the file is real to pip

    files = config_files(str(tmp_path / "venv"), dict(os.environ))
    outcome, said = _apply(step)
    assert outcome.ok, said
    assert _installed(python, "alpha") == "2"
    shown = {f.path: (f.scope, f.read, f.why) for f in files}
    scope, why = ("PIP_CONFIG_FILE", "removes PIP_CONFIG_FILE") if which == "PIP_CONFIG_FILE" else ("user", "--isolated")
    assert shown[str(place)][:2] == (scope, False) and why in shown[str(place)][2]


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
    assert json.loads(json.dumps(setup.to_json()))["removed_from_env"] == ["PIP_CONFIG_FILE"]


def _file(path: str, scope: str, read: bool, **settings: str) -> ConfigFile:
    return ConfigFile(path, scope, read, "", tuple((k.replace("__", ".").replace("_", "-"), v) for k, v in settings.items()))


# (files pip may read, the argv's own options, the sources expected: (kind, value, from))
CONFIGURED = [
    ([_file("/g", "global", True, global__index_url="https://g/simple")], [],
     [("index", "https://g/simple", "/g (global)")]),
    ([_file("/g", "global", True, global__index_url="https://g/simple"),
      _file("/s", "site", True, global__index_url="https://s/simple")], [],
     [("index", "https://s/simple", "/s (site)")]),  # the later file wins
    ([_file("/g", "global", True, install__index_url="https://i/simple"),
      _file("/s", "site", True, global__index_url="https://s/simple")], [],
     [("index", "https://i/simple", "/g (global)")]),  # [install] over [global], whatever the file
    ([_file("/u", "user", False, global__index_url="https://u/simple")], [],
     [("index", DEFAULT_INDEX, "")]),  # a file pip does not read sets nothing
    ([_file("/g", "global", True, global__index_url="https://g/simple"),
      _file("/s", "site", True, global__index_url="")], [],
     [("index", DEFAULT_INDEX, "")]),  # an empty value in a later file: pip takes none
    ([_file("/g", "global", True, global__index_url="https://g/simple")], ["--index-url=https://flag/simple"],
     [("index", "https://flag/simple", "")]),  # the command line over the file
    ([_file("/g", "global", True, global__extra_index_url="https://e1/simple https://e2/simple",
            install__find_links="/w1")], ["--find-links=/w2"],
     [("index", DEFAULT_INDEX, ""), ("index", "https://e1/simple", "/g (global)"),
      ("index", "https://e2/simple", "/g (global)"), ("find-links", "/w1", "/g (global)"), ("find-links", "/w2", "")]),
    ([_file("/g", "global", True, global__no_index="yes", global__extra_index_url="https://e/simple",
            global__find_links="/w")], [], [("find-links", "/w", "/g (global)")]),  # a file's no-index
    ([_file("/g", "global", True, global__no_index="false")], [], [("index", DEFAULT_INDEX, "")]),
    ([_file("/g", "global", True, global__extra_index_url="https://e/simple")], ["--no-index"], []),
]


@pytest.mark.parametrize("files, options, expected", CONFIGURED)
def test_the_index_of_a_step_accounts_for_the_files_pip_reads(files, options, expected):
    argv = ("/v/bin/python", "-m", "pip", "install", "--isolated", *options, "--", "a")
    setup = pip_setup([(1, argv)], files)
    assert [(s.kind, s.value, s.origin) for s in setup.sources] == expected
    assert setup.files == tuple(files)


def test_config_files_are_found_where_pip_looks_and_unreadable_ones_said(tmp_path):
    home, prefix, xdg1, xdg2 = tmp_path / "home", tmp_path / "venv", tmp_path / "x1", tmp_path / "home" / "x2"
    for path, text in [(home / ".pip" / "pip.conf", "[global]\nindex-url = https://a/simple\n"),
                       (home / ".config" / "pip" / "pip.conf", "[install]\nfind-links = /w\n"),
                       (xdg2 / "pip" / "pip.conf", "[global]\ncert = /c\nconstraint = /k\n"),
                       (prefix / "pip.conf", "not an ini file\n")]:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    named = tmp_path / "named.conf"
    named.write_text("[global]\nFind_Links = /n\n")
    found = config_files(str(prefix), {"HOME": str(home), "XDG_CONFIG_DIRS": f"{xdg1}:~/x2:",
                                       "PIP_CONFIG_FILE": str(named)})
    got = [(f.scope, f.path, f.read, f.keys) for f in found if not f.path.startswith("/etc/")]
    assert got == [
        ("global", str(xdg2 / "pip" / "pip.conf"), True, ("global.cert", "global.constraint")),  # ~ is the child's HOME
        ("user", str(home / ".pip" / "pip.conf"), False, ("global.index-url",)),
        ("user", str(home / ".config" / "pip" / "pip.conf"), False, ("install.find-links",)),
        ("site", str(prefix / "pip.conf"), True, ("(unreadable: MissingSectionHeaderError)",)),
        ("PIP_CONFIG_FILE", str(named), False, ("global.find-links",)),  # the key as pip normalizes it
    ]
    assert found[-1].settings == (("global.find-links", "/n"),)
    devnull = config_files(str(prefix), {"HOME": str(home), "PIP_CONFIG_FILE": os.devnull})
    assert "PIP_CONFIG_FILE" not in {f.scope for f in devnull}  # pip's "no configuration file", not a file
    moved = config_files(str(prefix), {"HOME": str(home), "XDG_CONFIG_HOME": str(tmp_path / "cfg")})
    assert str(home / ".config" / "pip" / "pip.conf") not in {f.path for f in moved}  # XDG_CONFIG_HOME moves it


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
def test_fix_names_the_pip_files_it_reads_and_does_not_and_says_why_its_pip_step_failed(tmp_path):
    python = make_venv(tmp_path / "target")
    profile = tmp_path / "profile.toml"
    profile.write_text('extends = "torch-2.11-nvgemm"\n\n[python]\nversion = ">=3.10"\n')
    named = _conf(tmp_path / "named.conf",
                  f"[global]\nconstraint = {tmp_path / 'c.txt'}\nindex-url = https://elsewhere.example/simple\n")
    user = _conf(tmp_path / "config-home" / "pip" / "pip.conf", "[global]\nextra-index-url = https://user.example/simple\n")
    mirror = f"https://me:secret@127.0.0.1:{_closed_port()}/mirror?k=S3cretValue42"  # pip prints the query apart
    machine = _conf(tmp_path / "xdg" / "pip" / "pip.conf", f"[global]\nextra-index-url = {mirror}\n")
    url = f"https://127.0.0.1:{_closed_port()}/simple"
    env = {**os.environ, "PIP_CONFIG_FILE": str(named), "XDG_CONFIG_HOME": str(tmp_path / "config-home"),
           "XDG_CONFIG_DIRS": str(tmp_path / "xdg")}

    def fix(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "envcheck", "fix", "--python", str(python), "--policy", str(profile),
                               "--no-gpu", "--cutlass-dir", str(tmp_path / "cutlass"), "--index-url", url, *args],
                              capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)

    plan = json.loads(fix("--json").stdout)
    pip_steps = [n for n, s in enumerate(plan["plan"]["steps"], 1)
                 if any(c[1:3] == ["-m", "pip"] and "install" in c for c in s["commands"])]
    files = {f["path"]: f for f in plan["pip"]["config_files"]}
    assert files[str(named)] == {"path": str(named), "scope": "PIP_CONFIG_FILE", "read": False,
                                 "why": "envcheck removes PIP_CONFIG_FILE from pip's environment",
                                 "keys": ["global.constraint", "global.index-url"]}
    assert (files[str(user)]["scope"], files[str(user)]["read"]) == ("user", False)
    assert (files[str(machine)]["scope"], files[str(machine)]["read"]) == ("global", True)
    shown_mirror = mirror.replace("me:secret@", "***@").replace("S3cretValue42", "***")
    assert plan["pip"]["sources"] == [
        {"kind": "index", "value": url, "steps": pip_steps, "default": False, "from": None},
        {"kind": "index", "value": shown_mirror, "steps": pip_steps, "default": False, "from": f"{machine} (global)"}]
    text = flat(fix("--dry-run").stdout)  # fix wraps at COLUMNS
    assert f"not read: {named} (PIP_CONFIG_FILE: global.constraint, global.index-url; envcheck removes" in text
    assert f"not read: {user} (user: global.extra-index-url; --isolated skips the user's files)" in text
    assert f"read: {machine} (global: global.extra-index-url)" in text
    assert f"not read: {machine}" not in text
    steps = ", ".join(map(str, pip_steps))
    assert f"index: {url}, steps {steps}" in text
    assert f"index: from {machine} (global): {shown_mirror}, steps {steps}" in text
    assert "secret" not in text + json.dumps(plan)

    done = fix("--yes", "--json")
    assert done.returncode == 1, done.stderr
    failed = [r for r in json.loads(done.stdout)["outcome"]["done"] if not r["ok"]][0]
    assert failed["cause"]["kind"] == "network" and failed["cause"]["tool"] == "pip"
    assert any("Connection refused" in line for line in failed["cause"]["lines"])
    assert "      pip: " in done.stderr and "pip could not reach the package index" in done.stderr
    shown = fix("--yes")
    assert "Failed: install torch" in shown.stdout and "pip could not reach the package index" in shown.stdout
    assert re.search(r"\n +pip: ", shown.stdout) and "Connection refused" in flat(shown.stdout)
    # the secrets of a URL a file pip reads set are masked in the output and the log, where pip prints them apart
    log = Path(re.search(r"output goes to (\S+)", shown.stderr)[1]).read_text()
    assert "127.0.0.1" in log and "/mirror" in log
    for output in (done.stdout, done.stderr, shown.stdout, shown.stderr, log):
        assert "S3cretValue42" not in output and "secret" not in output
