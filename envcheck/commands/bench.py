"""`envcheck bench --compare A.json B.json [...]`: saved bench results side by side (compare.py), as a table,
markdown or JSON (-o FILE: to a file), with the plot (--plot FILE.png|.svg). No GPU, no target interpreter: only
the files."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional, Sequence

from ..errors import UsageError
from ..userfile import emit

__all__ = ["compare_command"]


def compare_command(files: Sequence[Path], *, weights: Optional[Path] = None, output_format: str = "table",
                    output: Optional[Path] = None, plot: Optional[Path] = None, out=None, err=None) -> int:
    """0 when the results were read and compared; every unusable input is a UsageError (exit 2) naming it."""
    from ..redact import Redactor
    from ..render import bench as render
    from ..bench.compare import compare
    from ..render.bench_compare import FORMATS, render_comparison
    from ..bench.results import read_result
    from ..bench.weights import EQUAL, read_weights

    out = out or sys.stdout
    err = err or sys.stderr
    if len(files) < 2:
        raise UsageError(f"--compare: expected two or more bench results (`envcheck bench --json > FILE`), "
                         f"got {len(files)}")
    if output_format not in FORMATS:
        raise UsageError(f"--format {output_format!r}: expected one of {', '.join(FORMATS)}")
    if plot is not None:
        render.check_plot(plot)
    counts = read_weights(weights) if weights is not None else EQUAL
    comparison = compare([read_result(Path(f)) for f in files], counts)
    if plot is not None:  # first: a plot that cannot be written is exit 2 with nothing printed
        from ..render.bench_plot import plot_comparison

        plot_comparison(comparison, plot)
        print(f"envcheck: plot written to {plot}", file=err, flush=True)
    emit(Redactor()(render_comparison(comparison, output_format)), output, out)
    return 0
