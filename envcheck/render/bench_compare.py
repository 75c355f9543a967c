"""A Comparison as text: a table for people, markdown for an issue, JSON for programs (with schema_version)."""

from __future__ import annotations

import string
from typing import Optional

from .. import __version__
from ..jsonanswer import answer
from ..bench.classes import CLASSES, describe
from ..bench.compare import Comparison, Environment, Row, Speedup
from .bench_autotune import autotune_lines
from .bench_text import columns, markdown_table, number, percent, times
from .text import FORMATS

__all__ = ["FORMATS", "SCHEMA_VERSION", "render_comparison", "to_dict"]

SCHEMA_VERSION = 1
LEGEND = ("X/A: the reference's kernel time over X's (2.00x: twice as fast); it counts only beyond the noise of both "
          "runs (their spreads, do_bench's distance, each run's drift on the shape, 1%); TF/s from kernel time")


def _letters(comparison: Comparison) -> list[str]:
    return list(string.ascii_uppercase[:len(comparison.environments)])


def _environment_lines(comparison: Comparison) -> list[str]:
    rows = []
    for letter, environment in zip(_letters(comparison), comparison.environments):
        run, result = environment.run, environment.run.result
        facts = [f"profile {run.profile}" if run.profile else "", f"envcheck {run.envcheck_version}" if run.envcheck_version else "",
                 f"{result.gpu}", result.dtype, f"{result.elapsed_s:.0f} s" if result.elapsed_s else "",
                 "" if run.drift_saved else "drift not saved: its noise bounds it"]
        rows.append((f"  {letter}", environment.label, run.path, ", ".join(f for f in facts if f)))
    return columns(rows)


def _cells(row: Row, letters: list[str]) -> tuple[str, ...]:
    cells = [row.shape.text, row.shape.layout, row.shape.label, row.backend]
    cells += [number(m.kernel_ms) if m is not None and m.trusted else (m.status if m is not None else "") for m in row.figures]
    cells += [number(m.tflops) if m is not None and m.trusted else "" for m in row.figures]
    for against in row.against:
        cells += ["", "", ""] if against is None else [times(against.ratio), percent(against.noise), against.verdict]
    notes = [f"{letter}: {m.status}{': ' + m.reason if m.reason else ''}"[:80]
             for letter, m in zip(letters, row.figures) if m is not None and not m.trusted]
    picks = [f"{letter} {m.choice}" for letter, m in zip(letters, row.figures) if m is not None and m.choice and row.backend == "mix"]
    if picks:
        notes.insert(0, "picked " + ", ".join(picks))
    return (*cells, "; ".join(notes))


def _header(letters: list[str]) -> tuple[str, ...]:
    others = letters[1:]
    return ("shape", "layout", "model layer", "backend", *(f"{x} ms" for x in letters), *(f"{x} TF/s" for x in letters),
            *(cell for x in others for cell in (f"{x}/{letters[0]}", "noise", f"{x} against {letters[0]}")), "notes")


def _speedup_cell(s: Optional[Speedup]) -> str:
    if s is None:
        return ""
    return f"{times(s.geomean)} ({s.low:.2f}-{s.high:.2f}x) {s.faster}/{s.same}/{s.slower}"


def _speedup_rows(speedups: tuple[Speedup, ...], first: str) -> list[tuple[str, ...]]:
    backends = []
    for s in speedups:
        if s.backend not in backends:
            backends.append(s.backend)
    header = (first, "all shapes", *(describe(name) for name in CLASSES))
    rows = [header]
    for backend in backends:
        mine = {s.scope: s for s in speedups if s.backend == backend}
        rows.append((backend, *(_speedup_cell(mine.get(scope)) for scope in ("all", *CLASSES))))
    return rows


def _summary_blocks(comparison: Comparison) -> list[tuple[str, list[tuple[str, ...]]]]:
    """(title, table rows) of the summary: each result's backend against its cuBLAS, each result against A."""
    letters = _letters(comparison)
    own = [("result", "all shapes", *(describe(name) for name in CLASSES))]
    for letter, found in zip(letters, comparison.vs_cublas):
        mine = {s.scope: s for s in found}
        own.append((letter, *(_speedup_cell(mine.get(scope)) for scope in ("all", *CLASSES))))
    blocks = [(f"{comparison.backend} against cuBLAS within each result (cuBLAS's kernel time over its own: geometric "
               "mean, lowest-highest, faster/same/slower beyond the noise):", own)]
    for letter, speedups in zip(letters[1:], comparison.speedups):
        blocks.append((f"{letter} against {letters[0]}, per backend ({letters[0]}'s kernel time over {letter}'s, over "
                       "the shapes both measured: geometric mean, lowest-highest, faster/same/slower beyond the noise):",
                       _speedup_rows(speedups, "backend")))
    return blocks


