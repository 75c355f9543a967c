"""The bad-input corpus: every input a user (or an attacker) can get wrong, through the real CLI in a subprocess.

Each one exits 2 with a message that names the input, never 3 (a crash), never a traceback, and never hangs (each
run has a hard limit far below the time a hang would take). Secrets given anywhere never come back out.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import flat

SECRET = "sekrit-Pa55w0rd-42"
LIMIT_S = 25  # a run that takes this long has hung: the corpus's inputs are all refused within a second or two


def envcheck(*args: str, cwd: Path, env: dict | None = None, limit: float = LIMIT_S) -> subprocess.CompletedProcess:
    # A bare PATH and HOME: fix's advice on other interpreters would otherwise run every python of this machine.
    environment = {**os.environ, "ENVCHECK_CACHE_DIR": str(cwd / "cache"), "XDG_STATE_HOME": str(cwd / "state"),
                   "HOME": str(cwd / "home"), "PATH": "/usr/bin:/bin", **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "envcheck", *args], capture_output=True, text=True, cwd=cwd, env=environment,
        timeout=limit, stdin=subprocess.DEVNULL,
    )


# --------------------------------------------------------------------------------------------------------------
# The inputs. Each maker writes what the case needs into a folder and returns the name the message must carry.

NESTED = "a = " + "[" * 5000 + "]" * 5000 + "\n"
HEX64 = "ab" * 32


def _lock(digest: str) -> str:
    return textwrap.dedent(f"""\
        lock-version = "1.0"
        created-by = "a test"
        [[packages]]
        name = "foo"
        version = "1.0"
        [packages.archive]
        path = "foo-1.0.tar.gz"
        hashes = {{sha256 = "{digest}"}}
        """)


def _file(name: str, content: bytes | str):
    def make(folder: Path) -> str:
        path = folder / name
        path.write_bytes(content if isinstance(content, bytes) else content.encode())
        return name
    return make


def _fifo(folder: Path) -> str:
    os.mkfifo(folder / "pipe.toml")
    return "pipe.toml"


def _folder(folder: Path) -> str:
    (folder / "adir.toml").mkdir()
    return "adir.toml"


def _given(name: str):
    return lambda folder: name


def _lock_and(name: str):
    def make(folder: Path) -> str:
        (folder / "pylock.toml").write_text(_lock(HEX64))
        return name
    return make


def _liar(answer: str):
    """An executable that answers the probe with JSON that is not the probe's (a list, a version that is text)."""
    def make(folder: Path) -> str:
        (folder / "pylock.toml").write_text(_lock(HEX64))
        script = folder / "liar"
        script.write_text(f"#!/bin/sh\ncat <<'EOF'\n{answer}\nEOF\n")
        script.chmod(0o755)
        return str(script)
    return make


BAD_VERSION = ('{"executable": "x", "version": "abc", "implementation": "cpython", "prefix": "/", "base_prefix": "/", '
               '"site_dirs": [], "sys_path": [], "distributions": [], "modules": []}')
NOT_UTF8 = b'schema = 1\ntitle = "caf\xe9"\n'
HUGE = "# filler\n" * 250_000  # 2.25 MB: over the cap, so never parsed

