"""The bug-report facts (issue 25 item 3): OS, kernel, libc, a C compiler, the CPU, read from real files made here and
a real compiler process on PATH; in doctor's JSON (facts.system) and its markdown (#### System)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from envcheck.gather.system import gather_system


def compiler(folder: Path, name: str, first_line: str, code: int = 0) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(f"#!/bin/sh\necho '{first_line}'\necho 'Copyright'\nexit {code}\n")
    path.chmod(0o755)
    return path


def test_the_facts_from_the_files_and_the_first_compiler(tmp_path):
    (tmp_path / "os-release").write_text('NAME="Ubuntu"\nPRETTY_NAME="Ubuntu 22.04.4 LTS"\nID=ubuntu\n')
    (tmp_path / "cpuinfo").write_text("processor\t: 0\nmodel name\t: AMD EPYC 7763 64-Core Processor\n")
    bin_ = tmp_path / "bin"
    compiler(bin_, "gcc", "gcc (Ubuntu 11.4.0-1ubuntu1~22.04) 11.4.0", code=1)  # a broken gcc: the next is asked
    cc = compiler(bin_, "cc", "cc (GCC) 11.4.0")
    system = gather_system({"PATH": str(bin_), "CC": "ccache gcc"}, os_release=str(tmp_path / "os-release"),
                           cpuinfo=str(tmp_path / "cpuinfo"))
    assert system.os == "Ubuntu 22.04.4 LTS" and system.cpu == "AMD EPYC 7763 64-Core Processor"
    assert system.compiler == f"cc (GCC) 11.4.0 ({cc})" and system.cc == "ccache gcc"  # $CC is named, not run
    assert system.cpus == os.cpu_count() and system.kernel == os.uname().release
    assert system.libc is None or system.libc.startswith("glibc ")


def test_nothing_found_is_none_never_an_error(tmp_path):
    system = gather_system({"PATH": str(tmp_path)}, os_release=str(tmp_path / "no"), cpuinfo=str(tmp_path / "no"))
    assert system.compiler is None and system.cpu is None


def test_doctor_json_and_markdown_carry_them(tmp_path):
    bin_ = tmp_path / "bin"
    compiler(bin_, "gcc", "gcc (Test) 99.1.0")
    env = {**os.environ, "PATH": os.pathsep.join([str(bin_), "/usr/bin", "/bin"])}
    done = subprocess.run([sys.executable, "-m", "envcheck", "doctor", "--no-gpu", "--json"], capture_output=True,
                          text=True, timeout=300, env=env)
    system = json.loads(done.stdout)["facts"]["system"]
    assert system["compiler"].startswith("gcc (Test) 99.1.0") and system["cpus"] == os.cpu_count()
    done = subprocess.run([sys.executable, "-m", "envcheck", "doctor", "--no-gpu", "--format", "markdown"],
                          capture_output=True, text=True, timeout=300, env=env)
    text = done.stdout.split("#### System", 1)[1]
    assert "- C compiler: gcc (Test) 99.1.0" in text and "- CPU: " in text and "- Python: " in text
    if system["os"]:
        assert f"- OS: {system['os']}" in text
