"""The NVGEMM candidates of a run for people: per GEMM, how many were offered, lost (and why) and left (smoke, bench
and explain print the same lines)."""

from __future__ import annotations

from typing import Optional

from ..model.candidates import GemmCandidates

__all__ = ["candidate_lines", "gemm_line"]


def gemm_line(gemm: GemmCandidates) -> str:
    """"mm(16x4096, 4096x14336) [4096, 1], [1, 4096]: 3 of 9 failed to compile (dsl-arch-mismatch x3), 6 left"."""
    at_least = "" if gemm.listed else "at least "
    where = f"{gemm.gemm} {gemm.strides}".strip()
    if not gemm.lost:
        return f"{where}: {at_least}{gemm.offered} offered, none failed"
    causes = ", ".join(f"{lost.cause_id} x{lost.count}" for lost in gemm.lost)
    return f"{where}: {gemm.failed} of {at_least}{gemm.offered} failed to compile ({causes}), {gemm.left} left"


def candidate_lines(gemms: tuple[GemmCandidates, ...], warm: Optional[bool], label: str = "candidates") -> list[str]:
    """The `candidates` lines of a run through Inductor: each GEMM it autotuned, or why none is known."""
    head = f"  {label:9} "
    if not gemms:
        why = ("none compiled in this run: Inductor's caches answered (a warm run); its pick was made by the run that "
               "filled them, and --fresh compiles every candidate again" if warm else
               "Inductor's log shows no autotuning of NVGEMM candidates")
        return [head + why]
    return [head + gemm_line(gemm) for gemm in gemms[:1]] + [" " * len(head) + gemm_line(g) for g in gemms[1:]]