CASES = [
    # --policy: only regular files, under a size cap, UTF-8, TOML that does not nest without end
    ("policy-not-utf8", _file("bad.toml", NOT_UTF8), ["doctor", "--policy", "{}"]),
    ("policy-nested", _file("nested.toml", NESTED), ["doctor", "--policy", "{}"]),
    ("policy-dev-zero", _given("/dev/zero"), ["doctor", "--policy", "{}"]),
    ("policy-fifo", _fifo, ["doctor", "--policy", "{}"]),
    ("policy-directory", _folder, ["doctor", "--policy", "{}"]),
    ("policy-too-big", _file("big.toml", HUGE), ["doctor", "--policy", "{}"]),
    ("policy-fifo-fix", _fifo, ["fix", "--dry-run", "--policy", "{}"]),
    ("policy-fifo-dockerfile", _fifo, ["dockerfile", "--policy", "{}"]),
    ("policy-not-utf8-smoke", _file("bad.toml", NOT_UTF8), ["smoke", "--policy", "{}"]),
    ("pyproject-not-utf8", _file("pyproject.toml", b"[tool.envcheck]\nx = '\xff'\n"), ["doctor"]),
    # tomllib takes time and memory by the square of a dotted key's parts: 200 KB of them took 24 GB
    ("policy-dotted-key", _file("dotted.toml", "python." + ".".join(["a"] * 100_000) + " = 1\n"), ["doctor", "--policy", "{}"]),
    ("pyproject-dotted-key", _file("pyproject.toml", "tool.envcheck." + ".".join(["a"] * 100_000) + " = 1\n"), ["doctor"]),
    # a profile's schema is the integer 1; 16,000 [[packages]] (411 KiB) hung envcheck in a quadratic merge
    ("policy-schema-true", _file("schema.toml", 'schema = true\nextends = "torch-2.11-nvgemm"\n'), ["doctor", "--policy", "{}"]),
    ("policy-schema-float", _file("schema.toml", 'schema = 1.0\nextends = "torch-2.11-nvgemm"\n'), ["doctor", "--policy", "{}"]),
    ("policy-16000-packages", _file("many.toml", 'extends = "torch-2.11-nvgemm"\n'
                                    + "".join(f'[[packages]]\nname = "p{i}"\n' for i in range(16_000))), ["fix", "--dry-run", "--policy", "{}"]),
    ("policy-extends-credentials", lambda folder: (_file("credentials.toml", f'[registry]\ntoken = "{SECRET}"\n')(folder),
                                                  _file("site.toml", 'extends = "credentials.toml"\n')(folder))[1],
     ["doctor", "--policy", "{}"]),
    # locks: verify --lock and lock --from
    ("lock-not-utf8", _file("bad.toml", NOT_UTF8), ["verify", "--lock", "{}"]),
    ("lock-nested", _file("nested.toml", NESTED), ["verify", "--lock", "{}"]),
    ("lock-fifo", _fifo, ["verify", "--lock", "{}"]),
    ("lock-dev-zero", _given("/dev/zero"), ["verify", "--lock", "{}"]),
    ("lock-sha256-not-hex", _file("pylock.toml", _lock("zz" * 32)), ["verify", "--lock", "{}"]),
    ("lock-sha256-short", _file("pylock.toml", _lock(HEX64[:40])), ["verify", "--lock", "{}"]),
    ("lock-sha256-upper", _file("pylock.toml", _lock(HEX64.upper())), ["verify", "--lock", "{}"]),
    ("lock-from-sha256", _file("pylock.toml", _lock("not-a-hash")), ["lock", "--from", "{}", "--format", "requirements"]),
    ("lock-from-nested", _file("nested.toml", NESTED), ["lock", "--from", "{}", "--format", "requirements"]),
    ("lock-from-fifo", _fifo, ["lock", "--from", "{}", "--format", "requirements"]),
    # diff: reports and locks
    ("diff-json-nested", _file("deep.json", "[" * 100_000 + "]" * 100_000), ["diff", "{}", "{}"]),
    ("diff-fifo", _fifo, ["diff", "{}", "{}"]),
    ("diff-not-utf8", _file("bad.json", b'{"checks": "\xff"}'), ["diff", "{}", "{}"]),
    # smoke's time limit
    ("smoke-timeout-negative", _given("--timeout"), ["smoke", "--timeout", "-5"]),
    ("smoke-timeout-nan", _given("--timeout"), ["smoke", "--timeout", "nan"]),
    ("smoke-timeout-zero", _given("--timeout"), ["smoke", "--timeout", "0"]),
    ("smoke-timeout-word", _given("--timeout"), ["smoke", "--timeout", "soon"]),
    # an executable that is not Python
    ("python-ls-doctor", _given("/bin/ls"), ["doctor", "--python", "{}"]),
    ("python-ls-smoke", _given("/bin/ls"), ["smoke", "--python", "{}"]),
    ("python-ls-fix", _given("/bin/ls"), ["fix", "--dry-run", "--python", "{}"]),
    ("python-ls-lock", _given("/bin/ls"), ["lock", "--python", "{}"]),
    ("python-ls-verify", _lock_and("/bin/ls"), ["verify", "--lock", "pylock.toml", "--python", "{}"]),
    ("python-true-doctor", _given("/bin/true"), ["doctor", "--json", "--python", "{}"]),
    ("python-json-list-verify", _liar("[]"), ["verify", "--lock", "pylock.toml", "--python", "{}"]),
    ("python-json-list-doctor", _liar("[]"), ["doctor", "--python", "{}"]),
    ("python-json-version-lock", _liar(BAD_VERSION), ["lock", "--python", "{}"]),
    ("python-json-version-fix", _liar(BAD_VERSION), ["fix", "--dry-run", "--python", "{}"]),
    ("smoke-timeout-huge", _given("--timeout"), ["smoke", "--timeout", "1e308"]),
    # URLs
    ("cutlass-url-bad-scheme", _given("--cutlass-url"), ["fix", "--dry-run", "--cutlass-url", "ftp://u:" + SECRET + "@host/cutlass"]),
]


