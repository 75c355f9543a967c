"""An index URL's secret reaches pip in a private file, never in a child's argv (which every user can read)."""

from __future__ import annotations

import base64
import hashlib
import http.server
import io
import os
import shlex
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from wheelfactory import build_wheel, make_venv

from envcheck.fix.apply import run_command
from envcheck.fix.pip import PipSources, install_argv, pip_prefix
from envcheck.redact import INDEX_FILE, index_out_of_argv

USER, PASSWORD = "me", "pa ss${HOME}'!x\"y\\z#w"  # what pip must send: every character pip's file parser treats specially
# As the user writes it in the URL: a space, '"', '\' and '#' percent-encoded (a URL has no raw ones); '$', '{', "'"
# and '!' as they are.
QUOTED = "pa%20ss${HOME}'!x%22y%5Cz%23w"


def _index(wheel: Path, project: str = "foo-pkg") -> tuple[http.server.ThreadingHTTPServer, list]:
    """A PEP 503 simple index of one wheel that answers only requests with the right Basic credentials."""
    expected = "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
    seen: list = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 - the stdlib's name
            seen.append((self.path, self.headers.get("Authorization") == expected))
            if self.headers.get("Authorization") != expected:
                self.send_response(401)
                self.send_header("WWW-Authenticate", 'Basic realm="index"')
                self.end_headers()
                return
            if self.path.rstrip("/") == f"/simple/{project}":
                body = f'<html><body><a href="/files/{wheel.name}#sha256={digest}">{wheel.name}</a></body></html>'.encode()
                kind = "text/html"
            elif self.path == f"/files/{wheel.name}":
                body, kind = wheel.read_bytes(), "application/octet-stream"
            else:
                self.send_response(404)
                self.end_headers()
                return
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, seen


class _CommandLines:
    """Every process's argv on this machine, read from /proc over and over while something runs."""

    def __init__(self):
        self.seen: set[bytes] = set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self):
        while not self._stop.is_set():
            for pid in os.listdir("/proc"):
                if pid.isdigit():
                    try:
                        with open(f"/proc/{pid}/cmdline", "rb") as handle:
                            self.seen.add(handle.read())
                    except OSError:
                        pass

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()


def test_the_argv_envcheck_runs_names_a_private_file_that_gives_pip_the_url_exactly(tmp_path):
    url = f"https://{USER}:{QUOTED}@pypi.example/simple?private_token=tok3n"
    argv = install_argv(("/t/bin/python", "-m", "pip"), (Requirement("foo"),), sources=PipSources(index_url=url))
    folder = tmp_path / "private"
    folder.mkdir(mode=0o700)
    ran = index_out_of_argv(argv, folder)
    assert not any(QUOTED in a or "tok3n" in a or "pypi.example" in a for a in ran), ran
    assert f"--requirement={folder / INDEX_FILE}" in ran and ran[ran.index("--"):] == ("--", "foo")
    assert stat.S_IMODE((folder / INDEX_FILE).stat().st_mode) == 0o600
    # as pip's reader of requirements files takes a line apart (shlex), it gives back the URL, `${` made literal
    (option,) = shlex.split((folder / INDEX_FILE).read_text())
    assert option == "--index-url=" + url.replace("${", "%24{")
    # an argv without a secret is left alone, and nothing is written
    plain = install_argv(("/t/bin/python", "-m", "pip"), (Requirement("foo"),), sources=PipSources(index_url="https://pypi.example/simple"))
    assert index_out_of_argv(plain, tmp_path) == plain and not (tmp_path / INDEX_FILE).exists()


