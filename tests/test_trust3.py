"""Trust III (issue 24), through the real CLI in real processes: no child envcheck starts runs in the user's folder,
no secret reaches a child's argv, and every bad input of the probe's list is exit 2 naming the file and the key."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from envcheck.bundle.manifest import sha256_of
from envcheck.proc import Child, private_folder, run
from wheelfactory import build_wheel

ENVCHECK = str(Path(sys.executable).parent / "envcheck")  # the console script a user runs: no folder on its path
LIMIT_S = 60


def envcheck(*args: str, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    environment = {**os.environ, "ENVCHECK_CACHE_DIR": str(cwd / ".cache"), "XDG_STATE_HOME": str(cwd / ".state"),
                   "HOME": str(cwd / ".home"), **(env or {})}
    return subprocess.run([ENVCHECK, *args], capture_output=True, text=True, cwd=cwd, env=environment,
                          timeout=LIMIT_S, stdin=subprocess.DEVNULL)


# --------------------------------------------------------------------------------------------------------------
# 1. Every child runs in an empty folder of its own


def test_a_child_runs_in_an_empty_private_folder_removed_when_it_ends(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    done = run([sys.executable, "-c", "import os; print(os.getcwd()); print(os.listdir('.'))"], 30)
    folder, listing = done.stdout.splitlines()
    assert Path(folder) != tmp_path and listing == "[]" and not os.path.exists(folder)
    child = Child([sys.executable, "-c", "import os; open('left.txt', 'w').write('x'); print(os.getcwd())"])
    folder = child.finish(30).stdout.strip()
    assert not os.path.exists(folder)  # with what the child left in it


def test_a_relative_program_is_found_from_where_envcheck_runs(tmp_path, monkeypatch):
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "py").symlink_to(sys.executable)
    monkeypatch.chdir(tmp_path)
    assert run(["bin/py", "-c", "print('ok')"], 30).stdout == "ok\n"


def test_a_private_folder_is_its_owners_alone():
    with private_folder() as folder:
        assert folder.is_dir() and (folder.stat().st_mode & 0o777) == 0o700 and not any(folder.iterdir())
    assert not folder.exists()


def _planted_pip(folder: Path) -> Path:
    """A `pip` package in the user's folder: `python -m pip` started there imports it instead of pip."""
    marker = folder / "pip-from-the-folder-ran"
    (folder / "pip").mkdir()
    payload = f"import pathlib; pathlib.Path({str(marker)!r}).write_text('ran')\n"
    (folder / "pip" / "__init__.py").write_text(payload)
    (folder / "pip" / "__main__.py").write_text(payload)
    return marker


def test_bundle_runs_pip_in_a_folder_of_its_own_not_the_users(tmp_path):
    wheel = build_wheel(tmp_path / "lock" / "wh", "apache-tvm-ffi", "0.1.7", {"tvm_ffi/__init__.py": ""})
    lock = tmp_path / "lock" / "pylock.toml"
    lock.write_text('lock-version = "1.0"\ncreated-by = "t"\n[[packages]]\nname = "apache-tvm-ffi"\nversion = "0.1.7"\n'
                    f'wheels = [{{ name = "{wheel.name}", path = "wh/{wheel.name}", hashes = {{ sha256 = "{sha256_of(wheel)}" }} }}]\n')
    work = tmp_path / "work"
    work.mkdir()
    marker = _planted_pip(work)
    done = envcheck("bundle", "--profile", "torch-2.11-nvgemm", "--lock", str(lock), "--no-index", "-o", "out", cwd=work)
    assert not marker.exists(), "pip was started in the user's folder and ran the pip/ package there"
    assert done.returncode == 0, done.stderr[-2000:]
    assert (work / "out" / "wheels" / wheel.name).is_file()


@pytest.mark.parametrize("argv", [["doctor", "--json", "--no-gpu"], ["verify", "--lock", "pylock.toml"]])
def test_no_child_of_doctor_or_verify_imports_from_the_users_folder(tmp_path, argv):
    (tmp_path / "pylock.toml").write_text('lock-version = "1.0"\ncreated-by = "t"\npackages = []\n')
    marker = _planted_pip(tmp_path)
    for name in ("json", "site", "importlib"):
        (tmp_path / f"{name}.py").write_text(f"import pathlib; pathlib.Path({str(marker)!r}).write_text('{name}')\n")
    done = envcheck(*argv, cwd=tmp_path)
    assert not marker.exists() and done.returncode in (0, 1), done.stderr[-2000:]


