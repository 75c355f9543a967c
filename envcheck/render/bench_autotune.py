"""An AutotuneReport as lines of text: per shape, Inductor's pick against the best single backend; per class, the
weighted total; the config that pins a better backend. The same lines in bench's report and in bench --compare."""

from __future__ import annotations

from ..bench.autotune import AutotuneReport, MixCost
from ..bench.classes import describe
from .bench_text import columns, percent

__all__ = ["autotune_lines"]

HEADER = ("shape", "layout", "model layer", "picked", "fastest", "kernel", "noise", "quickest call", "per call", "noise",
          "weight", "")


def _verdict(cost: MixCost) -> str:
    slower = [what for what, lost in (("kernel", cost.kernel_loss), ("call", cost.call_loss)) if lost]
    if slower:
        return "slower per " + " and per ".join(slower)
    return "faster per kernel" if (cost.excess() or 0) < 0 else ""


def _row(cost: MixCost, weight: float) -> tuple[str, ...]:
    quickest = cost.quickest
    return (cost.shape.text, cost.shape.layout, cost.shape.label, cost.pick or "?", cost.fastest.backend, percent(cost.kernel_cost, sign=True),
            percent(cost.fastest.noise), quickest.backend if quickest else "", percent(cost.call_cost, sign=True),
            percent(quickest.call_noise) if quickest else "", f"{weight:g}", _verdict(cost))


def autotune_lines(report: AutotuneReport) -> list[str]:
    if not report.costs:
        return [f"Inductor's own pick (mix): not measured on any shape{_unmeasured(report)}"]
    lines = [f"Inductor's own pick among {report.backends} (mix) against the best single backend on each shape "
             f"(kernel and call time; a difference counts beyond its noise; weights: {report.weights.describe()}):"]
    lines += ["  " + line for line in columns([HEADER, *(_row(c, report.weights.of(c.shape)) for c in report.costs)])]
    losses = report.losses
    lines.append(f"  slower than the best single backend beyond the noise on {len(losses)} of {len(report.costs)} "
                 f"shapes" + (f": {', '.join(c.shape.text for c in losses)}" if losses else ""))
    for total in report.totals:
        scope = "all shapes" if total.scope == "all" else describe(total.scope)
        call = ("" if total.call_cost is None else
                f", per call {100 * total.call_cost:+.1f}% ({total.call_excess_ms:.4g} of {total.call_mix_ms:.4g} ms)")
        lines.append(f"  {scope}: {len(total.shapes)} shapes, slower on {len(total.losses)}; the pick cost "
                     f"{100 * total.cost:+.1f}% of kernel time ({total.excess_ms:.4g} of {total.mix_ms:.4g} ms"
                     f"{' per pass' if report.weights.equal else ', weighted'}){call}")
    tail = _unmeasured(report)
    if tail:
        lines.append(f"  {tail.lstrip('; ')}")
    if report.not_in_bench:
        lines.append(f"  in {report.weights.source} but not measured here (left out): {', '.join(report.not_in_bench)}")
    if report.snippet:
        lines += ["", report.snippet]
    return lines


def _unmeasured(report: AutotuneReport) -> str:
    return f"; the pick was not measured on {', '.join(report.unmeasured)}" if report.unmeasured else ""
