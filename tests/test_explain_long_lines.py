"""explain on logs of any shape (issue 29 item 5): a cause is found wherever it is in a line of any length, in a log
without a newline, after NUL bytes, among bytes that are not UTF-8, and after lines that almost show it; memory stays
bounded. Behaviour only: the time each shape takes is benchmarks/explain_long_lines.py's to measure."""

from __future__ import annotations

import io
import json
import random
import subprocess
import sys
import tracemalloc

import pytest

from envcheck.causes import Context
from envcheck.causes.log import LogReader, scan
from envcheck.errors import UsageError

MESSAGE = "AttributeError: module 'cutlass.cute.nvgpu.cpasync' has no attribute 'ProxyKind'"
TRACEBACK = ('Traceback (most recent call last):\n  File "/opt/venv/lib/python3.12/site-packages/torch/_inductor/'
             'select_algorithm.py", line 4924, in precompile\n')


def found(data, policy, **reader) -> list[tuple[str, int, bool]]:
    """The causes of a log (bytes, or a stream), with the line each was seen on and whether it was an exception's."""
    stream = io.BytesIO(data) if isinstance(data, bytes) else data
    return [(f.cause.id, f.line, f.raised)
            for f in scan(LogReader(stream, **reader), Context("python3", policy, known=False))]


class Streamed:
    """A log served a piece at a time, never whole in memory: `count` repetitions of `piece`, then `tail`."""

    def __init__(self, piece: bytes, count: int, tail: bytes):
        self.piece, self.left, self.tail, self.served = piece, count, tail, 0

    def read(self, size: int) -> bytes:
        if self.left:
            self.left -= 1
            self.served += len(self.piece)
            return self.piece
        tail, self.tail = self.tail, b""
        self.served += len(tail)
        return tail


# --------------------------------------------------------------------------------------------------------------
# Long lines: the message wherever it is in them


@pytest.mark.parametrize("before", [b"", b"x" * 2_000_000, b"A" * 16_383, b"word " * 400_000, "é".encode() * 700_000])
def test_a_traceback_whose_exception_line_is_long_has_its_message_found_at_its_end(policy, before):
    log = TRACEBACK.encode() + before + MESSAGE.encode() + b"\nthe next line\n"
    causes = scan(LogReader(io.BytesIO(log)), Context("python3", policy, known=False))
    assert [(f.cause.id, f.line) for f in causes] == [("dsl-too-new", 3)]
    assert MESSAGE in causes[0].cause.evidence and len(causes[0].cause.evidence) <= 300  # quoted where it is


def test_a_log_without_a_newline_is_read_to_its_end(policy):
    reader = LogReader(io.BytesIO(b"progress \r" * 300_000 + MESSAGE.encode()))
    causes = scan(reader, Context("python3", policy, known=False))
    assert [(f.cause.id, f.line) for f in causes] == [("dsl-too-new", 1)] and reader.lines_read == 1


def test_a_single_line_of_100_mb_is_searched_to_its_end_in_bounded_memory(policy):
    stream = Streamed(b"0123456789abcdef" * (1 << 16), 100, MESSAGE.encode())  # 100 MiB, one line, streamed
    tracemalloc.start()
    try:
        causes = found(stream, policy)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert stream.served > 100 << 20 and causes == [("dsl-too-new", 1, False)]
    assert peak < 16 << 20  # a few blocks, never the line


@pytest.mark.parametrize("offset", range(0, 700, 7))
def test_a_message_across_the_edge_of_two_windows_is_whole_in_one(policy, offset):
    """Windows of 256 bytes overlapping by 64 (as 16 KiB by 1 KiB): the message (82 bytes) at every offset around
    the first edges is found, on its line."""
    log = b"-" * offset + b"No module named 'cutlass_api'" + b"-" * 1000 + b"\nnext\n"
    assert found(log, policy, max_line=256, overlap=64) == [("cutlass-api-missing", 1, False)]


def test_a_line_start_is_the_line_s_not_a_window_s(policy):
    """An exception's name inside a long line does not make it the exception's own line: a later traceback's is the
    evidence; a window inside a line never matches as a line's start."""
    inside = b"x" * (64 << 10) + MESSAGE.encode() + b"\n"
    assert found(inside, policy) == [("dsl-too-new", 1, False)]
    assert found(inside + TRACEBACK.encode() + MESSAGE.encode() + b"\n", policy) == [("dsl-too-new", 4, True)]


# --------------------------------------------------------------------------------------------------------------
# Bytes that are not text


def test_a_log_truncated_under_its_writer_is_read_after_its_nul_bytes(policy):
    """copytruncate: the writer kept its offset, so the file starts with the NULs of what was cut away."""
    log = b"\x00" * (3 << 20) + b"step 1\n" + TRACEBACK.encode() + MESSAGE.encode() + b"\n"
    assert found(log, policy) == [("dsl-too-new", 4, True)]


def test_nul_bytes_in_and_between_lines_are_dropped(policy):
    log = b"\x00\x00step\x00 1\n\x00\n" + b"Attribute\x00Error: module 'cutlass.cute.nvgpu.cpasync' has no attribute 'ProxyKind'\n"
    assert found(log, policy) == [("dsl-too-new", 3, True)]


def test_a_log_written_as_utf_16_is_read_as_its_text(policy):
    log = ("\ufeff" + TRACEBACK + MESSAGE + "\n").encode("utf-16-le")
    assert found(log, policy) == [("dsl-too-new", 3, True)]