# --------------------------------------------------------------------------------------------------------------
# 3. A password is masked by parsing its URL, whatever characters it holds

PASSWORDS = ["Sekr(t-pw-1", "Sekr't-pw-2", 'Sekr"t-pw-3', "Sekr t-pw-4", "Sekr)t (pw) 5", "a'b\"c(d e)-6"]
# Each test runs whole commands per password: the default suite samples the two that hold every kind of character
# (quotes, parentheses, a space; a closing parenthesis first), `-m exhaustive` runs the other four.
SAMPLED = ("Sekr)t (pw) 5", "a'b\"c(d e)-6")
EACH_PASSWORD = [p if p in SAMPLED else pytest.param(p, marks=pytest.mark.exhaustive) for p in PASSWORDS]


def _pieces(password: str) -> list[str]:
    """The parts of a password a leak would show: each word of it at least 4 characters long, and the whole."""
    import re

    return [password] + [p for p in re.split(r"[\s()'\"]+", password) if len(p) >= 4]


def _leaks(text: str, password: str) -> list[str]:
    return [line for line in text.splitlines() if any(piece in line for piece in _pieces(password))]


@pytest.mark.parametrize("password", EACH_PASSWORD)
def test_an_index_urls_password_never_shows_in_fix_whatever_it_holds(tmp_path, password):
    for argv in (["fix", "--dry-run", "--no-gpu", "--index-url", f"https://me:{password}@pypi.example/simple"],
                 ["fix", "--dry-run", "--json", "--no-gpu", "--index-url", f"https://me:{password}@pypi.example/simple"]):
        done = envcheck(*argv, cwd=tmp_path)
        assert done.returncode in (0, 1, 2) and "Traceback" not in done.stderr, done.stderr[-2000:]
        assert not _leaks(done.stdout + done.stderr, password)


@pytest.mark.parametrize("password", EACH_PASSWORD)
def test_the_cutlass_url_credentials_refusal_shows_no_password(tmp_path, password):
    done = envcheck("fix", "--dry-run", "--no-gpu", "--cutlass-url", f"https://me:{password}@github.com/NVIDIA/cutlass.git",
                    cwd=tmp_path)
    assert done.returncode == 2 and "--cutlass-url" in done.stderr, done.stderr[-2000:]
    assert not _leaks(done.stdout + done.stderr, password)


@pytest.mark.parametrize("password", EACH_PASSWORD)
def test_doctor_shows_a_checkouts_remote_without_its_password(tmp_path, cutlass_repo, password):
    from conftest import git

    checkout = tmp_path / ".cache" / "cutlass"  # envcheck's default checkout (ENVCHECK_CACHE_DIR/cutlass)
    git("clone", "-q", str(cutlass_repo), str(checkout), cwd=tmp_path)
    git("remote", "set-url", "origin", f"https://me:{password}@github.com/NVIDIA/cutlass.git", cwd=checkout)
    for argv in (["doctor", "-v", "--no-gpu"], ["doctor", "--json", "--no-gpu"], ["doctor", "--format", "markdown", "--no-gpu"]):
        done = envcheck(*argv, "--profile", "torch-2.11-nvgemm", cwd=tmp_path)  # the recipe reads the checkout
        assert done.returncode in (0, 1) and "Traceback" not in done.stderr, done.stderr[-2000:]
        assert "github.com/NVIDIA/cutlass" in done.stdout or argv[1] == "--format"
        assert not _leaks(done.stdout + done.stderr, password)


# --------------------------------------------------------------------------------------------------------------
# 3b. git takes a URL's password from its credential store, never from its argv: a real https server


