"""The probe runs nothing of the target's, and still sees what the target would see.

1. The path it computes from data is the one site.py builds: compared with the real interpreter's own sys.path, per
   Python version (3.6 to 3.13, and Debian's patched python3), per layout (no venv, a venv, a venv that sees the
   system site-packages), with .pth files of every kind of line, PYTHONPATH and a user site.
2. An editable install found as Python finds it, without running its finder: setuptools' default mode (a .pth
   import line that installs a meta-path finder) and compat mode (a .pth path line), both real `pip install -e`.
3. A target armed wherever Python runs code at start-up (a .pth import line, sitecustomize, usercustomize,
   PYTHONSTARTUP, modules shadowing the standard library on PYTHONPATH and in the working directory): doctor in every
   format, fix --dry-run, smoke's pre-check and explain --python run none of it, and doctor judges as before; the
   import lines are shown, and change no verdict.
"""

from __future__ import annotations

import glob
import json
import os
import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import python312
from factsbuilder import SITE, dist, facts, interpreter
from wheelfactory import install, make_venv, pip

from envcheck.gather.interpreter import gather_interpreter
from envcheck.judge import judge
from envcheck.model import Failure, PthImport, Status


def _interpreters() -> list[str]:
    """Every CPython 3 here to compare with: pyenv's versions, and the system's python3 (Debian's patched site.py)."""
    found = sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.*/bin/python3.*")))
    found = [p for p in found if re.fullmatch(r"python3\.\d+", os.path.basename(p))]
    if os.path.isfile("/usr/bin/python3"):
        found.append("/usr/bin/python3")
    return found