def test_bytes_that_are_not_utf_8_are_read_around(policy):
    latin = "Übergröße der Datei: 12 Mo, réessayer\n".encode("latin-1") * 20_000
    log = latin + b"\xff\xfe\xc3(\x80 stray\n" + TRACEBACK.encode() + MESSAGE.encode() + b"\xff\n"
    assert found(log, policy) == [("dsl-too-new", 20_004, True)]


@pytest.mark.parametrize("data", [
    b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 64,  # an executable's start
    random.Random(29).randbytes(1 << 16),  # compressed or random: a wheel, a checkpoint
])
def test_a_binary_file_is_refused(policy, data):
    with pytest.raises(UsageError, match=r"not a text log \(\d+% of its first \d+ bytes, NULs aside, are neither text"):
        found(data, policy)


def test_a_log_of_nothing_but_nul_bytes_is_read_and_shows_nothing(policy):
    reader = LogReader(io.BytesIO(b"\x00" * (2 << 20)))
    assert scan(reader, Context("python3", policy, known=False)) == () and reader.lines_read == 1


# --------------------------------------------------------------------------------------------------------------
# Many lines


def test_a_million_short_lines_then_the_message(policy):
    log = b"ok\n" * 1_000_000 + MESSAGE.encode() + b"\n"
    assert found(log, policy) == [("dsl-too-new", 1_000_001, True)]


def test_lines_that_almost_show_a_cause_are_not_one(policy):
    """Each near miss holds the row's literal text (its needle) and is searched; none is the cause."""
    near = (b"ModuleNotFoundError: No module named 'torchvision'\n"  # torch-missing's text, another module
            b"  target: aten.mm.default\n"  # nvgemm-no-kernel-for-op's line without NoValidChoicesError above it
            b"AttributeError: module 'x' has no attribute 'ProxyKinds'\n"  # dsl-too-new's, one letter more
            b"CUTE_DSL_ARCH" + b"_" * 3000 + b" is deprecated? no\n")
    assert found(near * 20_000, policy) == []
    assert found(near * 20_000 + b"ModuleNotFoundError: No module named 'torch'\n", policy) == [
        ("torch-missing", 80_001, True)]


def test_the_hunt_for_the_exception_s_own_line_is_bounded(policy, monkeypatch):
    """After its first line, a cause's next HUNT lines are looked at for the exception's own: past them the first
    stands (a log that repeats a message without end costs no more than reading it)."""
    from envcheck.causes import log as module

    monkeypatch.setattr(module, "HUNT", 50)
    repeated = b"warning: CUDA out of memory, retrying\n"
    raised = b"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n"
    assert found(repeated * 10 + raised, policy) == [("cuda-out-of-memory", 11, True)]
    assert found(repeated * 5000 + raised, policy) == [("cuda-out-of-memory", 1, False)]


# --------------------------------------------------------------------------------------------------------------
# The command


def test_explain_on_a_file_of_long_lines_says_the_line_and_quotes_the_message(tmp_path):
    log = tmp_path / "train.log"
    log.write_bytes(b"\x00" * 4096 + TRACEBACK.encode() + b"payload " * 500_000 + MESSAGE.encode() + b"\n")
    done = subprocess.run([sys.executable, "-m", "envcheck", "explain", str(log), "--json"], capture_output=True,
                          text=True, timeout=300)
    shown = json.loads(done.stdout)
    assert done.returncode == 1 and shown["lines_read"] == 3
    cause = shown["causes"][0]
    assert cause["id"] == "dsl-too-new" and cause["evidence"]["line"] == 3
    assert cause["evidence"]["text"].startswith("\u2026") and cause["evidence"]["text"].endswith(MESSAGE)


# --------------------------------------------------------------------------------------------------------------
# Inductor's lost candidates, read in the same pass


@pytest.mark.parametrize("inserted", [
    [(1, "E1201 20:20:43.815000 3303 torch/_inductor/select_algorithm.py:4866] [0/0]   frame {n}", 1500)],
    [(1, "E1201 20:20:43.815000 3303 torch/_inductor/select_algorithm.py:4866] [0/0] " + "w" * 9000 + " {n}", 60)],
    [(67, "[rank0] step {n} | loss 2.31", 20_000), (405, "noise {n}", 3000)],
], ids=["a record past MAX_RECORD lines", "a record past its characters", "lines between records and tables"])
def test_candidates_read_while_skipping_are_those_read_line_by_line(policy, inserted):
    """CandidateReader.block reads a line at a time only where one can open or end a record or a table: the GEMMs it
    reads are those of reading every line (read_log_candidates), whatever is inserted in a real H200 log."""
    from pathlib import Path

    from envcheck.causes.candidates import CandidateReader, read_log_candidates

    lines = (Path(__file__).parent / "data" / "h200-s4" / "model-nv16-arch-errors.log").read_text().splitlines()
    for after, line, count in sorted(inserted, reverse=True):
        lines[after:after] = [line.format(n=n) for n in range(count)]
    text = "\n".join(lines) + "\n"
    expected = read_log_candidates(text)
    assert expected and sum(len(gemm.lost) for gemm in expected)
    for block in (1 << 12, 1 << 20):
        autotuned = CandidateReader()
        scan(LogReader(io.BytesIO(text.encode()), block=block), Context("python3", policy, known=False),
             autotuned.block)
        assert autotuned.end() == expected
