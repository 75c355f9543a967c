"""What runs inside the target interpreter: the probe, the smoke and bench children, and what they share.

  probe.py         what the interpreter has (distributions, modules, torch's build), as JSON; never runs the target's
  search_path.py   the search path the target would have, computed from data (the probe runs isolated: -I -S)
  smoke_child.py   one GEMM through torch.compile on the CuteDSL backend (or the kernel library directly), proved
  bench_child.py   each GEMM through Inductor per backend, timed
  protocol.py      the line protocol both children speak: result and row lines, phases, the errors they name
  gemm.py          what both children do with torch: numerics, Inductor's code read, its settings, the stack's versions
  lookup.py        Inductor's kernel lookup, seeded from a verified marker
  loaded.py        what the smoke child's process really loaded (/proc/self/maps, sys.modules)
  timing.py        how bench times a kernel
  library.py       the profile's kernel library called directly (cutlass_api, cutlass.operators)

These files are run in another interpreter (the one being checked, maybe broken, maybe older than envcheck's), so
each imports only the standard library at module level, in Python 3.8 syntax (the probe: 3.6); torch and the stack
are imported inside functions. envcheck copies a child and its helpers into a run folder of its own (runner.py: the
script under the name users see in logs, each helper as `envcheck_<name>.py`, so that no top-level module torch or
the DSL imports is shadowed) and runs it there; each file imports its siblings as `from . import x` when envcheck's
own process imports it, else as the `envcheck_x` copy beside it. The probe is not copied: gather/interpreter.py runs
search_path.py and probe.py as one source.
"""