def _version(python: str) -> str:
    return subprocess.run([python, "-I", "-S", "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                          capture_output=True, text=True, check=True).stdout.strip()


INTERPRETERS = _interpreters()

REAL_PATH = """import json, site, sys
user = site.ENABLE_USER_SITE and site.getusersitepackages()
print(json.dumps({"path": [p for p in sys.path[1:] if not p.endswith(".__path_hook__")], "prefix": sys.prefix,
                  "base_prefix": sys.base_prefix, "site_dirs": site.getsitepackages() + ([user] if user else [])}))
"""


def real_view(python: str, env: dict, cwd: Path) -> dict:
    """What the interpreter itself, started normally (site and all), has on sys.path."""
    done = subprocess.run([str(python), "-c", REAL_PATH], capture_output=True, text=True, env=env, cwd=cwd, check=True)
    return json.loads(done.stdout)


def write_pth_folder(folder: Path, name: str) -> None:
    """.pth files with every kind of line site.py tells apart, in a site folder."""
    (folder / "rel").mkdir(parents=True, exist_ok=True)
    (folder / "abs").mkdir(exist_ok=True)
    (folder / "zeta").mkdir(exist_ok=True)
    (folder / "inserted").mkdir(exist_ok=True)
    lines = ["# a comment: skipped", "", "   ", "rel", "rel", str(folder / "abs"), "missing-folder", "import sys",
             "  rel", "rel/../rel", "import\tos", "import sys, os; sys.path.insert(0, os.path.join(sitedir, 'inserted'))",
             f"import sys; sys.path.append({str(folder / 'appended')!r})", "import sys; sys.path.insert(-1, 'not-there')",
             "import os; os.environ.setdefault('ENVCHECK_UNREAD', 'anything else: reported, not applied')"]
    (folder / f"b-{name}.pth").write_text("\n".join(lines) + "\n")
    (folder / f"a-{name}.pth").write_text("zeta\n")  # sorted: read before b-
    (folder / "failing").mkdir(exist_ok=True)
    (folder / f"c-{name}.pth").write_text("failing\nimport sys, no_such_module; sys.path.append('failed')\nrel-after\n")
    (folder / "rel-after").mkdir(exist_ok=True)  # never added: site ignores the rest of a file after a failing line
    (folder / f".hidden-{name}.pth").write_text("rel\n")  # skipped from 3.13 on
    (folder / f"not-a-pth-{name}.txt").write_text("abs\n")


@pytest.fixture
def user_home(tmp_path):
    return tmp_path / "home"


def make_layout(tmp_path: Path, python: str, layout: str, home: Path) -> Path:
    """The interpreter as it is, or a venv of it (with or without the system site-packages); .pth files in the
    user site and in the venv's own site-packages."""
    version = _version(python)
    user_site = home / ".local" / "lib" / f"python{version}" / "site-packages"
    user_site.mkdir(parents=True)
    write_pth_folder(user_site, "user")
    if layout == "interpreter":
        return Path(python)
    venv = tmp_path / "venv"
    system = ["--system-site-packages"] if layout == "venv-system-site" else []
    subprocess.run([python, "-m", "venv", "--without-pip", *system, str(venv)], check=True, capture_output=True)
    site_packages = venv / "lib" / f"python{version}" / "site-packages"
    write_pth_folder(site_packages, "venv")
    return venv / "bin" / "python"


@pytest.mark.parametrize("layout", ["interpreter", "venv", "venv-system-site"])
@pytest.mark.parametrize("python", INTERPRETERS or [sys.executable], ids=lambda p: p.replace(os.path.expanduser("~"), "~"))
def test_the_computed_path_is_the_one_site_builds(python, layout, tmp_path, user_home, monkeypatch):
    target = make_layout(tmp_path, python, layout, user_home)
    (tmp_path / "pp-rel").mkdir()
    env = {**os.environ, "HOME": str(user_home), "PYTHONPATH": f"pp-rel::{tmp_path}/pp-abs/:{tmp_path}/pp-abs"}
    env.pop("PYTHONNOUSERSITE", None)
    env.pop("PYTHONUSERBASE", None)
    monkeypatch.chdir(tmp_path)
    probed = gather_interpreter(str(target), env=env)
    real = real_view(target, env, tmp_path)
    assert list(probed.sys_path) == real["path"]
    assert (probed.prefix, probed.base_prefix) == (real["prefix"], real["base_prefix"])
    assert set(probed.site_dirs) == set(real["site_dirs"])
    assert probed.pythonpath == env["PYTHONPATH"]
    # the user site's .pth files were read where site reads them (not in a venv that hides the system's)
    user_rel = str(next(user_home.glob(".local/lib/python*/site-packages")) / "rel")
    assert (user_rel in probed.sys_path) == (layout != "venv")
    assert any(p.line == "import sys" and not p.added for p in probed.pth_imports)
    assert any(p.line.startswith("import os; os.environ") and not p.added for p in probed.pth_imports)
    assert any(p.added and p.added[0].endswith("inserted") for p in probed.pth_imports)


def test_pythonnousersite_read_as_text_leaves_the_user_site_out(tmp_path, user_home, monkeypatch):
    target = make_layout(tmp_path, sys.executable, "venv-system-site", user_home)
    monkeypatch.chdir(tmp_path)
    for value, included in (("1", False), ("", True)):
        env = {**os.environ, "HOME": str(user_home), "PYTHONNOUSERSITE": value}
        probed = gather_interpreter(str(target), env=env)
        assert list(probed.sys_path) == real_view(target, env, tmp_path)["path"]
        assert any(".local" in p for p in probed.sys_path) == included


# ---------------------------------------------------------------------------------------------------------------
# The judge: .pth import lines are shown, and change no verdict

LINES = (PthImport(f"{SITE}/distutils-precedence.pth", "import os; var = 'SETUPTOOLS_USE_DISTUTILS'"),
         PthImport(f"{SITE}/armed.pth", "import os; os.system('id')"),
         PthImport(f"{SITE}/long.pth", "import os; " + "x = 1; " * 200),  # cut short in the details
         PthImport(f"{SITE}/nvidia_cutlass_dsl_packages.pth", "import sys, os, nvidia_cutlass_dsl; sys.path.insert(0, ...)",
                   (f"{SITE}/nvidia_cutlass_dsl/dsl_packages",)))


@pytest.mark.parametrize("case, target, status", [
    ("passes", interpreter(), Status.PASS),
    ("pth-trap", interpreter(dists={}, extra=(dist("nvidia-cutlass-dsl", "4.3.5", location="/tmp/t"),), modules={"cutlass": None}),
     Status.FAIL),
    ("shadowed", interpreter(extra=(dist("nvidia-cutlass", "3.5.0"),), modules={"cutlass": f"{SITE}/cutlass/__init__.py"}),
     Status.FAIL),
    ("no-dsl", interpreter(dists={}), Status.SKIP),
    ("unreadable", Failure("interpreter", "no interpreter at /x"), Status.ERROR),
])
def test_import_lines_are_in_the_details_and_change_no_verdict(case, target, status, policy):
    def importable(found):
        return next(f for f in judge(facts(interpreter=found), policy) if f.id == "cutedsl.importable")

    before = importable(target)
    with_lines = importable(replace(target, pth_imports=LINES) if not isinstance(target, Failure) else target)
    assert before.status == with_lines.status == status
    assert (before.found, before.remedy) == (with_lines.found, with_lines.remedy)
    added = with_lines.details[len(before.details):]
    assert with_lines.details[:len(before.details)] == before.details
    if isinstance(target, Failure):
        assert added == ()
        return
    assert len(added) == len(LINES)
    for detail, line in zip(added, LINES):
        assert detail.startswith(f"not run by envcheck: {line.file}: {line.line[:200]}") and len(detail) < 400
        assert all(f"puts {folder} on the path" in detail for folder in line.added)


# ---------------------------------------------------------------------------------------------------------------
# 2. Editable installs, found without running their finders

PROJECT = """[build-system]
requires = ["setuptools>=64"]
build-backend = "setuptools.build_meta"

[project]
name = "tinypkg"
version = "0.1"

[tool.setuptools.packages.find]
where = ["."]
"""


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["default", "compat"])
def test_an_editable_install_is_found_without_running_its_finder(mode, tmp_path, venv_factory, build_backend):
    project = tmp_path / "project"
    (project / "tinypkg" / "sub").mkdir(parents=True)
    (project / "pyproject.toml").write_text(PROJECT)
    (project / "tinypkg" / "__init__.py").write_text("")
    (project / "tinypkg" / "sub" / "__init__.py").write_text("")
    python = venv_factory()
    settings = [] if mode == "default" else ["--config-settings", f"editable_mode={mode}"]
    pip(python, "install", "--no-index", "--find-links", str(build_backend), *settings, "-e", str(project))
    site_packages = next(python.parent.parent.glob("lib/python*/site-packages"))
    (pth,) = site_packages.glob("__editable__.tinypkg*.pth")
    finders = list(site_packages.glob("__editable___tinypkg*_finder.py"))
    assert bool(finders) == (mode == "default"), "setuptools' modes are not what this test is about"
    mark = tmp_path / "finder-ran"
    for finder in finders:  # bait: the finder's module now marks every import of it
        finder.write_text(finder.read_text() + f"\nopen({str(mark)!r}, 'w').close()\n")

    probed = gather_interpreter(str(python), modules=["tinypkg", "tinypkg.sub"])
    assert not mark.exists(), "the probe ran the editable finder"
    where = subprocess.run([str(python), "-c", "import tinypkg.sub; print(tinypkg.__file__); print(tinypkg.sub.__file__)"],
                           capture_output=True, text=True, check=True).stdout.split()
    assert [probed.module("tinypkg").origin, probed.module("tinypkg.sub").origin] == where
    assert probed.dist("tinypkg").editable == str(project)
    imports = [p for p in probed.pth_imports if p.file == str(pth)]
    assert bool(imports) == (mode == "default")  # the finder's line is reported; compat mode's is a path line
    assert mark.exists() == (mode == "default")  # and the bait works: Python itself ran the finder


DSL_4_8 = ("nvidia-cutlass-dsl==4.8.1", "nvidia-cutlass-dsl-libs-base==4.8.1", "nvidia-cutlass-dsl-libs-core==4.8.1",
           "nvidia-cutlass-operators==0.3.0")


@pytest.mark.slow
@pytest.mark.skipif(python312() is None, reason="the DSL's -libs-base wheel is for CPython 3.12")
def test_the_real_dsl_4_8_import_line_is_read_as_data(tmp_path):
    """nvidia-cutlass-dsl 4.6 and later put `cutlass` first on sys.path with an import line
    (nvidia_cutlass_dsl_packages.pth); read as data, it gives the path and the `cutlass` Python itself finds."""
    wheels = tmp_path / "wheels"
    done = subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:",
                           "--python-version", "3.12", "--platform", "manylinux_2_28_x86_64", "-d", str(wheels), *DSL_4_8],
                          capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        pytest.skip(f"the package index has not these wheels here: {done.stderr.strip()[-200:]}")
    python = make_venv(tmp_path / "venv", python312())
    pip(python, "install", "--no-deps", "--no-index", "--find-links", str(wheels), *DSL_4_8)
    site_packages = next(python.parent.parent.glob("lib/python3.*/site-packages"))
    probed = gather_interpreter(str(python), modules=["cutlass", "cutlass.operators"])
    real = json.loads(subprocess.run(
        [str(python), "-c", "import importlib.util, json, sys; "
                            "print(json.dumps([sys.path[1:], importlib.util.find_spec('cutlass').origin]))"],
        capture_output=True, text=True, check=True).stdout)
    assert [list(probed.sys_path), probed.module("cutlass").origin] == real
    assert real[1] == str(site_packages / "nvidia_cutlass_dsl" / "dsl_packages" / "cutlass" / "__init__.py")
    (line,) = [p for p in probed.pth_imports if p.file == str(site_packages / "nvidia_cutlass_dsl_packages.pth")]
    assert line.added == (str(site_packages / "nvidia_cutlass_dsl" / "dsl_packages"),)
    assert probed.module("cutlass.operators").origin == str(site_packages / "cutlass" / "operators" / "__init__.py")