def _autotune_blocks(comparison: Comparison) -> list[tuple[str, list[str]]]:
    return [(f"{letter} ({environment.label}):", autotune_lines(report))
            for letter, environment, report in zip(_letters(comparison), comparison.environments, comparison.autotune)]


def _title(comparison: Comparison) -> str:
    gpus = sorted({e.run.result.gpu for e in comparison.environments})
    return (f"bench --compare  {len(comparison.environments)} results on {', '.join(gpus)}; "
            f"A is the reference")


def _table(comparison: Comparison) -> str:
    letters = _letters(comparison)
    lines = [_title(comparison), *_environment_lines(comparison), "",
             *columns([_header(letters), *(_cells(row, letters) for row in comparison.rows)]), "", LEGEND]
    for title, rows in _summary_blocks(comparison):
        lines += ["", title, *("  " + line for line in columns(rows))]
    lines += ["", comparison.preference.text] + ([comparison.unpaired] if comparison.unpaired else [])
    for title, block in _autotune_blocks(comparison):
        lines += ["", title, *block]
    return "\n".join(lines) + "\n"


def _markdown(comparison: Comparison) -> str:
    letters = _letters(comparison)
    lines = [f"### envcheck {_title(comparison)}", ""]
    lines += markdown_table([("", "environment", "file"), *((letter, e.label, e.run.path)
                                                          for letter, e in zip(letters, comparison.environments))])
    lines += ["", f"**{comparison.preference.text}**", ""] + ([comparison.unpaired, ""] if comparison.unpaired else [])
    for title, rows in _summary_blocks(comparison):
        lines += [title, "", *markdown_table(rows), ""]
    lines += markdown_table([_header(letters), *(_cells(row, letters) for row in comparison.rows)])
    lines += ["", LEGEND, ""]
    for title, block in _autotune_blocks(comparison):
        lines += [f"#### {title}", "", "```", *block, "```", ""]
    return "\n".join(lines)


def _environment_dict(letter: str, environment: Environment) -> dict:
    run, result = environment.run, environment.run.result
    return {"letter": letter, "label": environment.label, "file": run.path, "profile": run.profile,
            "envcheck_version": run.envcheck_version, "gpu": result.gpu, "dtype": result.dtype,
            "backend": result.backend, "versions": dict(result.versions), "drift_saved": run.drift_saved}


def to_dict(comparison: Comparison) -> dict:
    letters = _letters(comparison)
    return {
        "schema_version": SCHEMA_VERSION,
        "kind": "bench-compare",
        "envcheck_version": __version__,
        "reference": letters[0],
        "environments": [_environment_dict(x, e) for x, e in zip(letters, comparison.environments)],
        "rows": [{"shape": row.shape.to_dict(), "backend": row.backend,
                  "figures": [None if m is None else {"status": m.status, "kernel_ms": m.kernel_ms, "tflops": m.tflops,
                                                      "call_ms": m.call_ms, "spread": m.spread, "choice": m.choice}
                              for m in row.figures],
                  "against_reference": [None if a is None else a.to_dict() for a in row.against]}
                 for row in comparison.rows],
        "against_cublas": {x: [s.to_dict() for s in found] for x, found in zip(letters, comparison.vs_cublas)},
        "against_reference": {x: [s.to_dict() for s in found] for x, found in zip(letters[1:], comparison.speedups)},
        "preference": {"backend": comparison.preference.backend, "text": comparison.preference.text,
                       "best": None if comparison.preference.best is None else letters[comparison.preference.best]},
        "autotune": {x: report.to_dict() for x, report in zip(letters, comparison.autotune)},
        "unpaired": comparison.unpaired or None,
    }


def render_comparison(comparison: Comparison, output_format: str) -> str:
    if output_format == "json":
        return answer(to_dict(comparison), 0)  # read and compared: an input that could not be is exit 2 before
    if output_format == "markdown":
        return _markdown(comparison)
    return _table(comparison)
