"""fix: turn failing findings into an ordered plan, show it, apply it when asked, and undo it.

  plan.py       findings + facts + policy -> an immutable Plan (pure); plan_blockers: why none could run
  steps.py      the plan's values and their JSON: PlanOptions, PlannedStep, Instruction, Plan
  planners.py   one planner per kind of step, in the plan's order (imported only when a plan is made)
  pip.py        validated pip sources and requirements, and the argv of every pip call
  preflight.py  every step's preconditions, checked before the first change
  promise.py    what a plain fix would fix, for doctor's "envcheck fix can fix" line
  apply.py      runs a plan's steps with an injected process runner: progress, a log, a clear account
  snapshot.py   the environment before the first change, recorded, and read back strictly
  wheels.py     an installed distribution packed back into a wheel, so that undo needs no network
  undo.py       the plan that gives the recorded environment back, and the CUTLASS checkout put back
  statelock.py  one fix or undo at a time per target environment
  manifest.py   what fix put in a folder it created, so that undo removes only that
  byproducts.py what fix's editable install wrote into the checkout, so that undo removes only that
  host.py       how pip runs for the target, PEP 668, the other interpreters on this machine

The CUTLASS fetch itself is envcheck/cutlass_fetch.py (bundle fetches with it too); a bundle's wheels and CUTLASS
for `fix --bundle` come from envcheck/bundle/offline.py. A plan and its outcome as text are render/fix.py's;
`envcheck fix` itself is commands/fix.py.
"""