@pytest.mark.parametrize("name, make, argv", CASES, ids=[c[0] for c in CASES])
def test_bad_input_exits_2_naming_it(tmp_path, name, make, argv):
    named = make(tmp_path)
    done = envcheck(*[a.replace("{}", named) for a in argv], cwd=tmp_path)
    output = done.stdout + done.stderr
    assert done.returncode == 2, output[-2000:]
    assert named in done.stderr, done.stderr[-2000:]
    assert "Traceback" not in output and "internal error" not in output
    assert len(done.stderr) < 3000, "an error message echoes its input in full"
    assert SECRET not in output


def test_not_python_is_not_offered_to_fix_and_its_output_is_not_echoed(tmp_path):
    done = envcheck("doctor", "--python", "/bin/ls", cwd=tmp_path)
    assert done.returncode == 2 and "expected a Python interpreter" in done.stderr
    assert "fix --python /bin/ls" not in done.stdout + done.stderr
    assert "Standard library only" not in done.stderr  # the probe's source, echoed back by ls


# --------------------------------------------------------------------------------------------------------------
# No hang: a --python whose child keeps stdout open


def _lingering_python(folder: Path) -> Path:
    """An interpreter that starts a child which keeps the probe's stdout open long after the probe is done."""
    script = folder / "python"
    script.write_text(f"#!/bin/sh\nsleep 120 &\nexec {sys.executable} \"$@\"\n")
    script.chmod(0o755)
    return script


@pytest.mark.parametrize("argv", [["doctor", "--json", "--no-gpu"], ["verify", "--lock", "pylock.toml"],
                                  ["lock", "--no-index", "--find-links", "."]], ids=["doctor", "verify", "lock"])
def test_a_child_holding_stdout_open_does_not_keep_envcheck_waiting(tmp_path, argv):
    (tmp_path / "pylock.toml").write_text(_lock(HEX64))
    python = _lingering_python(tmp_path)
    done = envcheck(*argv, "--python", str(python), cwd=tmp_path, limit=20)  # waited 120 s before
    assert done.returncode in (0, 1, 2) and "Traceback" not in done.stderr
    assert "could not be read" not in done.stderr, done.stderr  # the probe's answer was read, not lost


# --------------------------------------------------------------------------------------------------------------
# Writable state: fix --yes with a state folder it cannot use


@pytest.mark.parametrize("variable", ["ENVCHECK_STATE_DIR", "ENVCHECK_CACHE_DIR"])
def test_fix_yes_with_an_unusable_state_folder_exits_2_naming_the_variable(tmp_path, variable):
    a_file = tmp_path / "a-file"
    a_file.write_text("")
    for where in (str(a_file / "below"), "/proc/envcheck-state"):  # under a file; where nothing can be made
        done = envcheck("fix", "--yes", "--no-gpu", cwd=tmp_path, env={variable: where})
        assert done.returncode == 2, done.stdout + done.stderr
        assert variable in done.stderr and where in done.stderr and "Traceback" not in done.stderr


# --------------------------------------------------------------------------------------------------------------
# What a target environment holds is data: odd values are facts, not crashes


def _odd_site(folder: Path) -> Path:
    site = folder / "site"
    for name in ("torch", "nvidia_cutlass_dsl", "foo"):
        info = site / f"{name}-1.dist-info"
        info.mkdir(parents=True)
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: not a version!\n\n")
    (site / "torch").mkdir()
    (site / "torch" / "__init__.py").write_text("")
    (site / "torch" / "version.py").write_text("__version__ = {'2.11.0'}\ncuda = {1, 2}\ngit_version = 3\n")
    return site


@pytest.mark.parametrize("argv", [["doctor", "--json", "--no-gpu"], ["fix", "--dry-run", "--no-gpu"],
                                  ["verify", "--lock", "pylock.toml"]], ids=["doctor", "fix", "verify"])
def test_invalid_versions_and_a_set_literal_in_torch_version_py_are_facts(tmp_path, argv):
    (tmp_path / "pylock.toml").write_text(_lock(HEX64))
    done = envcheck(*argv, cwd=tmp_path, env={"PYTHONPATH": str(_odd_site(tmp_path))})
    assert done.returncode in (0, 1), done.stdout[-1500:] + done.stderr[-1500:]
    if argv[0] == "doctor":
        import json

        statuses = {f["id"]: f["status"] for f in json.loads(done.stdout)["checks"]}
        assert statuses["python.version"] != "error" and list(statuses.values()).count("error") == 0, statuses


