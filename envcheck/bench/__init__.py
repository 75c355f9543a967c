"""bench: should this GPU use the profile's CuteDSL backend, shape by shape? Honest GEMM timings through Inductor.

  data.py      the GPUs' dense peaks (peaks.toml) and the named shape sets (shapes.toml), each with its source
  shapes.py    --shapes: llm, square, MxNxK,... or a file
  watch.py     NVML sampled while the child runs: clocks, power, temperature, throttle reasons, other processes
  noise.py     the noise rule: when two timings differ (pure)
  classes.py   decode (M <= 64) and prefill
  autotune.py  what Inductor's own pick (mix) costs against each single backend, weighted; the backends to pin
  weights.py   --weights FILE: how often each shape runs
  analysis.py  rows -> trusted measurements, per-shape verdicts over the measured noise, the decision (pure)
  result.py    what a run is asked (BenchOptions) and found (BenchResult)
  results.py   a saved result (bench --json) read back, strictly
  compare.py   saved results side by side (pure)
  run.py       the run: the child (envcheck/inside/bench_child.py, through runner.py), its rows, the last result

The command is commands/bench.py; the texts and the plot are render/bench*.py.
"""

from .run import last_bench, run_bench

__all__ = ["run_bench", "last_bench"]
