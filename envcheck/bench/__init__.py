"""bench: should this GPU use the profile's CuteDSL backend, shape by shape? Honest GEMM timings through Inductor.

  data.py      the GPUs' dense peaks (peaks.toml) and the named shape sets (shapes.toml), each with its source
  shapes.py    --shapes: llm, square, MxNxK,... or a file
  child.py     the script run in the target interpreter (standard library at module level; copied, not imported)
  watch.py     NVML sampled while the child runs: clocks, power, temperature, throttle reasons, other processes
  noise.py     the noise rule: when two timings differ (pure)
  classes.py   decode (M <= 64) and prefill
  autotune.py  what Inductor's own pick (mix) costs against each single backend, weighted; the backends to pin
  weights.py   --weights FILE: how often each shape runs
  analysis.py  rows -> trusted measurements, per-shape verdicts over the measured noise, the decision (pure)
  results.py   a saved result (bench --json) read back, strictly
  compare.py   saved results side by side (pure); compare_render.py its texts; compare_command.py bench --compare
  text.py, autotune_text.py, render.py   table, JSON, markdown; plot.py the plot
  run.py       the orchestration and `envcheck bench`
"""

from .run import BenchOptions, BenchResult, bench_command, last_bench, run_bench

__all__ = ["BenchOptions", "BenchResult", "bench_command", "last_bench", "run_bench"]