# --------------------------------------------------------------------------------------------------------------
# Secrets stay secret


def test_credentials_in_the_cutlass_url_are_refused_and_never_shown(tmp_path):
    for url in (f"https://user:{SECRET}@github.com/NVIDIA/cutlass", f"https://{SECRET}@github.com/NVIDIA/cutlass"):
        done = envcheck("fix", "--dry-run", "--json", "--cutlass-url", url, cwd=tmp_path)
        assert done.returncode == 2 and "--cutlass-url" in done.stderr and "credentials" in done.stderr
        assert SECRET not in done.stdout + done.stderr


def test_credentials_in_the_policys_cutlass_url_never_reach_the_dockerfile(tmp_path):
    policy = tmp_path / "site.toml"
    policy.write_text(f'extends = "torch-2.11-nvgemm"\n[cutlass]\nurl = "https://x:{SECRET}@git.example/cutlass.git"\n')
    done = envcheck("dockerfile", "--policy", str(policy), cwd=tmp_path)
    assert done.returncode == 2 and "cutlass.url" in done.stderr and str(policy) in done.stderr
    assert SECRET not in done.stdout + done.stderr


def test_an_index_password_never_shows_in_fixs_plan(tmp_path):
    done = envcheck("fix", "--dry-run", "--no-gpu", "--index-url", f"https://me:{SECRET}@pypi.example/simple", cwd=tmp_path)
    assert done.returncode in (0, 1) and "pypi.example" in done.stdout
    assert SECRET not in done.stdout + done.stderr


def test_key_variables_are_masked_in_doctors_json(tmp_path):
    done = envcheck("doctor", "--json", "--no-gpu", cwd=tmp_path,
                    env={"OPENAI_KEY": SECRET, "PYTHONPATH": f"/opt/{SECRET}/lib"})
    assert done.returncode in (0, 1) and '"pythonpath"' in done.stdout
    assert SECRET not in done.stdout + done.stderr


def test_a_huge_policy_value_is_not_echoed_in_full(tmp_path):
    policy = tmp_path / "site.toml"
    for value in ("x" * 900_000, "not a ref " * 90_000):  # valid but huge; invalid and huge
        policy.write_text('extends = "torch-2.11-nvgemm"\n[cutlass]\nbranch = "' + value + '"\n')
        done = envcheck("doctor", "--policy", str(policy), cwd=tmp_path)
        assert done.returncode == 2 and "cutlass.branch" in done.stderr and len(done.stderr) < 3000, done.stderr[:3000]


@pytest.mark.parametrize("argv", [["dockerfile", "-o", "out.fifo"], ["doctor", "--no-gpu", "--junit", "out.fifo"],
                                  ["lock", "--from", "pylock.toml", "--format", "requirements", "-o", "out.fifo"]],
                         ids=["dockerfile", "junit", "lock"])
def test_an_output_fifo_nobody_reads_is_refused_not_waited_on(tmp_path, argv):
    os.mkfifo(tmp_path / "out.fifo")
    (tmp_path / "pylock.toml").write_text(_lock(HEX64))
    done = envcheck(*argv, cwd=tmp_path)
    assert done.returncode == 2 and "out.fifo" in done.stderr and "nothing reads" in done.stderr, done.stderr


def test_a_huge_unknown_key_is_not_echoed_in_full(tmp_path):
    policy = tmp_path / "site.toml"
    policy.write_text('extends = "torch-2.11-nvgemm"\n[cutlass]\n' + "k" * 500_000 + ' = 1\n')
    done = envcheck("doctor", "--policy", str(policy), cwd=tmp_path)
    assert done.returncode == 2 and str(policy) in done.stderr and len(done.stderr) < 5000, done.stderr[:3000]


# --------------------------------------------------------------------------------------------------------------
# Numeric flags (issue 15): every one of every command is finite and in its range, checked by one validator


def _numeric_flags() -> list[tuple[str, str]]:
    """(command, flag) for every float or int option of every command, read from the command functions' own
    annotations: a new numeric option joins the table by itself."""
    import inspect
    import typing

    from envcheck.cli import app

    flags = []
    for command in app.registered_commands:
        hints = typing.get_type_hints(command.callback)
        for name, parameter in inspect.signature(command.callback).parameters.items():
            if {int, float} & set(typing.get_args(hints[name]) or (hints[name],)):
                flags.append((command.name or command.callback.__name__, parameter.default.param_decls[0]))
    return sorted(flags)


