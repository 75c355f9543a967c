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


def _pieces(password: str) -> list[str]:
    """The parts of a password a leak would show: each word of it at least 4 characters long, and the whole."""
    import re

    return [password] + [p for p in re.split(r"[\s()'\"]+", password) if len(p) >= 4]


def _leaks(text: str, password: str) -> list[str]:
    return [line for line in text.splitlines() if any(piece in line for piece in _pieces(password))]


@pytest.mark.parametrize("password", PASSWORDS)
def test_an_index_urls_password_never_shows_in_fix_whatever_it_holds(tmp_path, password):
    for argv in (["fix", "--dry-run", "--no-gpu", "--index-url", f"https://me:{password}@pypi.example/simple"],
                 ["fix", "--dry-run", "--json", "--no-gpu", "--index-url", f"https://me:{password}@pypi.example/simple"]):
        done = envcheck(*argv, cwd=tmp_path)
        assert done.returncode in (0, 1, 2) and "Traceback" not in done.stderr, done.stderr[-2000:]
        assert not _leaks(done.stdout + done.stderr, password)


@pytest.mark.parametrize("password", PASSWORDS)
def test_the_cutlass_url_credentials_refusal_shows_no_password(tmp_path, password):
    done = envcheck("fix", "--dry-run", "--no-gpu", "--cutlass-url", f"https://me:{password}@github.com/NVIDIA/cutlass.git",
                    cwd=tmp_path)
    assert done.returncode == 2 and "--cutlass-url" in done.stderr, done.stderr[-2000:]
    assert not _leaks(done.stdout + done.stderr, password)


@pytest.mark.parametrize("password", PASSWORDS)
def test_doctor_shows_a_checkouts_remote_without_its_password(tmp_path, cutlass_repo, password):
    from conftest import git

    checkout = tmp_path / ".cache" / "cutlass"  # envcheck's default checkout (ENVCHECK_CACHE_DIR/cutlass)
    git("clone", "-q", str(cutlass_repo), str(checkout), cwd=tmp_path)
    git("remote", "set-url", "origin", f"https://me:{password}@github.com/NVIDIA/cutlass.git", cwd=checkout)
    for argv in (["doctor", "-v", "--no-gpu"], ["doctor", "--json", "--no-gpu"], ["doctor", "--format", "markdown", "--no-gpu"]):
        done = envcheck(*argv, cwd=tmp_path)
        assert done.returncode in (0, 1) and "Traceback" not in done.stderr, done.stderr[-2000:]
        assert "github.com/NVIDIA/cutlass" in done.stdout or argv[1] == "--format"
        assert not _leaks(done.stdout + done.stderr, password)