# ---------------------------------------------------------------------------------------------------------------
# 3. A target armed at every place Python runs code at start-up

SHADOWED = ("ast", "json", "locale", "platform", "site", "importlib")  # not encodings: a shadowing encodings stops
# every Python at start-up, before its code can leave a mark


@pytest.fixture
def armed(tmp_path, wheelhouse):
    """(python, env, cwd, marks): a venv that sees the system site-packages (so its user site counts), holding the
    DSL and a torch that marks its import, with code that leaves a mark in `marks` wherever Python runs some."""
    marks = tmp_path / "ran"
    marks.mkdir()

    def mark(name: str) -> str:
        return f"open({str(marks / name)!r}, 'w').close()"

    venv = tmp_path / "target"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", "--system-site-packages", str(venv)], check=True)
    python = venv / "bin" / "python"
    install(python, wheelhouse, "torch==2.11.0+cu130", "nvidia-cutlass-dsl==4.3.5", "cuda-python")
    version = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    site_packages = venv / "lib" / version / "site-packages"
    (site_packages / "armed.pth").write_text(f"import os; {mark('pth')}\n")
    (site_packages / "sitecustomize.py").write_text(mark("sitecustomize") + "\n")
    home = tmp_path / "home"
    user_site = home / ".local" / "lib" / version / "site-packages"
    user_site.mkdir(parents=True)
    (user_site / "usercustomize.py").write_text(mark("usercustomize") + "\n")
    startup = tmp_path / "startup.py"
    startup.write_text(mark("startup") + "\n")
    shadows = tmp_path / "shadows"
    for folder in (shadows, tmp_path / "cwd"):
        folder.mkdir()
        for name in SHADOWED:
            (folder / f"{name}.py").write_text(mark(f"{folder.name}-{name}") + "\n")
    env = {**os.environ, "HOME": str(home), "PYTHONPATH": str(shadows), "PYTHONSTARTUP": str(startup),
           "PYTHONINSPECT": "1", "PYTHONHOME": sys.base_prefix, "ENVCHECK_TEST_IMPORT_MARK": str(marks / "torch")}
    env.pop("PYTHONNOUSERSITE", None)
    return python, env, tmp_path / "cwd", marks