def test_the_numeric_flags_are_the_ones_the_table_knows():
    assert _numeric_flags() == [("bench", "--budget"), ("bench", "--timeout"), ("fix", "--lock-timeout"),
                                ("smoke", "--timeout")]


@pytest.mark.parametrize("command, flag", _numeric_flags())
@pytest.mark.parametrize("value", ["inf", "-inf", "nan", "-1", "0", "1e309", "604801", "1e-400"])
def test_a_numeric_flag_out_of_range_exits_2_naming_it(tmp_path, command, flag, value, capsys):
    from envcheck.cli import main

    assert main([command, flag, value]) == 2
    err = capsys.readouterr().err
    assert f"{flag} " in err and "expected a number of seconds above 0 and at most 604800 (a week)" in err, err


def test_bench_budget_inf_exits_2_in_a_real_process(tmp_path):
    """The issue's case, through the real entry point: it was accepted, and then nothing bounded the run."""
    done = envcheck("bench", "--budget", "inf", cwd=tmp_path)
    assert done.returncode == 2 and done.stderr == (
        "envcheck: error: --budget inf: expected a number of seconds above 0 and at most 604800 (a week)\n")


@pytest.mark.parametrize("command, flag", _numeric_flags())
def test_a_numeric_flag_in_range_passes_the_check(tmp_path, command, flag):
    done = envcheck(command, flag, "0.5", "--python", "/no/such/python", cwd=tmp_path)
    assert done.returncode == 2 and "--python /no/such/python" in done.stderr and flag not in done.stderr


# --------------------------------------------------------------------------------------------------------------
# Escape sequences from data never reach the terminal (issue 15): profile text, lock text, node reports, logs


CLEAR = "\x1b[2J\x1b[H"  # clear the screen, cursor home
OSC52 = "\x1b]52;c;ZWNobyBwd25lZA==\x07"  # write "echo pwned" to the clipboard
FORGED = "\r\x1b[1A\x1b[2K  PASS  cuda.driver  ok"  # back to the line start, up one line, erase it, a fake verdict
HOSTILE = CLEAR + OSC52 + FORGED + "\x9b2J\u202eevil\u202c\x07\x08"
RAW = ("\x1b", "\r", "\x07", "\x08", "\x9b", "\u202e")


def _raw_controls(text: str) -> list[str]:
    return [repr(c) for c in RAW if c in text]


def _toml_string(text: str) -> str:
    import json

    return json.dumps(text)  # a JSON string is a TOML basic string: \u escapes for every control


def _hostile_profile(folder: Path) -> Path:
    profile = folder / "hostile.toml"
    profile.write_text(f'extends = "torch-2.11-nvgemm"\ntitle = {_toml_string("NVGEMM " + HOSTILE)}\n'
                       f'[python]\nwhy = {_toml_string("why " + HOSTILE)}\n')
    return profile


def _hostile_why(folder: Path) -> Path:
    """Hostile text where a profile may hold a paragraph (a why): read, so shown, cleaned (a title is refused)."""
    profile = folder / "hostile-why.toml"
    profile.write_text(f'extends = "torch-2.11-nvgemm"\n[python]\nwhy = {_toml_string("why " + HOSTILE)}\n')
    return profile


def _hostile_lock(folder: Path) -> Path:
    lock = folder / "pylock.toml"
    lock.write_text(_lock(HEX64) + f'[tool.envcheck]\nprofile = {_toml_string("p" + OSC52 + HOSTILE)}\n')
    return lock


def _hostile_report(folder: Path) -> Path:
    """A node's report as fleet and diff read it, its findings and hostname carrying a forged PASS."""
    import json

    report = folder / "reports" / "node7.json"
    report.parent.mkdir(exist_ok=True)
    report.write_text(json.dumps({
        "schema_version": 2, "exit_code": 1, "profile": {"id": "torch-2.11-nvgemm" + OSC52},
        "checks": [{"id": "cuda.driver" + CLEAR, "status": "fail", "found": "driver 570" + FORGED},
                   {"id": "torch.version", "status": "pass", "found": "2.11.0" + HOSTILE}],
        "host": {"hostname": "node7" + HOSTILE, "driver": "570" + FORGED, "gpus": ["H200" + OSC52]},
        "smoke": {"status": "fail", "summary": "x" + FORGED}, "facts": None,
    }))
    good = dict(json.loads(report.read_text()), exit_code=0, host={"hostname": "node1", "driver": "580", "gpus": ["H200"]})
    good["checks"] = [dict(check, status="pass") for check in good["checks"]]
    (folder / "reports" / "node1.json").write_text(json.dumps(good))
    return report


