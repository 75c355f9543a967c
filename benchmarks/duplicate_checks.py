"""The two duplicate checks issue 24 found quadratic, timed by size: `bench --weights FILE` reading N shapes (its
JSON duplicate check and each shape's lookup), and doctor judging a target with N distributions (each check looks
distributions up by name; packages.consistency looks up every one).

    python benchmarks/duplicate_checks.py [--sizes 1000,10000,70000] [--repeat 3] [--source TREE]

Prints, per size, the median seconds of each, and the ratio to the size before it: linear work grows with the size
(x7 from 10,000 to 70,000), quadratic with its square (x49). `--source TREE` times another envcheck source tree the
same way, such as main before the change (keep its sizes small: 70,000 shapes took minutes there):

    python benchmarks/duplicate_checks.py --source /work/main --sizes 1000,4000,16000
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

from sizes import median_seconds, size_arguments  # benchmarks/sizes.py: run as a script, its folder is on the path


def weights_run(folder: Path, count: int):
    from envcheck.bench.shapes import Shape
    from envcheck.bench.weights import read_weights

    path = folder / f"w{count}.json"
    path.write_text(json.dumps({f"{m}x1x1": 1 for m in range(1, count + 1)}, separators=(",", ":")))  # < 1 MiB
    shapes = [Shape(m, 1, 1) for m in range(1, count + 1)]

    def run() -> None:
        weights = read_weights(path)
        assert sum(weights.of(s) for s in shapes) == count

    return run


def judge_run(count: int):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    from factsbuilder import dist, facts, interpreter

    from envcheck.judge import judge
    from envcheck.profile import load_builtin

    policy = load_builtin("torch-2.11-nvgemm")
    many = tuple(dist(f"package-{i}", "1.0") for i in range(count))  # the good stack and N more beside it
    target = facts(interpreter=interpreter(extra=many))

    def run() -> None:
        judge(target, policy, no_gpu=True)

    return run


def main() -> int:
    args = size_arguments(__doc__, "1000,10000,70000", 3)
    sizes = args.sizes
    print(f"envcheck from {args.source.resolve()}; median of {args.repeat}")
    print(f"{'N':>8}  {'--weights (s)':>14}  {'x':>5}  {'doctor judge (s)':>17}  {'x':>5}")
    before = None
    with tempfile.TemporaryDirectory() as scratch:
        for count in sizes:
            figures = (median_seconds(weights_run(Path(scratch), count), args.repeat),
                       median_seconds(judge_run(count), args.repeat))
            ratios = [f"{now / then:5.1f}" if before else "    -" for now, then in zip(figures, before or figures)]
            print(f"{count:>8}  {figures[0]:>14.3f}  {ratios[0]}  {figures[1]:>17.3f}  {ratios[1]}")
            before = figures
    return 0


if __name__ == "__main__":
    sys.exit(main())