def envcheck(args: list[str], env: dict, cwd: Path) -> subprocess.CompletedProcess:
    """envcheck run isolated itself (`-I`): the armed variables reach the probe through its environment, and only
    the probe can leave a mark."""
    return subprocess.run([sys.executable, "-I", "-m", "envcheck", *args], capture_output=True, text=True, env=env,
                          cwd=cwd, input="", timeout=180)


COMMANDS = [
    ["doctor", "--json", "--no-gpu"],
    ["doctor", "-v", "--no-gpu"],
    ["doctor", "--format", "markdown", "--no-gpu"],
    ["doctor", "--format", "prom", "--no-gpu"],
    ["doctor", "--format", "npd", "--no-gpu"],
    ["fix", "--dry-run", "--no-gpu"],
    ["fix", "--dry-run", "--json", "--no-gpu"],
    ["smoke"],
    ["explain", "-"],
]


def _runs_nothing_of_the_target(commands: list[list[str]], python: Path, env: dict, cwd: Path, marks: Path) -> None:
    for args in commands:
        done = envcheck([*args, "--python", str(python)], env, cwd)
        assert sorted(p.name for p in marks.iterdir()) == [], args
        assert "Traceback" not in done.stderr, (args, done.stderr[-2000:])
        assert done.returncode in (0, 1), (args, done.returncode, done.stderr[-2000:])