TERMINAL_CASES = [  # name, the input, the command, what of the data it shows (cleaned)
    ("doctor-profile", _hostile_profile, ["doctor", "--no-gpu", "-v", "--policy", "{}"], "why "),
    ("doctor-profile-why", _hostile_why, ["doctor", "--no-gpu", "-v", "--policy", "{}"], "why "),
    ("doctor-profile-markdown", _hostile_profile, ["doctor", "--no-gpu", "--format", "markdown", "-v", "--policy", "{}"],
     "PASS  cuda.driver  ok"),
    ("dockerfile-profile", _hostile_profile, ["dockerfile", "--policy", "{}"], "PASS  cuda.driver  ok"),
    ("diff-lock", lambda f: (_hostile_report(f), _hostile_lock(f))[1], ["diff", "{}", "reports/node7.json"], "evil"),
    ("fleet-report", lambda f: (_hostile_report(f), "reports")[1], ["fleet", "{}"], "PASS  cuda.driver  ok"),
    ("fleet-report-markdown", lambda f: (_hostile_report(f), "reports")[1], ["fleet", "--format", "markdown", "{}"],
     "PASS  cuda.driver  ok"),
    ("diff-report", lambda f: (_hostile_report(f), "reports/node1.json")[1], ["diff", "{}", "reports/node7.json"],
     "PASS  cuda.driver  ok"),
    ("explain-log", _file("ci.log", "ModuleNotFoundError: No module named 'cutlass'" + HOSTILE + "\n"),
     ["explain", "{}"], "evil"),
    ("error-message", _given("bad" + HOSTILE + ".json"), ["diff", "{}", "{}"], "PASS  cuda.driver  ok"),
]


@pytest.mark.parametrize("name, make, argv, shown", TERMINAL_CASES, ids=[c[0] for c in TERMINAL_CASES])
def test_no_escape_sequence_from_data_reaches_stdout_or_stderr(tmp_path, name, make, argv, shown):
    named = make(tmp_path)
    done = envcheck(*[a.replace("{}", str(named)) for a in argv], cwd=tmp_path)
    assert "Traceback" not in done.stderr, done.stderr[-2000:]
    # The data is shown, cleaned (or, where a reader refuses control characters in it, refused naming the file).
    refused = done.returncode == 2 and Path(str(named)).name in done.stderr
    assert shown in done.stdout + done.stderr or refused, (done.stdout[-800:], done.stderr[-800:])
    assert _raw_controls(done.stdout) == [] and _raw_controls(done.stderr) == [], (done.stdout[-800:], done.stderr[-800:])


def test_json_output_carries_the_data_escaped_not_raw(tmp_path):
    import json

    _hostile_report(tmp_path)
    done = envcheck("fleet", "--json", "reports", cwd=tmp_path)
    assert done.returncode == 1 and _raw_controls(done.stdout) == []
    outcomes = " ".join(g["outcome"] for g in json.loads(done.stdout)["groups"])
    assert FORGED in outcomes  # the data itself, for a program, as the report had it


def test_a_hostile_hostname_is_cleaned_in_an_output_file_too(tmp_path):
    _hostile_report(tmp_path)
    assert envcheck("fleet", "reports", "-o", "view.txt", cwd=tmp_path).returncode == 1
    view = (tmp_path / "view.txt").read_text()
    assert "node7" in view and _raw_controls(view) == []


