"""The run's one word (doctor's JSON `status`, the markdown report's heading): a skipped check is counted, not the
outcome, unless every check was skipped; a smoke that was asked for counts as it ended."""

from __future__ import annotations

import json

import pytest

from envcheck.model import Report, Status
from envcheck.model.findings import Finding
from envcheck.render import render

P, S, W, F, E = Status.PASS, Status.SKIP, Status.WARN, Status.FAIL, Status.ERROR


def report(*statuses: Status) -> Report:
    return Report("p", "t", tuple(Finding(f"c.{i}", "c", status, "found") for i, status in enumerate(statuses)))


@pytest.mark.parametrize("statuses, status, exit_code", [
    ((), P, 0),
    ((P,), P, 0),
    ((P, S, S), P, 0),       # a healthy run without a GPU: 11 pass, 3 skip in the README's quick start
    ((S,), S, 0),
    ((S, S), S, 0),          # nothing was proved: said so
    ((P, W), W, 0),
    ((S, W), W, 0),
    ((P, S, F), F, 1),
    ((W, F, S), F, 1),
    ((P, E), E, 1),
    ((E, F, W, S, P), E, 1),
])
def test_the_run_is_its_worst_check_but_for_skips(statuses, status, exit_code):
    run = report(*statuses)
    assert (run.status, run.exit_code) == (status, exit_code)
    document = json.loads(render(run, "json"))
    assert (document["status"], document["exit_code"]) == (status.value, exit_code)
    assert f"envcheck doctor: {status.value}" in render(run, "markdown")
    assert run.worst == max(statuses, key=lambda s: s.rank, default=P)  # github's and junit's `worst` stays literal
