"""render: every text a result becomes. One module per result or format; each a pure function of its result.

  text.py            what every text renderer shares: the format names, the status labels, colours and marks, a
                     markdown table cell, a remedy's `fix` and `$ command` lines
  report.py          a doctor Report as a table for people, versioned JSON for programs, markdown for an issue
  cases.py           a report's checks (and its smoke run) as the cases CI formats list
  junit.py           JUnit XML, one testcase per check
  github.py          GitHub Actions: annotations, the step summary, the step outputs
  prom.py            a Prometheus node-exporter textfile
  npd.py             node-problem-detector's one line and exit code
  smoke.py           a smoke result for people
  bench.py           a bench result as a table, JSON or markdown, and its plot (bench_plot.py, matplotlib);
                     bench_compare.py saved results side by side, bench_autotune.py Inductor's pick against the best
                     backend, bench_text.py the columns and numbers they share
  explain.py         explain's causes as text and JSON
  fix.py             a fix plan and its outcome, and where the plan's values came from
  fleet.py           diff and fleet as a table, JSON or markdown
  lock.py            verify's drift of an environment from its lock
  dockerfile.py      the Dockerfile and .dockerignore of a profile, from the templates

Redaction is the caller's: it is applied to the finished text. The modules of this package import each other
directly (`from .report import x`), never this __init__, which re-exports the report's API (`from envcheck.render
import render`).
"""

from .report import SCHEMA_VERSION, markdown, render, summary_counts, table, to_json_data
from .text import FORMATS

__all__ = ["FORMATS", "SCHEMA_VERSION", "render", "to_json_data", "table", "markdown", "summary_counts"]
