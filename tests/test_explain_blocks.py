"""explain finds the same causes in a short log, searched line by line, as in a long one, whose blocks are searched
whole first (envcheck/causes/log.py FEW_LINES): one sample line of every signature, alone and after a long run's
progress lines."""

from __future__ import annotations

import io

import pytest

from envcheck.causes import Context
from envcheck.causes.log import FEW_LINES, LogReader, scan
from envcheck.profile import load_builtin
from test_remedies import SAMPLES

NOISE = "[rank0] step {n:>8} | loss 2.31 | lr 3.0e-04 | tokens/s 41234.5 | mem 61.2 GiB\n"


def _found(text: str, policy) -> list[tuple[str, str, int]]:
    found = scan(LogReader(io.BytesIO(text.encode())), Context("python3", policy, known=False))
    return [(f.cause.id, f.cause.evidence, f.line) for f in found]


@pytest.mark.parametrize("profile", ["torch-2.11-nvgemm", "torch-2.14-operators"])
def test_a_short_log_and_a_long_one_show_the_same_causes(profile):
    policy = load_builtin(profile)
    samples = "".join(line + "\n" for line in SAMPLES.values())
    padding = "".join(NOISE.format(n=n) for n in range(2 * FEW_LINES))
    short, long = _found(samples, policy), _found(padding + samples, policy)
    assert samples.count("\n") <= FEW_LINES < (padding + samples).count("\n")
    assert {cause for cause, _, _ in short} == set(SAMPLES)
    assert [(cause, said, line + 2 * FEW_LINES) for cause, said, line in short] == long
