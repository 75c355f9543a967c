"""A smoke result for people: the status line, then what was proved or what to do (`envcheck smoke`, and the smoke
lines of doctor's table, markdown and JUnit)."""

from __future__ import annotations

from ..model import SmokeResult, Status
from ..smoke.forensics import summary
from .candidates import candidate_lines
from .text import remedy_lines

__all__ = ["render_text"]


def render_text(result: SmokeResult) -> str:
    """The result for people: a status line, then what was proved or what to do."""
    lines = [f"smoke  {result.status.value.upper():5}  {result.summary}"]
    if result.status in (Status.PASS, Status.WARN) and result.library:
        lines.append(f"  kernel    {result.kernel}")
        lines.append(f"  library   {result.library} (called directly, no Inductor)")
        lines.append(f"  gpu       {result.gpu}")
        lines.append(f"  compile   {result.compile_s:.2f} s (the library's JIT compile of this kernel)")
        lines.append(f"  run       {result.run_s * 1e3:.3f} ms per call ({result.shape})")
        lines.append(f"  numerics  max |out - fp32 ref| = {result.max_error:.3g} ({result.tolerance})")
    elif result.status in (Status.PASS, Status.WARN):
        lines.append(f"  kernel    {result.kernel}")
        lines.append(f"  call      {result.call}")
        lines.append(f"  gpu       {result.gpu}")
        lookup = ", kernel lookup seeded from a verified full enumeration" if result.kernel_lookup == "seeded" else ""
        lines.append(f"  compile   {result.compile_s:.2f} s ({'warm' if result.warm else 'cold'} cache {result.cache_dir}{lookup})")
        lines.append(f"  run       {result.run_s * 1e3:.3f} ms per call ({result.shape}, {result.backends})")
        lines.append(f"  numerics  max |out - fp32 ref| = {result.max_error:.3g} ({result.tolerance})")
    if result.status in (Status.PASS, Status.WARN):
        for proof in result.gemms[1:]:  # --layout both: the other layout's GEMM
            lines.append(f"  B {proof.layout:7} {proof.kernel} ({proof.call or 'called directly'}): run "
                         f"{(proof.run_s or 0) * 1e3:.3f} ms, max error {proof.max_error:.3g}")
    if result.status in (Status.PASS, Status.WARN) and not result.library:
        lines.extend(candidate_lines(result.candidates, result.warm))
    for kernel, error in result.tried:
        lines.append(f"  tried     {kernel}: {error}")
    if result.process is not None and result.process.libraries:
        lines.append(f"  loaded    {summary(result.process)}")
    if result.compile_target is not None:
        lines.append(f"  compiled  {result.compile_target.said}")
    if result.environment is not None and result.environment.settings:
        lines.append(f"  settings  {result.environment.settings_said}")
    if result.environment is not None and result.environment.cleared:
        names = ", ".join(name for name, _ in result.environment.cleared)
        lines.append(f"  cleared   {names} (the run used envcheck's own settings; --json has the values)")
    if result.evidence:
        lines.append(f"  seen      {result.evidence}")
    if result.remedy is not None:
        lines.extend(remedy_lines(result.remedy))
    if result.log:
        lines.append(f"  log       {result.log}")
    return "\n".join(lines)