@pytest.mark.slow  # nine commands, fix's two among them, each a whole run: 11 s of CPU (doctor's own is below, quick)
def test_no_command_runs_anything_of_the_target(armed):
    python, env, cwd, marks = armed
    _runs_nothing_of_the_target(COMMANDS, python, env, cwd, marks)


def test_nothing_of_the_target_runs_and_doctor_judges_as_before(armed):
    python, env, cwd, marks = armed
    done = envcheck(["doctor", "--json", "--no-gpu", "--python", str(python)], env, cwd)
    assert sorted(p.name for p in marks.iterdir()) == [] and "Traceback" not in done.stderr, done.stderr[-2000:]
    report = json.loads(done.stdout)
    by_id = {c["id"]: c for c in report["checks"]}
    assert by_id["cutedsl.importable"]["status"] == "pass", by_id["cutedsl.importable"]["found"]
    assert by_id["torch.version"]["status"] == "pass"
    line = f"import os; open({str(marks / 'pth')!r}, 'w').close()"
    reported = report["facts"]["interpreter"]["pth_imports"]
    assert {"file": str(python.parent.parent / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" /
                        "site-packages" / "armed.pth"), "line": line, "added": []} in reported
    assert any(line in d for d in by_id["cutedsl.importable"]["details"])
    assert report["facts"]["interpreter"]["pythonpath"] == env["PYTHONPATH"]  # -I ignores them, the probe records them
    assert report["facts"]["interpreter"]["pythonhome"] == env["PYTHONHOME"]
    verbose = envcheck(["doctor", "-v", "--no-gpu", "--python", str(python)], env, cwd)
    assert "armed.pth" in verbose.stdout and "not run by envcheck" in verbose.stdout
    assert sorted(p.name for p in marks.iterdir()) == []
    # the bait works: the same interpreter started normally leaves its marks, from every place armed
    subprocess.run([str(python), "-c", "import json, ast, torch"], env=env, cwd=cwd.parent, input="", capture_output=True)
    assert {p.name for p in marks.iterdir()} >= {"pth", "sitecustomize", "usercustomize", "torch", "shadows-json", "shadows-ast"}
    subprocess.run([str(python), "-c", "import json"], env=env, cwd=cwd, input="", capture_output=True)
    assert "cwd-json" in {p.name for p in marks.iterdir()}


def test_old_interpreters_still_run_the_probe(tmp_path, monkeypatch):
    """3.6 and later, as before; the markers come from os.uname (platform before 3.9 runs `uname -p` from PATH)."""
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "uname").write_text(f"#!/bin/sh\ntouch {tmp_path / 'uname-ran'}\necho x86_64\n")
    (fake / "uname").chmod(0o755)
    env = {**os.environ, "PATH": f"{fake}{os.pathsep}{os.environ['PATH']}"}
    pythons = [p for p in INTERPRETERS if p.startswith(os.path.expanduser("~"))] or [sys.executable]
    for python in pythons:
        probed = gather_interpreter(python, env=env)
        assert ".".join(map(str, probed.version[:2])) == _version(python)
        assert dict(probed.markers)["platform_machine"] == os.uname().machine
    assert not (tmp_path / "uname-ran").exists()
