"""What Inductor's autotuning did with the NVGEMM candidates of each GEMM it tuned: how many it was offered, how many
failed to compile and why, and how many were left to time (read from its log by envcheck/causes/candidates.py).
Shared by the smoke's and the bench's results and by explain."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

__all__ = ["UNEXPLAINED", "LostCandidates", "GemmCandidates", "lost_of", "lost_text"]

UNEXPLAINED = "unexplained"  # the cause id of a failure no signature of causes/signatures.toml names
WORKER = "precompile worker"  # Inductor's subprocess pool compiled the candidate (torch >= 2.14, 8 or more of them)
IN_PROCESS = "in process"  # compiled while Inductor benchmarked it, in the process itself


@dataclass(frozen=True)
class LostCandidates:
    """The candidates of one GEMM that failed to compile for one cause."""

    cause_id: str  # a signature's id (causes/signatures.toml), or UNEXPLAINED
    count: int
    first_line: str  # the failure's own line, as the log has it: "error: expects arch to be sm_90a, but got sm_100a"
    where: str  # WORKER or IN_PROCESS

    @property
    def environment(self) -> bool:
        """A known failure of the stack (every signature is one), not a kernel's own limit."""
        return self.cause_id != UNEXPLAINED

    def to_dict(self) -> dict:
        return {"cause": self.cause_id, "count": self.count, "first_line": self.first_line, "where": self.where,
                "environment": self.environment}


@dataclass(frozen=True)
class GemmCandidates:
    """One GEMM's NVGEMM candidates in one autotuning, as Inductor's log tells it."""

    op: str  # "mm", "addmm", "bmm"; "" where the failures were not followed by an autotuning table
    sizes: str = ""  # "16x4096, 4096x14336": the inputs, as Inductor prints them
    strides: str = ""  # "[4096, 1], [1, 4096]"
    dtypes: str = ""
    left: int = 0  # NVGEMM candidates that compiled and were timed
    lost: tuple[LostCandidates, ...] = ()
    listed: bool = True  # the table listed every choice it timed: `left` is exact (else a lower bound)
    line: int = 0  # the log's line of the autotuning table (or of the first failure)

    @property
    def failed(self) -> int:
        return sum(lost.count for lost in self.lost)

    @property
    def offered(self) -> int:
        return self.failed + self.left

    @property
    def gemm(self) -> str:
        """"mm(16x4096, 4096x14336)", or the failures' own words where no table followed them."""
        return f"{self.op}({self.sizes})" if self.op else "a GEMM whose autotuning table the log does not show"

    def to_dict(self) -> dict:
        return {"gemm": self.op or None, "sizes": self.sizes, "strides": self.strides, "dtypes": self.dtypes,
                "offered": self.offered, "failed": self.failed, "left": self.left, "exact": self.listed,
                "lost": [lost.to_dict() for lost in self.lost], "line": self.line}


def lost_of(gemms: tuple[GemmCandidates, ...]) -> tuple[LostCandidates, ...]:
    """The failures of several GEMMs added up per (cause, where), in the order first seen."""
    totals: dict[tuple[str, str], LostCandidates] = {}
    for gemm in gemms:
        for lost in gemm.lost:
            key = (lost.cause_id, lost.where)
            held = totals.get(key)
            totals[key] = lost if held is None else LostCandidates(held.cause_id, held.count + lost.count,
                                                                 held.first_line, held.where)
    return tuple(totals.values())


def lost_text(gemms: tuple[GemmCandidates, ...]) -> Optional[str]:
    """"3 of 9 NVGEMM candidates failed to compile: dsl-arch-mismatch (error: expects arch ...)", for the GEMMs
    together; None where none failed."""
    lost = lost_of(gemms)
    if not lost:
        return None
    failed = sum(item.count for item in lost)
    offered = sum(g.offered for g in gemms)
    at_least = "" if all(g.listed for g in gemms) else "at least "
    causes = "; ".join(f"{item.cause_id} ({item.first_line})" + (f" x{item.count}" if len(lost) > 1 else "")
                       for item in lost)
    return f"{failed} of {at_least}{offered} NVGEMM candidates failed to compile: {causes}"
