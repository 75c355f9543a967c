"""envcheck.proc: a program under a time limit, in its own process group, the whole group killed when it ends."""

from __future__ import annotations

import sys
import time

import pytest

from envcheck.proc import Child, run
from processes import gone_soon


def _child_pid(folder) -> int:
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        text = (folder / "child.pid").read_text() if (folder / "child.pid").exists() else ""
        if text.strip():
            return int(text)
        time.sleep(0.02)
    raise AssertionError("the child never wrote its pid")


def test_a_child_holding_stdout_open_does_not_keep_us_waiting_and_is_killed(tmp_path):
    script = f"""
import os, subprocess, sys
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
open({str(tmp_path / "child.pid")!r}, "w").write(str(child.pid))
print("the answer")
"""
    began = time.monotonic()
    end = run([sys.executable, "-c", script], 30)
    assert time.monotonic() - began < 5  # the sleeper inherited stdout; waiting for EOF would take 120 s
    assert end.returncode == 0 and end.stdout == "the answer\n" and not end.timed_out
    assert gone_soon(_child_pid(tmp_path)), "what the program left behind was not killed"


def test_a_time_limit_kills_the_whole_group(tmp_path):
    script = f"""
import subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
open({str(tmp_path / "child.pid")!r}, "w").write(str(child.pid))
print("started", flush=True)
time.sleep(120)
"""
    end = run([sys.executable, "-c", script], 1.5)
    assert end.timed_out and end.returncode is None and end.stdout == "started\n" and end.seconds < 60  # not the 120 s
    assert gone_soon(_child_pid(tmp_path)), "the time limit left the program's child running"


def test_output_stdin_lines_and_exit_status():
    lines: list[str] = []
    end = run([sys.executable, "-c", "import sys; data = sys.stdin.read(); print(len(data)); print('e', file=sys.stderr); sys.exit(3)"],
              10, input=b"x" * 300_000)
    assert (end.returncode, end.stdout, end.stderr) == (3, "300000\n", "e\n")
    merged = run([sys.executable, "-u", "-c", "import sys; print('a'); print('b', file=sys.stderr, flush=True); print('c', end='')"],
                 10, merge_stderr=True, on_line=lines.append)
    assert merged.stderr == "" and lines == ["a", "b", "c"]


def test_a_program_that_cannot_start_is_an_oserror(tmp_path):
    with pytest.raises(OSError):
        Child([str(tmp_path / "nothing-here")])


def test_a_program_that_closes_its_output_and_runs_on_is_waited_for_not_killed():
    script = "import os, sys, time; print('bye', flush=True); os.close(1); os.close(2); time.sleep(0.5); sys.exit(4)"
    end = run([sys.executable, "-c", script], 10)
    assert (end.returncode, end.stdout, end.timed_out) == (4, "bye\n", False)
    late = run([sys.executable, "-c", script.replace("0.5", "30")], 1)
    assert late.timed_out and late.returncode is None and late.seconds < 5


def test_a_program_ignoring_sigterm_is_killed_after_the_grace_period():
    script = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print('up', flush=True); time.sleep(60)"
    end = run([sys.executable, "-c", script], 1)
    assert end.timed_out and end.stdout == "up\n" and end.seconds < 6
