"""Every NVGEMM candidate of every GEMM Inductor autotuned, read from its log: the failures in the precompile workers,
the failures in process, and the choices left to time. Pure: a log's lines in, GemmCandidates out (model/candidates.py).

What Inductor writes (torch 2.11 to 2.15, select_algorithm.py; 2.14.1's lines):
- a candidate its precompile workers could not compile (4866): one error record, `Exception <the worker's exception
  and traceback> for benchmark choice NVUniversalGemmCaller(<operator>)`, then the parent's traceback; every line
  of the record carries the logging prefix `E1201 20:20:43.815000 3303 torch/_inductor/select_algorithm.py:4866]
  [0/0] `. Candidates with the same kernel_hash_key are sent once (4770-4775), so one record is one candidate lost;
- a candidate that failed while it was benchmarked in process (5306-5336): `Runtime error during autotuning: <the
  error>. Ignoring this choice.` (or `CUDA compilation error during autotuning`), naming no candidate, and its row in
  the table reads `inf ms`;
- the table of what was timed (log_results, 5875-5960), after the failures of the same GEMM:
  `AUTOTUNE mm(16x4096, 4096x14336)`, `strides: ...`, `dtypes: ...`, one row per choice (`  nv_universal_gemm_1 0.0415
  ms 100.0% nv_universal_gemm cutedsl.Sm90...`, the first autotune_num_choices_displayed of them: 10 by default,
  every one where envcheck's children set it to None), and `SingleProcess AUTOTUNE benchmarking takes ... for N
  choices`.
The candidates offered are those lost plus the NVGEMM rows of the table; where the table lists fewer than N rows,
what was left is a lower bound (`listed` False).

Each failure's cause is the first signature of causes/signatures.toml its text shows (the table's order), else
UNEXPLAINED with the exception's own line. The lines are read once, in order, in constant memory per failure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterable, Optional

from ..model.candidates import IN_PROCESS, UNEXPLAINED, WORKER, GemmCandidates, LostCandidates
from .context import Cause, Context
from .explanations import SIGNATURES, explain_match
from .log import quote
from .logreader import Block, clean_line

__all__ = ["CandidateReader", "read_candidates", "read_log_candidates", "split_at", "environment_cause"]

# torch's logging prefix: level and date, time, pid, file:line], and the compile id where there is one.
_PREFIX = re.compile(r"^[DIWEC]\d{4} \d\d:\d\d:\d\d\.\d+ +\d+ [^\]\s]+:\d+\] (?:\[[^\]]*\] ?)?")
_CHOICE = re.compile(r"for benchmark choice (.+)$")  # searched in a line stripped at its end
_IN_PROCESS = re.compile(r"^(?:Runtime error|CUDA compilation error) during autotuning")
_TABLE = re.compile(r"^AUTOTUNE (\w+)\((.*)\)\s*$")
_ROW = re.compile(r"^  (\S+) (inf|nan|[0-9.]+(?:e[-+]?[0-9]+)?) ms\b(.*)$")
_END = re.compile(r"AUTOTUNE benchmarking takes .{0,256} for (\d+) choices")  # bounded: linear in a long line
_RAISED = re.compile(r"^\s*(?:[A-Za-z_][\w]*\.)*[A-Za-z_]\w*(?:Error|Exception)\b: ?(.*)$")
_NVGEMM = "nv_universal_gemm"
_STARTS = ("AUTOTUNE", "Exception ", "during autotuning")  # words of the lines a record or a table starts with
_ENDS = ("for benchmark choice ", "Ignoring this choice")  # words of the lines a record ends with
MAX_RECORD = 400  # lines of one failure kept to find its cause: a traceback is shorter; the rest is the parent's
MAX_RECORD_CHARS = 1 << 18  # characters of them (a log's long lines come as windows of 16 KiB)


@dataclass
class _Failure:
    """One candidate lost, as its record ended."""

    cause_id: str
    first_line: str
    where: str
    line: int


@dataclass
class _Table:
    op: str
    sizes: str
    line: int
    strides: str = ""
    dtypes: str = ""
    rows: list = field(default_factory=list)  # (name, time, rest)


class CandidateReader:
    """Lines in, in order (line() one at a time, or block() a block of them); end() the GEMMs. The state between
    lines: the failure record being read, the failures waiting for their GEMM's table, the table being read."""

    def __init__(self) -> None:
        self.record: Optional[list[str]] = None  # the failure record being read, None outside one
        self.record_line = 0
        self.record_chars = 0
        self.waiting: list[_Failure] = []  # precompile failures since the last table
        self.in_process: list[_Failure] = []  # in-process failures since the last table (their rows read inf)
        self.table: Optional[_Table] = None
        self.done: list[GemmCandidates] = []

    def block(self, block: Block) -> None:
        """A block of a log's entries (explain reads a log so), each read from the first that may start a record or
        a table, and while one is open; while a record that is full is open, only those that may end it: a block
        is read a line at a time only where a line can change what is read."""
        text, numbers = block.text, block.numbers
        index = offset = 0  # the next entry, and where it starts in text
        upcoming: dict[str, int] = {}  # word -> where it next shows in text, at or after offset (-1: nowhere)
        while index < len(numbers):
            if self.table is None and (self.record is None or self._full):
                at = -1
                for word in _STARTS if self.record is None else _STARTS + _ENDS:
                    where = upcoming.get(word)
                    if where is None or 0 <= where < offset:
                        where = upcoming[word] = text.find(word, offset)
                    if where >= 0 and (at < 0 or where < at):
                        at = where
                if at < 0:
                    return
                skipped = text.count("\n", offset, at)
                if skipped:
                    index += skipped
                    offset = text.rfind("\n", offset, at) + 1
            line = block.lines[index]
            self.line(numbers[index], line)
            offset += len(line) + 1
            index += 1

    @property
    def _full(self) -> bool:
        """The open record holds MAX_RECORD lines or MAX_RECORD_CHARS characters: what follows only ends it."""
        return self.record is not None and (len(self.record) >= MAX_RECORD or self.record_chars >= MAX_RECORD_CHARS)

    def line(self, number: int, raw: str) -> None:
        text = _PREFIX.sub("", raw, count=1).rstrip()
        if self.table is not None:
            self._table_line(number, text)
            return
        found = _TABLE.match(text)
        if found:
            self.record = None
            self.table = _Table(found.group(1), found.group(2), number)
            return
        if text.startswith("Exception ") or _IN_PROCESS.match(text):  # a failure's record starts here
            self.record, self.record_line, self.record_chars = [], number, 0
        if self.record is None:
            return
        kept = not self._full
        if kept:
            self.record.append(text)
            self.record_chars += len(text)
        if _IN_PROCESS.match(self.record[0]):
            if "Ignoring this choice" in text:
                self.in_process.append(self._settled(IN_PROCESS))
                self.record = None
            return
        choice = _CHOICE.search(text)
        if choice:  # the worker's traceback ends here; the parent's follows
            if kept:
                self.record.pop()
            if _NVGEMM in _snake(choice.group(1)):  # a Triton choice that failed is no NVGEMM candidate
                self.waiting.append(self._settled(WORKER))
            self.record = None

    def _settled(self, where: str) -> _Failure:
        """The failure whose record is self.record: the first signature its lines show, in the table's order (only a
        row one of whose needles the record holds is searched line by line)."""
        joined = "\n".join(self.record)
        for signature in SIGNATURES:
            if not signature.row.may_match(joined):
                continue
            for text in self.record:
                found = signature.search(text)
                if found:
                    return _Failure(signature.id, quote(text, found), where, self.record_line)
        return _Failure(UNEXPLAINED, _raised_line(self.record), where, self.record_line)

    def _table_line(self, number: int, text: str) -> None:
        table = self.table
        if text.startswith("strides: "):
            table.strides = text[len("strides: "):]
        elif text.startswith("dtypes: "):
            table.dtypes = text[len("dtypes: "):]
        else:
            row = _ROW.match(text)
            if row:
                table.rows.append(row.groups())
                return
            end = _END.search(text)
            if end:
                self._close(int(end.group(1)))
            elif text.strip():  # the table was cut off (the log ended, or another line came in between)
                self._close(None)
                self.line(number, text)

    def _close(self, total: Optional[int]) -> None:
        table, self.table = self.table, None
        nvgemm = [(name, time) for name, time, rest in table.rows if name.startswith(_NVGEMM) or _NVGEMM in rest]
        failed_here = [time for _, time in nvgemm if time in ("inf", "nan")]
        lost = list(self.waiting)
        for index, _ in enumerate(failed_here):  # each inf row, explained by an in-process record in order
            held = self.in_process[index] if index < len(self.in_process) else None
            lost.append(held or _Failure(UNEXPLAINED, "its row in the autotuning table reads inf ms", IN_PROCESS,
                                         table.line))
        self.waiting, self.in_process = [], []
        if not nvgemm and not lost:
            return  # a GEMM without NVGEMM (the ATEN or TRITON rows of the bench)
        self.done.append(GemmCandidates(
            op=table.op, sizes=table.sizes, strides=table.strides, dtypes=table.dtypes,
            left=len(nvgemm) - len(failed_here), lost=_grouped(lost),
            listed=total is not None and len(table.rows) >= total, line=table.line,
        ))

    def end(self) -> tuple[GemmCandidates, ...]:
        if self.table is not None:
            self._close(None)
        if self.waiting:  # failures no table followed: every candidate lost, or the log ends there
            self.done.append(GemmCandidates(op="", lost=_grouped(self.waiting), listed=False,
                                            line=self.waiting[0].line))
            self.waiting = []
        return tuple(self.done)