def _https_git_server(tmp_path: Path, repo: Path, user: str, password: str):
    """git's smart HTTP (git http-backend) over TLS with basic auth, on 127.0.0.1: (base URL, CA file, requests)."""
    import base64
    import shutil
    import ssl
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    backend = Path(subprocess.run(["git", "--exec-path"], capture_output=True, text=True).stdout.strip()) / "git-http-backend"
    if not shutil.which("openssl") or not backend.is_file():
        pytest.skip("needs openssl and git-http-backend")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert),
                    "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
                   check=True, capture_output=True)
    served = tmp_path / "served"
    subprocess.run(["git", "clone", "-q", "--bare", str(repo), str(served / "cutlass.git")], check=True)
    for key_, value in (("uploadpack.allowFilter", "true"), ("uploadpack.allowAnySHA1InWant", "true")):
        subprocess.run(["git", "-C", str(served / "cutlass.git"), "config", key_, value], check=True)
    wanted = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()
    seen: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):  # noqa: ANN002
            pass

        def _serve(self):
            seen.append(self.headers.get("Authorization") or "")
            if self.headers.get("Authorization") != wanted:
                self.send_response(401)
                self.send_header("WWW-Authenticate", 'Basic realm="test"')
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            path, _, query = self.path.partition("?")
            env = {"PATH": os.environ["PATH"], "GIT_PROJECT_ROOT": str(served), "GIT_HTTP_EXPORT_ALL": "1",
                   "PATH_INFO": path, "QUERY_STRING": query, "REQUEST_METHOD": self.command, "REMOTE_USER": user,
                   "CONTENT_TYPE": self.headers.get("Content-Type") or "", "CONTENT_LENGTH": str(len(body)),
                   "HTTP_CONTENT_ENCODING": self.headers.get("Content-Encoding") or "",
                   "GIT_PROTOCOL": self.headers.get("Git-Protocol") or ""}
            out = subprocess.run([str(backend)], input=body, capture_output=True, env=env).stdout
            head, _, payload = out.partition(b"\r\n\r\n")
            headers = [line.split(":", 1) for line in head.decode().split("\r\n") if ":" in line]
            status = next((int(v.split()[0]) for k, v in headers if k.lower() == "status"), 200)
            self.send_response(status)
            for name, value in headers:
                if name.lower() != "status":
                    self.send_header(name, value.strip())
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        do_GET = do_POST = _serve

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"127.0.0.1:{server.server_address[1]}", cert, seen, server


def _git_spy(folder: Path) -> Path:
    """A `git` first on PATH that writes each argv it is given (one NUL-separated line) and runs the real git."""
    import shutil

    log = folder / "argv.log"
    folder.mkdir()
    (folder / "git").write_text(f"#!/bin/sh\nprintf '%s\\0' \"$@\" >> {log}\nprintf '\\n' >> {log}\n"
                                f"exec {shutil.which('git')} \"$@\"\n")
    (folder / "git").chmod(0o755)
    return log


def test_a_fetch_takes_the_urls_password_from_a_private_credential_store_never_argv(tmp_path, cutlass_repo, monkeypatch):
    from conftest import git

    from envcheck.cutlass_fetch import fetch

    password = "S3cr(t'pw\"x-42"
    host, cert, seen, server = _https_git_server(tmp_path, cutlass_repo, "me", password)
    spied = _git_spy(tmp_path / "spy")
    monkeypatch.setenv("PATH", f"{spied.parent}:{os.environ['PATH']}")
    monkeypatch.setenv("GIT_SSL_CAINFO", str(cert))
    commit = git("rev-parse", "HEAD", cwd=cutlass_repo)
    from urllib.parse import quote

    dest = tmp_path / "checkout"
    try:
        fetch(dest, f"https://me:{quote(password, safe='')}@{host}/cutlass.git", "cutlass_api", commit,
              "python/cutlass_api")
    finally:
        server.shutdown()
    assert git("rev-parse", "HEAD", cwd=dest) == commit and (dest / "python" / "cutlass_api" / "pyproject.toml").is_file()
    assert any(seen) and seen[-1].startswith("Basic ")  # the server was asked, and answered with the password
    argv = spied.read_bytes().decode("utf-8", "replace")
    assert "cutlass.git" in argv  # the spy saw the fetch
    for piece in (password, quote(password, safe=""), "S3cr"):
        assert piece not in argv, "a git command line held the password"
        assert piece not in (dest / ".git" / "config").read_text()
    assert not list(Path(os.environ.get("TMPDIR") or "/tmp").glob(f"envcheck-cwd-{os.getpid()}-*/git-credentials"))