@pytest.mark.slow
def test_a_real_install_from_an_index_that_needs_a_password_never_shows_it_in_any_argv(tmp_path):
    wheel = build_wheel(tmp_path / "wheels", "foo-pkg", "1.0", {"foo_pkg/__init__.py": "VALUE = 42\n"})
    server, seen = _index(wheel)
    target = make_venv(tmp_path / "venv")
    try:
        # install_argv as fix builds it; the index is plain http here (fix takes only https), so it is added by hand
        argv = list(install_argv(pip_prefix(str(target), False), (Requirement("foo-pkg"),), sources=PipSources()))
        argv.insert(argv.index("--"), f"--index-url=http://{USER}:{QUOTED}@127.0.0.1:{server.server_port}/simple")
        log = io.StringIO()
        with _CommandLines() as lines:
            status = run_command(argv, log, lambda line: None, timeout=120)
    finally:
        server.shutdown()
    assert status == 0, log.getvalue()[-3000:]
    assert subprocess.run([target, "-c", "import foo_pkg; print(foo_pkg.VALUE)"], capture_output=True, text=True).stdout == "42\n"
    assert ("/simple/foo-pkg/", True) in seen and any(p.startswith("/files/") and ok for p, ok in seen), seen
    pips = [c for c in lines.seen if b"pip" in c and b"install" in c and b"foo-pkg" in c]
    assert pips, "the sampler never saw the pip child"  # else the check below would prove nothing
    secrets = [s.encode() for s in (PASSWORD, QUOTED, "pa ss", "pa%20ss")]
    assert not [c for c in lines.seen if any(s in c for s in secrets)]
    assert not any(s.decode() in log.getvalue() for s in secrets)
    assert f"http://***@127.0.0.1:{server.server_port}/simple" in log.getvalue()


@pytest.mark.slow
def test_a_lock_resolved_from_an_index_that_needs_a_password_never_shows_it_in_uvs_argv(tmp_path, wheelhouse, policy):
    """uv, the lock's resolver, gets the index URL in its environment (readable by its user only), not its argv."""
    from envcheck.lock.resolve import resolve

    wheel = next(wheelhouse.glob("apache_tvm_ffi-0.1.7-*.whl"))
    server, seen = _index(wheel, project="apache-tvm-ffi")
    try:
        with _CommandLines() as lines:
            resolution = resolve(policy, index_url=f"http://{USER}:{QUOTED}@127.0.0.1:{server.server_port}/simple",
                                 torch_index_url="", find_links=[wheelhouse],
                                 without=["torch", "torch-c-dlpack-ext", "nvidia-cutlass-dsl"])
    finally:
        server.shutdown()
    assert {w.name for w in resolution.wheels} >= {"apache-tvm-ffi"}
    assert ("/simple/apache-tvm-ffi/", True) in seen, seen  # uv asked the index, with the password
    assert [c for c in lines.seen if b"uv" in c and b"compile" in c], "the sampler never saw uv"
    secrets = [s.encode() for s in (PASSWORD, QUOTED, "pa ss", "pa%20ss")]
    assert not [c for c in lines.seen if any(s in c for s in secrets)]


@pytest.mark.slow
def test_a_bundles_download_from_an_index_that_needs_a_password_never_shows_it_in_pips_argv(tmp_path):
    """bundle's pip download, as bundle builds and runs it (its --index-url flag takes https only: http by hand)."""
    from envcheck.bundle.make import _run, pip_download_argv
    from envcheck.bundle.manifest import Platform

    wheel = build_wheel(tmp_path / "wheels", "foo-pkg", "1.0", {"foo_pkg/__init__.py": "VALUE = 42\n"})
    server, seen = _index(wheel)
    dest = tmp_path / "out"
    dest.mkdir()
    try:
        argv = pip_download_argv(sys.executable, ["foo-pkg==1.0"], dest, Platform.linux("3.12"), no_index=False,
                                 index_url=f"http://{USER}:{QUOTED}@127.0.0.1:{server.server_port}/simple", find_links=())
        with _CommandLines() as lines:
            done = _run(argv)
    finally:
        server.shutdown()
    assert done.returncode == 0 and (dest / wheel.name).exists(), done.stdout[-2000:] + done.stderr[-2000:]
    assert ("/simple/foo-pkg/", True) in seen, seen
    assert [c for c in lines.seen if b"pip" in c and b"download" in c], "the sampler never saw pip"
    secrets = [s.encode() for s in (PASSWORD, QUOTED, "pa ss", "pa%20ss")]
    assert not [c for c in lines.seen if any(s in c for s in secrets)]