def _snake(choice: str) -> str:
    """NVUniversalGemmCaller(...) -> nv_universal_gemm_caller(...): the choice's class, as its rows are named."""
    return re.sub(r"(?<=[a-z])(?=[A-Z])", "_", choice.replace("NVUniversal", "NvUniversal")).lower()


def _raised_line(lines: list[str]) -> str:
    """The exception's own words in a record that no signature explains: its last `SomeError: text` line (with the
    next line where the message starts there), else its last non-empty line."""
    for index in range(len(lines) - 1, -1, -1):
        found = _RAISED.match(lines[index])
        if found and not lines[index].lstrip().startswith("Exception An exception occurred"):
            said = lines[index].strip()
            if not found.group(1).strip():
                following = next((l.strip() for l in lines[index + 1:] if l.strip()), "")
                said = f"{said} {following}".strip()
            return said[:300]
    return next((l.strip() for l in reversed(lines) if l.strip()), "")[:300]


def _grouped(failures: list[_Failure]) -> tuple[LostCandidates, ...]:
    """Failures per (cause, where), in the order first seen, each with the first line that showed it."""
    groups: dict[tuple[str, str], LostCandidates] = {}
    for failure in failures:
        key = (failure.cause_id, failure.where)
        held = groups.get(key)
        groups[key] = (LostCandidates(failure.cause_id, 1, failure.first_line, failure.where) if held is None
                       else LostCandidates(held.cause_id, held.count + 1, held.first_line, held.where))
    return tuple(groups.values())


