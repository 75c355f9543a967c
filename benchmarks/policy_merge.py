"""Time of merging a profile's [[packages]] over the built-in one it extends, by the number of entries.

    python benchmarks/policy_merge.py [--sizes 1000,4000,16000] [--repeat 5] [--source TREE]

For each size N: the median time of `profile.merge.merge_entries` merging N new [[packages]] entries (every fourth one
replacing an earlier one, every tenth one removing one) over N base entries, and the time `load` takes to refuse a
profile of N entries (or to read it, at or below profile.MAX_ENTRIES). `--source TREE` times another envcheck
source tree the same way (one with envcheck/policy.py too), such as the main branch before the merge was made linear:

    python benchmarks/policy_merge.py --source /work/main --sizes 1000,2000,4000
"""

from __future__ import annotations

import importlib
import inspect
import sys
import tempfile
import time
from pathlib import Path

from sizes import median_seconds, size_arguments  # benchmarks/sizes.py: run as a script, its folder is on the path


def entries(count: int, prefix: str) -> list[dict]:
    return [{"name": f"{prefix}-{i}", "version": ">=1"} for i in range(count)]


def overrides(count: int) -> list[dict]:
    out = []
    for i in range(count):
        if i % 10 == 0:
            out.append({"name": f"base-{i}", "remove": True})
        elif i % 4 == 0:
            out.append({"name": f"base-{i}", "version": ">=2"})
        else:
            out.append({"name": f"new-{i}", "version": ">=1"})
    return out


def main() -> int:
    args = size_arguments(__doc__, "1000,4000,16000", 5)
    from envcheck.errors import UsageError

    try:
        from envcheck import profile as policy
        from envcheck.profile.merge import merge_entries as merge
    except ImportError:  # a tree from before issue 19: one policy.py
        policy = importlib.import_module("envcheck.policy")
        merge = policy._merge_entries
    extra = len(inspect.signature(merge).parameters) - 3  # the linear one also records which file set each entry
    root = Path(sys.modules["envcheck"].__file__).parent
    print(f"envcheck from {root}; MAX_ENTRIES = {getattr(policy, 'MAX_ENTRIES', 'none')}")
    print(f"{'entries':>8} {'merge (ms)':>12} {'per entry (us)':>15} {'load (ms)':>10}  load")
    for size in args.sizes:
        base, override = entries(size, "base"), overrides(size)
        extra_args = ("child", {}, "packages")[:extra]
        merged = median_seconds(lambda: merge(base, override, ("name",), *extra_args), args.repeat)
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "site.toml"
            path.write_text('extends = "torch-2.11-nvgemm"\n' + "".join(
                f'[[packages]]\nname = "pkg-{i}"\nversion = ">=1"\n' for i in range(size)))
            start = time.perf_counter()
            try:
                policy.load(path)
                outcome = "read"
            except UsageError as exc:
                outcome = f"refused: {str(exc).split(': expected ')[-1]}"
            loaded = time.perf_counter() - start
        print(f"{size:>8} {merged * 1e3:>12.2f} {merged / size * 1e6:>15.2f} {loaded * 1e3:>10.1f}  {outcome}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