@pytest.mark.parametrize("url, words", [
    ("https://h.example/cutlass.git?private_token=S3cret-x", "a token in the URL's query cannot reach git"),
    ("ssh://me:S3cret-x@h.example/cutlass.git", "takes no password from its URL"),
])
def test_a_secret_git_could_take_only_on_its_command_line_is_refused(tmp_path, url, words):
    from envcheck.cutlass_fetch import CheckoutRefused, fetch

    with pytest.raises(CheckoutRefused) as caught:
        fetch(tmp_path / "c", url, "cutlass_api", "a" * 40, "python/cutlass_api")
    assert words in str(caught.value) and "S3cret" not in str(caught.value)


# --------------------------------------------------------------------------------------------------------------
# 4. No crash: every input of the issue is exit 2 naming the file and the key (or line), never a traceback

ROOT = Path(__file__).resolve().parent
BENCH = ROOT / "data" / "bench" / "h200-4" / "rec-llm-warm.json"
REPORT = ROOT / "data" / "fleet" / "h200-doctor14.json"
BIG = "9" * 5000
LOCK = 'lock-version = "1.0"\ncreated-by = "t"\n[[packages]]\nname = "foo"\nversion = "1.0"\n'


def _bench_with(time_text: str) -> str:
    text = BENCH.read_text()
    first = '"kernel_ms": '
    at = text.index(first) + len(first)
    end = min(text.index(c, at) for c in ",}" if c in text[at:])
    return text[:at] + time_text + text[end:]


def _report_with(key: str, value: str) -> str:
    import json

    data = json.loads(REPORT.read_text())
    data[key] = "@@"
    return json.dumps(data).replace('"@@"', value)


CRASHES = [
    # a TOML integer past Python's conversion limit, in every file envcheck reads TOML from
    ("weights-toml", "w.toml", f'"16x4096x4096" = {BIG}\n', ["bench", "--weights", "{}", "--compare", str(BENCH), str(BENCH)], "16x4096x4096"),
    ("profile-toml", "p.toml", f'extends = "torch-2.11-nvgemm"\nschema = {BIG}\n', ["doctor", "--no-gpu", "--profile", "{}"], "key schema"),
    ("pyproject-other-tool", "pyproject.toml", f"[tool.other]\nlimit = {BIG}\n", ["doctor", "--no-gpu"], "key tool.other.limit"),
    ("verify-lock", "l.toml", LOCK + f"size = {BIG}\n", ["verify", "--lock", "{}"], "key packages.size"),
    ("lock-from", "l.toml", LOCK + f"size = {BIG}\n", ["lock", "--from", "{}", "--format", "requirements"], "key packages.size"),
    ("profile-hex", "p.toml", 'extends = "torch-2.11-nvgemm"\nschema = 0x' + "f" * 5000 + "\n", ["doctor", "--no-gpu", "--profile", "{}"], "key schema"),
    # JSON: integers past the limit, deep nesting, infinite and subnormal times
    ("diff-big-int", "b.json", _report_with("exit_code", BIG), ["diff", str(REPORT), "{}"], "key exit_code"),
    ("diff-deep", "b.json", "[" * 100_000 + "]" * 100_000, ["diff", str(REPORT), "{}"], "nested too deeply"),
    ("compare-inf", "r.json", _bench_with("1e999"), ["bench", "--compare", str(BENCH), "{}"], "kernel_ms"),
    ("compare-subnormal", "r.json", _bench_with("5e-324"), ["bench", "--compare", str(BENCH), "{}"], "kernel_ms"),
    ("compare-big-int", "r.json", _bench_with(BIG), ["bench", "--compare", str(BENCH), "{}"], "kernel_ms"),
    ("compare-nan", "r.json", _bench_with("NaN"), ["bench", "--compare", str(BENCH), "{}"], "kernel_ms"),
    ("weights-json-big", "w.json", f'{{"16x4096x4096": {BIG}}}', ["bench", "--weights", "{}", "--compare", str(BENCH), str(BENCH)], "16x4096x4096"),
    ("weights-json-inf", "w.json", '{"16x4096x4096": 1e999}', ["bench", "--weights", "{}", "--compare", str(BENCH), str(BENCH)], "16x4096x4096"),
    ("weights-json-deep", "w.json", "[" * 100_000 + "]" * 100_000, ["bench", "--weights", "{}", "--compare", str(BENCH), str(BENCH)], "nested too deeply"),
    ("evidence-inf", "e.json", '{"smoke": {"status": "pass", "seconds": 1e999}}', ["doctor", "--no-gpu", "--evidence", "{}"], "key smoke.seconds"),
]