def read_candidates(lines: Iterable[str], first: int = 1) -> tuple[GemmCandidates, ...]:
    """Every GEMM with NVGEMM candidates in the log's lines (cleaned of escape sequences), in the order tuned.
    first: the number of the first line (lines are counted from it)."""
    reader = CandidateReader()
    for number, text in enumerate(lines, first):
        reader.line(number, text)
    return reader.end()


def read_log_candidates(text: str, first: int = 1) -> tuple[GemmCandidates, ...]:
    """read_candidates over a child's log as written (escape sequences and control characters removed)."""
    return read_candidates((clean_line(line) for line in text.splitlines()), first)


def split_at(text: str, prefix) -> list[tuple[int, list[str]]]:
    """A log cut after each line that starts with prefix (a string, or a tuple of them: the bench's row and compile
    lines): [(first line number, lines)], each piece ending with such a line, the piece after the last one included."""
    pieces: list[tuple[int, list[str]]] = [(1, [])]
    for number, line in enumerate(text.splitlines(), 1):
        pieces[-1][1].append(line)
        if line.startswith(prefix):
            pieces.append((number + 1, []))
    return pieces


def environment_cause(gemms: tuple[GemmCandidates, ...], ctx: Context) -> Optional[Cause]:
    """The first known failure of the stack among the lost candidates, explained for the target (its sentence and
    remedy, as explain gives them); None where every loss is a kernel's own (unexplained) or none was lost."""
    for gemm in gemms:
        for lost in gemm.lost:
            if not lost.environment:
                continue
            signature = next((s for s in SIGNATURES if s.id == lost.cause_id), None)
            found = signature.search(lost.first_line) if signature is not None else None
            if found is not None:
                return explain_match(signature, found, lost.first_line, ctx)
    return None