def test_envchecks_own_colours_survive_on_a_terminal(tmp_path):
    """On a terminal doctor paints its status labels: those sequences (and only those) get through."""
    import pty
    import select as selector
    import subprocess
    import sys

    profile = _hostile_why(tmp_path)
    primary, secondary = pty.openpty()
    environment = {**os.environ, "ENVCHECK_CACHE_DIR": str(tmp_path / "cache"), "XDG_STATE_HOME": str(tmp_path / "s"),
                   "HOME": str(tmp_path / "home"), "PATH": "/usr/bin:/bin", "COLUMNS": "120"}
    environment.pop("NO_COLOR", None)
    child = subprocess.Popen([sys.executable, "-m", "envcheck", "doctor", "--no-gpu", "-v", "--policy", str(profile)],
                             stdout=secondary, stderr=secondary, stdin=subprocess.DEVNULL, cwd=tmp_path, env=environment)
    os.close(secondary)
    chunks = []
    while True:
        ready, _, _ = selector.select([primary], [], [], 60)
        if not ready:
            break
        try:
            data = os.read(primary, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(primary)
    child.wait(timeout=60)
    shown = b"".join(chunks).decode("utf-8", "replace").replace("\r\n", "\n")  # the tty's own newline translation
    assert "\x1b[31mFAIL \x1b[0m" in shown or "\x1b[32mPASS \x1b[0m" in shown, shown[-1500:]
    sequences = set(__import__("re").findall(r"\x1b\[[0-9;]*[A-Za-z]", shown))
    assert sequences <= {"\x1b[31m", "\x1b[32m", "\x1b[33m", "\x1b[2m", "\x1b[35m", "\x1b[0m"}, sequences
    assert "\x1b]" not in shown and "\r" not in shown and "\u202e" not in shown and "why " in shown


# --------------------------------------------------------------------------------------------------------------
# Secrets in URLs: never in any output, any file envcheck writes, any error


QUERY_SECRETS = {  # a credential-like name, and one that is not: every query value is masked
    "private_token": SECRET + "-a", "X-Amz-Security-Token": SECRET + "-b", "sig": SECRET + "-c", "token": SECRET + "-d",
    "access_token": SECRET + "-e", "X-Goog-Signature": SECRET + "-f", "password": SECRET + "-g", "ref": SECRET + "-h",
}


def _everything_written(folder: Path) -> str:
    return "".join(p.read_text(errors="replace") for p in folder.rglob("*") if p.is_file() and not p.is_symlink())


def test_query_tokens_and_passwords_in_urls_appear_in_no_output_and_no_file(tmp_path):
    from urllib.parse import urlencode

    query = urlencode(QUERY_SECRETS)
    policy = tmp_path / "site.toml"
    # a plan that runs: an interpreter of this Python, its first step (torch from an index that is not there) fails
    policy.write_text('extends = "torch-2.11-nvgemm"\n[python]\nversion = ">=3.10"\n')
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    runs = [
        ["fix", "--dry-run", "--no-gpu", "--index-url", f"https://me:{SECRET}-p@pypi.example/simple?{query}",
         "--cutlass-url", f"https://git.example/cutlass.git?ref={SECRET}-h"],
        ["fix", "--dry-run", "--json", "--no-gpu", "--index-url", f"https://me:{SECRET}-p@pypi.example/simple?{query}",
         "--cutlass-url", f"https://git.example/cutlass.git?ref={SECRET}-h"],
        ["fix", "--yes", "--no-gpu", "--python", str(venv / "bin" / "python"), "--policy", str(policy),
         "--index-url", f"file://{tmp_path}/no-index/simple?{query}", "--cutlass-url", f"https://git.example/c.git?ref={SECRET}-h"],
        ["fix", "--yes", "--json", "--no-gpu", "--python", str(venv / "bin" / "python"), "--policy", str(policy),
         "--index-url", f"file://{tmp_path}/no-index/simple?{query}"],
        ["fix", "--dry-run", "--cutlass-url", f"https://git.example/c.git?private_token={SECRET}-a"],  # refused, exit 2
        ["fix", "--dry-run", "--index-url", f"http://me:{SECRET}-p@pypi.example/simple?{query}"],  # refused, exit 2
    ]
    for argv in runs:
        done = envcheck(*argv, cwd=tmp_path, limit=120)
        output = done.stdout + done.stderr
        assert done.returncode in (0, 1, 2) and "Traceback" not in output, output[-3000:]
        assert SECRET not in output, [line for line in output.splitlines() if SECRET in line]
    written = _everything_written(tmp_path / "cache") + _everything_written(tmp_path / "state")
    assert "pip" in written and "$ " in written  # the fix log is there: the check below looks at something
    assert SECRET not in written, [line for line in written.splitlines() if SECRET in line][:5]


def test_extends_reaching_a_credentials_file_says_not_a_profile_and_shows_nothing_of_it(tmp_path):
    (tmp_path / "credentials.toml").write_text(f'[registry]\ntoken = "{SECRET}"\n')
    (tmp_path / "site.toml").write_text(f'extends = "{tmp_path / "credentials.toml"}"\n')
    (tmp_path / "pyproject.toml").write_text('[tool.envcheck]\nextends = "credentials.toml"\n')
    for argv in (["doctor", "--policy", "site.toml"], ["doctor"], ["fix", "--dry-run"], ["dockerfile", "--policy", "site.toml"]):
        done = envcheck(*argv, cwd=tmp_path)
        assert done.returncode == 2 and "not an envcheck profile" in done.stderr, done.stderr
        assert SECRET not in done.stdout + done.stderr and "registry" not in done.stderr


def test_a_url_from_a_project_file_is_shown_with_its_file_and_key_before_the_first_change(tmp_path):
    """fix --yes --json prints its document at the end: the values it goes by are on stderr before anything runs."""
    import json

    (tmp_path / ".git").mkdir()
    (tmp_path / "pyproject.toml").write_text('[tool.envcheck]\nextends = "torch-2.11-nvgemm"\n[tool.envcheck.python]\n'
                                             'version = ">=3.10"\n[tool.envcheck.torch]\n'
                                             f'index-url = "file://{tmp_path}/mirror/simple"\n')
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    project = f"{tmp_path / 'pyproject.toml'} [tool.envcheck]"
    shown = f"torch's index: file://{tmp_path}/mirror/simple (set by {project}, key torch.index-url)"
    done = envcheck("fix", "--dry-run", "--no-gpu", "--python", str(venv / "bin" / "python"), cwd=tmp_path)
    said = flat(done.stdout)  # wrapped at 80 columns (piped, no COLUMNS): the words, whatever their lines
    assert shown in said and f"profile: torch-2.11-nvgemm (set by {project})" in said, done.stdout
    assert f"set by {project}: python.version, torch.index-url" in said
    done = envcheck("fix", "--yes", "--json", "--no-gpu", "--python", str(venv / "bin" / "python"), cwd=tmp_path, limit=120)
    document = json.loads(done.stdout)
    assert {"what": "torch's index", "value": f"file://{tmp_path}/mirror/simple", "source": project,
            "key": "torch.index-url"} in document["policy"]["values"]
    assert document["policy"]["set_by"] == {project: ["python.version", "torch.index-url"]}
    assert shown in done.stderr and done.stderr.index(shown) < done.stderr.index("[1/"), done.stderr


def test_a_lock_keeps_no_secret_of_the_profiles_urls(tmp_path, wheelhouse, cutlass_repo):
    """The lock is meant to be shared: the profile's torch index and CUTLASS URL go there without user info or query."""
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=cutlass_repo, capture_output=True, text=True).stdout.strip()
    profile = tmp_path / "profile.toml"
    profile.write_text(f'extends = "torch-2.11-nvgemm"\n[torch]\nindex-url = "https://me:{SECRET}@h.example/simple'
                       f'?private_token={SECRET}"\n[cutlass]\nurl = "{cutlass_repo.as_uri()}#access_token={SECRET}"\n'
                       f'commit = "{commit}"\n')
    done = envcheck("lock", "--profile", str(profile), "--no-index", "--find-links", str(wheelhouse), "-o",
                    str(tmp_path / "pylock.toml"), cwd=tmp_path, limit=120)
    assert done.returncode == 0, done.stderr[-2000:]
    text = (tmp_path / "pylock.toml").read_text()
    assert "torch-index" not in text and cutlass_repo.as_uri() in text  # --no-index: no torch index was searched
    assert SECRET not in text + done.stdout + done.stderr


def test_bundles_messages_mask_an_index_urls_secrets_where_pip_prints_them(tmp_path):
    """pip's retry warnings print the index's path with its query, apart from the URL: `/simple?x=VALUE/foo/`."""
    lock = tmp_path / "pylock.toml"
    lock.write_text(textwrap.dedent(f"""\
        lock-version = "1.0"
        created-by = "a test"
        [[packages]]
        name = "foo"
        version = "1.0"
        [[packages.wheels]]
        name = "foo-1.0-py3-none-any.whl"
        url = "https://files.example/foo-1.0-py3-none-any.whl"
        hashes = {{sha256 = "{HEX64}"}}
        [tool.envcheck]
        profile = "torch-2.11-nvgemm"
        """))
    done = envcheck("bundle", "--lock", str(lock), "--index-url", f"https://me:{SECRET}-p@127.0.0.1:9/simple?x={SECRET}-q",
                    "--profile", "torch-2.11-nvgemm", "-o", str(tmp_path / "out"), cwd=tmp_path, limit=120)
    assert done.returncode != 0 and "pip download failed" in done.stderr and "/simple?x=***" in done.stderr, done.stderr
    assert SECRET not in done.stdout + done.stderr
