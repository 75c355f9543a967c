"""How long `envcheck explain` takes on logs of every shape (issue 29 item 5), one checkout against another.

    python benchmarks/explain_long_lines.py [--mb 100] [--runs 3] [--timeout 300] [--against DIR] [--only NAME]...

Writes each log below (--mb megabytes where it says so), runs `envcheck explain LOG --json` on it --runs times, each
as its own process, and prints per log the median wall time, the rate in MB/s, the largest resident memory of a run,
and whether the cause was found on the line it is on. With --against DIR (a checkout of another commit, e.g. main's:
`git archive main | tar -x -C DIR`), the same runs with DIR's envcheck, side by side. A run that passes --timeout is
stopped and the rest of that log's runs for that checkout are left out ("> 300 s").

- long-lines: --mb of lines of 0.5 to 2 MB: base64 blobs (a serialized kernel), tensors printed whole, a progress
  bar redrawn with carriage returns and no newline; then a traceback whose last line is 2 MB, the message at its end.
- hex-lines: --mb of lines of 20 KB of hex digits (a kernel binary dumped as hex: one run of word characters a line,
  what made main's search quadratic), the message on the last line.
- one-line: --mb in a single line with no newline at all, the message at its end.
- short-lines: 1e6 lines of about 100 bytes (--mb / 100 a line), the message on the last.
- nul-bytes: a log truncated under a writer that kept writing (its first 10 MB NULs: copytruncate), then text.
- invalid-utf8: lines of Latin-1 and stray bytes, not UTF-8, the message on the last.
- adversarial: 10 MB of lines made to trip the table's patterns (each row's literal text followed by a run of word
  characters, and the run before it), then the message.
- traceback-2mb: a traceback of a few lines whose exception line is 2 MB, its message at the end.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Callable, IO, Optional

ROOT = Path(__file__).resolve().parents[1]
MESSAGE = "AttributeError: module 'cutlass.cute.nvgpu.cpasync' has no attribute 'ProxyKind'"
CAUSE = "dsl-too-new"
TRACEBACK = ('Traceback (most recent call last):\n  File "/opt/venv/lib/python3.12/site-packages/torch/_inductor/'
             'select_algorithm.py", line 4924, in precompile\n')
MB = 1_000_000


def _long_lines(out: IO[bytes], size: int, rng: random.Random) -> int:
    lines = 0
    while out.tell() < size - 2 * MB:
        kind = lines % 3
        length = rng.randrange(MB // 2, 2 * MB)
        if kind == 0:  # base64: one run of word characters and + / (what hung explain)
            out.write(base64.b64encode(rng.randbytes(length * 3 // 4)) + b"\n")
        elif kind == 1:  # a tensor printed whole
            numbers = ", ".join(f"{rng.uniform(-1, 1):.4f}" for _ in range(length // 8))
            out.write(f"tensor([[{numbers}]], device='cuda:0', dtype=torch.bfloat16)\n".encode())
        else:  # a progress bar redrawn in place: carriage returns, no newline until it ends
            step = "\r{:3d}%|{}| {}/{} [00:{:02d}<00:00, 41.2it/s]"
            out.write("".join(step.format(n % 100, "#" * (n % 40), n, 10_000, n % 60)
                              for n in range(length // 80)).encode() + b"\n")
        lines += 1
    out.write(TRACEBACK.encode())
    out.write(b"x" * (2 * MB) + b" " + MESSAGE.encode() + b"\n")
    return lines + 3


def _hex_lines(out: IO[bytes], size: int, rng: random.Random) -> int:
    lines = [rng.randbytes(10_000).hex().encode() + b"\n" for _ in range(50)]
    count = 0
    while out.tell() < size:
        out.write(lines[count % len(lines)])
        count += 1
    out.write(MESSAGE.encode() + b"\n")
    return count + 1


def _one_line(out: IO[bytes], size: int, rng: random.Random) -> int:
    chunk = b"".join(b"[%d] loss %.4f lr 3e-4 " % (n, rng.random()) for n in range(30_000))
    while out.tell() < size - len(chunk):
        out.write(chunk)
    out.write(b" " + MESSAGE.encode())
    return 1


def _short_lines(out: IO[bytes], size: int, rng: random.Random) -> int:
    line = "\x1b[32m[rank0]\x1b[0m step {:>8} | loss 2.3{:04d} | lr 3.0e-04 | tokens/s 41234.5 | mem 61.2 GiB\n"
    count = max(1, size // 100)
    for start in range(0, count, 10_000):
        out.write("".join(line.format(n, n % 10_000) for n in range(start, min(count, start + 10_000))).encode())
    out.write(MESSAGE.encode() + b"\n")
    return count + 1


def _nul_bytes(out: IO[bytes], size: int, rng: random.Random) -> int:
    hole = min(10 * MB, size // 2)
    for _ in range(hole // MB):
        out.write(b"\0" * MB)
    lines = _short_lines(out, size - hole, rng)
    return lines


def _invalid_utf8(out: IO[bytes], size: int, rng: random.Random) -> int:
    line = "Grüße aus Köln: Schritt {} abgeschlossen, Verlust {:.4f} \xe9\xe8 ".encode("latin-1") + b"\xff\xfe\xc3\x28\n"
    count = 0
    while out.tell() < size:
        out.write(b"".join(line.replace(b"{}", b"%d" % (count + n)).replace(b"{:.4f}", b"0.1234") for n in range(1000)))
        count += 1000
    out.write(MESSAGE.encode() + b"\n")
    return count + 1


def _adversarial(out: IO[bytes], size: int, rng: random.Random) -> int:
    sys.path.insert(0, str(ROOT))
    from envcheck.causes.table import load_signatures  # this checkout's table: its needles

    run = b"a" * 16_000
    pieces = [needle.encode() for row in load_signatures() for needle in (row.needles or ())]
    lines = 0
    while out.tell() < size:
        for needle in pieces:
            if b"ProxyKind" in needle:
                continue
            out.write(needle + run + b"\n" + run + b" " + needle + b"\n")
            lines += 2
    out.write(MESSAGE.encode() + b"\n")
    return lines + 1


def _traceback(out: IO[bytes], size: int, rng: random.Random) -> int:
    out.write(TRACEBACK.encode())
    out.write(b"AttributeError: " + b"x" * (2 * MB) + b" " + MESSAGE.encode() + b"\n")
    return 3


# name -> (writer, size in MB given --mb (None: its own), the line the message is on: "last" or a number)
LOGS: dict[str, tuple[Callable[[IO[bytes], int, random.Random], int], Optional[float]]] = {
    "long-lines": (_long_lines, 1.0),
    "hex-lines": (_hex_lines, 1.0),
    "one-line": (_one_line, 1.0),
    "short-lines": (_short_lines, 1.0),
    "nul-bytes": (_nul_bytes, 1.0),
    "invalid-utf8": (_invalid_utf8, 1.0),
    "adversarial": (_adversarial, None),
    "traceback-2mb": (_traceback, None),
}


def write_log(name: str, folder: Path, megabytes: int) -> tuple[Path, int]:
    """The log and the number of its line that holds the message."""
    writer, share = LOGS[name]
    path = folder / f"{name}.log"
    size = int(megabytes * share * MB) if share else 10 * MB
    with open(path, "wb") as out:
        line = writer(out, size, random.Random(29))
    return path, line


def run_once(code: Path, log: Path, timeout: float) -> dict:
    """One `envcheck explain` process of the checkout `code`: its wall time, peak memory, and what it found."""
    with tempfile.TemporaryFile() as stdout:
        began = time.monotonic()
        child = subprocess.Popen([sys.executable, "-m", "envcheck", "explain", str(log), "--json"], cwd=code,
                                 stdout=stdout, stderr=subprocess.DEVNULL, start_new_session=True)
        timer = threading.Timer(timeout, lambda: os.killpg(child.pid, 9))
        timer.start()
        _, status, usage = os.wait4(child.pid, 0)
        timer.cancel()
        wall = time.monotonic() - began
        child.returncode = os.waitstatus_to_exitcode(status)
        stdout.seek(0)
        try:
            shown = json.loads(stdout.read())
        except ValueError:
            shown = {}
    found = [(c.get("id"), (c.get("evidence") or {}).get("line")) for c in shown.get("causes") or []]
    return {"wall_s": wall, "timed_out": child.returncode == -9, "peak_mib": usage.ru_maxrss / 1024,
            "found": found, "exit": child.returncode}


def measure(code: Path, log: Path, line: int, runs: int, timeout: float) -> dict:
    walls, peaks, found = [], [], True
    for _ in range(runs):
        run = run_once(code, log, timeout)
        if run["timed_out"]:
            return {"text": f"> {timeout:.0f} s", "rate": "-", "peak": f"{run['peak_mib']:.0f}", "found": "timeout"}
        walls.append(run["wall_s"])
        peaks.append(run["peak_mib"])
        found = found and (CAUSE, line) in run["found"]
    median = statistics.median(walls)
    size = log.stat().st_size / MB
    return {"text": f"{median:.2f} s", "rate": f"{size / median:.0f}", "peak": f"{max(peaks):.0f}",
            "found": "yes" if found else "NO"}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=100)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=300)
    parser.add_argument("--against", type=Path, action="append", default=[],
                        help="another checkout to run the same logs with (main's), shown first")
    parser.add_argument("--only", action="append", choices=sorted(LOGS), help="these logs only")
    parser.add_argument("--keep", type=Path, default=None, help="write the logs in this folder and keep them")
    args = parser.parse_args()
    codes = [*args.against, ROOT]
    folder = args.keep or Path(tempfile.mkdtemp(prefix="envcheck-explain-shapes-"))
    folder.mkdir(parents=True, exist_ok=True)
    print(f"{len(codes)} checkout(s): " + ", ".join(str(c) for c in codes) + f"; {args.runs} runs each, medians")
    header = f"{'log':<14} {'MB':>6} {'line':>8}"
    for code in codes:
        header += f" | {code.name[:12]:>12} {'MB/s':>5} {'MiB':>5} {'found':>7}"
    print(header)
    everywhere = True
    for name in args.only or LOGS:
        log, line = write_log(name, folder, args.mb)
        row = f"{name:<14} {log.stat().st_size / MB:>6.1f} {line:>8}"
        for code in codes:
            result = measure(code, log, line, args.runs, args.timeout)
            row += f" | {result['text']:>12} {result['rate']:>5} {result['peak']:>5} {result['found']:>7}"
            everywhere = everywhere and (code != ROOT or result["found"] == "yes")
        print(row, flush=True)
        if args.keep is None:
            log.unlink()
    if args.keep is None:
        folder.rmdir()
    return 0 if everywhere else 1


if __name__ == "__main__":
    sys.exit(main())