@pytest.mark.parametrize("name, file, content, argv, key", CRASHES, ids=[c[0] for c in CRASHES])
def test_an_input_the_readers_would_crash_on_is_exit_2_naming_the_file_and_the_key(tmp_path, name, file, content, argv, key):
    (tmp_path / ".git").mkdir()  # a repository: a parent's pyproject.toml is read only inside one
    (tmp_path / file).write_text(content)
    done = envcheck(*[a.replace("{}", file) for a in argv], cwd=tmp_path)
    output = done.stdout + done.stderr
    assert done.returncode == 2 and "Traceback" not in output and "internal error" not in output, output[-2000:]
    assert file in done.stderr and key in done.stderr, done.stderr[-2000:]
    assert len(done.stderr) < 3000 and BIG not in output


def _liar(folder: Path, body: str) -> Path:
    script = folder / "python"
    script.write_text(f"#!/bin/sh\n{body}\n")
    script.chmod(0o755)
    return script


@pytest.mark.parametrize("body, words", [
    ("head -c 17000000 /dev/zero | tr '\\0' ' '", "answered with more than 16 MiB"),
    ("printf '%s' \"$(printf '[%.0s' $(seq 1 100000))\"", "nested too deeply"),
    ("printf '{\"version\": [3, 12, %s]}' $(printf '9%.0s' $(seq 1 5000))", "below 2^63"),
])
def test_a_target_whose_probe_answer_is_unusable_is_exit_2_saying_why(tmp_path, body, words):
    done = envcheck("doctor", "--no-gpu", "--python", str(_liar(tmp_path, body)), cwd=tmp_path)
    assert done.returncode == 2 and words in done.stderr and "Traceback" not in done.stderr, done.stderr[-1500:]


# --------------------------------------------------------------------------------------------------------------
# 6. No wrong answer: a valid profile is not refused for the dots in its comments or its strings


def test_a_profile_with_long_dotted_comments_and_strings_is_read(tmp_path):
    dotted = ".".join(f"k{i}" for i in range(60))
    (tmp_path / "site.toml").write_text(f'# {dotted}\nextends = "torch-2.11-nvgemm"  # {dotted}\n'
                                        f'[python]\nwhy = """\n{dotted}\n"""\n')
    done = envcheck("doctor", "--json", "--no-gpu", "--profile", "site.toml", cwd=tmp_path)
    assert done.returncode in (0, 1) and "dotted key" not in done.stderr, done.stderr[-1000:]


def test_an_extends_that_is_a_symbolic_link_loop_is_exit_2_naming_it(tmp_path):
    (tmp_path / "a.toml").symlink_to(tmp_path / "b.toml")
    (tmp_path / "b.toml").symlink_to(tmp_path / "a.toml")
    (tmp_path / "site.toml").write_text('extends = "a.toml"\n')
    done = envcheck("doctor", "--no-gpu", "--profile", "site.toml", cwd=tmp_path)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr[-1000:]
    assert "site.toml: key 'extends' = 'a.toml': expected a profile file, not a symbolic link that loops" in done.stderr


@pytest.mark.parametrize("argv", [["doctor", "--no-gpu"], ["dockerfile"], ["diff", str(REPORT), str(REPORT)],
                                  ["bench", "--compare", str(BENCH), str(BENCH)], ["fleet", str(REPORT)]])
def test_o_naming_a_link_to_a_folder_is_exit_2_naming_it_and_writes_nothing(tmp_path, argv):
    (tmp_path / "e.log").write_text("ModuleNotFoundError: No module named 'cutlass_api'\n")
    (tmp_path / "folder").mkdir()
    (tmp_path / "out").symlink_to(tmp_path / "folder", target_is_directory=True)
    done = envcheck(*argv, "-o", "out", cwd=tmp_path)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr[-1000:]
    assert "-o out: a folder (what the symbolic link names): expected a file to write" in done.stderr
    assert not any((tmp_path / "folder").iterdir())
