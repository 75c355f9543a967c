"""`envcheck smoke`: gather what the run needs, prove the stack with one GEMM (smoke/), print the result."""

from __future__ import annotations

import datetime
import sys
from pathlib import Path
from typing import Optional, TextIO

from ..jsonanswer import answer
from ..model import ProfileChoice, SmokeResult, Status
from ..render.smoke import render_text
from ..render.text import profile_json, profile_line
from ..smoke.run import DEFAULT_TIMEOUT, SCHEMA_VERSION, run_smoke
from ..userfile import emit, progress
from ..words import columns, fit

__all__ = ["smoke_command", "smoke_data"]


def smoke_command(
    python: Optional[str] = None,
    profile: Optional[str] = None,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    fresh: bool = False,
    as_json: bool = False,
    allow_skip: bool = False,
    cache_dir: Optional[Path] = None,
    library: bool = False,
    layout: str = "linear",
    out: Optional[TextIO] = None,
    err: Optional[TextIO] = None,
    output: Optional[Path] = None,
) -> int:
    """`envcheck smoke`: gather, run, print (or write `output` atomically). 0 pass or warn; 1 fail, or skipped
    (no GPU) unless allow_skip. library: `--library`, the profile's kernel library called directly, not Inductor.
    layout: `--layout`, the layouts of B proved (linear, row-major or both: a GEMM each)."""
    err = err or sys.stderr
    from ..bench.shapes import parse_layout
    from ..smoke.run import SmokeShape

    shape = SmokeShape(layouts=parse_layout(layout))  # a bad --layout is exit 2 before anything runs
    from ..diagnose import run_facts
    from ..profile import candidates
    from ..gather.target import require_interpreter, resolve_python

    target = resolve_python(python)  # a bad --python is a usage error, GPU or not
    # The profile that covers the installed torch, unless one is named (profile.choose's choice, as doctor makes it).
    chosen, choice, facts = run_facts(target, candidates(profile))
    require_interpreter(target, facts.interpreter)  # not Python, or hung: nothing to prove anything in (exit 2)
    say = progress(err)
    say(profile_line(choice))
    result = run_smoke(target, facts, chosen, timeout=timeout, fresh=fresh, cache_dir=cache_dir, library=library,
                       shape=shape, progress=say)
    code = 0 if allow_skip and result.status is Status.SKIP else result.exit_code
    if as_json:
        emit(answer(smoke_data(result, choice, target), code, result.status.value), output, out)
    else:
        emit(fit(render_text(result), columns(out or sys.stdout)) + "\n", output, out)
    return code


def smoke_data(result: SmokeResult, profile: ProfileChoice, target: str, today: Optional[datetime.date] = None) -> dict:
    """`smoke --json`: the result, the profile that judged it and why (doctor's object), and the day it ran (UTC), so
    that a run contributed as evidence is dated by itself (profile/results.py reads `date`), not by when its file was
    last touched."""
    day = today or datetime.datetime.now(datetime.timezone.utc).date()
    return {"schema_version": SCHEMA_VERSION, "profile": profile_json(profile), "target": target, "date": day.isoformat(),
            "smoke": result.to_dict()}
