"""What the benchmarks that time work by the size of its input share: their command line (--sizes, --repeat,
--source TREE: which envcheck source tree is timed) and the median of repeated runs."""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path


def size_arguments(doc: str, sizes: str, repeat: int) -> argparse.Namespace:
    """The parsed --sizes, --repeat and --source, with `--source TREE` first on sys.path (envcheck is imported
    from there)."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--sizes", default=sizes)
    parser.add_argument("--repeat", type=int, default=repeat)
    parser.add_argument("--source", type=Path, default=Path(__file__).resolve().parent.parent)
    args = parser.parse_args()
    sys.path.insert(0, str(args.source.resolve()))
    args.sizes = [int(s) for s in args.sizes.split(",")]
    return args


def median_seconds(run, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)
