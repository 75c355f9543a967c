"""The profile: what the stack must look like, read from TOML and validated the moment it is read.

  schema.py   every key a profile may hold (its docstring lists them) and the frozen Policy they are read into
  origins.py  which file set each value, and what a PolicyError may show of it
  merge.py    `extends`: a profile merged over the ones it stands on (linear)
  fields.py   reading a table and each kind of value
  build.py    a Policy from a merged profile
  load.py     a profile file or built-in id, its `extends` chain, the built-in profiles (builtin/*.toml, read once)
  select.py   which profile a run is judged by (choose: every command's one choice): the one named, or the one
              covering the target's torch, or without torch the one of what `pip install torch` gives
  newest.py   what a plain `pip install torch` gives on a Python, from each profile's newest torch and its Python
  target.py   [compile-target]: the DSL's compile target and what its fallback costs per compute capability, per
              torch (the NVGEMM choices a GEMM gets, the threshold from which they go to the compile workers)
  targetrules.py  the frozen values [compile-target] is read into
  project.py  which pyproject.toml is the user's project (its [tool.envcheck] is a profile)

`from envcheck.profile import X` is the way in; the modules inside import each other directly. Names with a leading
underscore are the package's own: its modules share them, nothing outside imports them.
"""

from ..model import ProfileChoice
from .load import MAX_ENTRIES, builtin_profiles, load, load_builtin
from .newest import PipTorch, pip_torch
from .origins import PolicyError
from .schema import (
    DEFAULT_PROFILE, LEVELS, RECIPE, RUN, RUNTIME, SCHEMA, SOURCES, Beside, Caveat, CompileTarget, Conflict,
    CutlassSource, GpuRule, MoreChoices, PackageRule, Policy, PythonRange, SmokeSpec, StandIn, TargetRow, TorchChoices,
    driver_floor_for, driver_text, on_capabilities, spec_text,
)
from .select import (
    Candidates, builtin_only, candidates, choose, lower_bound, named_profile, resolve, select, torch_release,
)

__all__ = [
    "DEFAULT_PROFILE",
    "SCHEMA",
    "RUNTIME",
    "RECIPE",
    "RUN",
    "SOURCES",
    "CompileTarget",
    "TargetRow",
    "TorchChoices",
    "MoreChoices",
    "MAX_ENTRIES",
    "ProfileChoice",
    "SmokeSpec",
    "select",
    "choose",
    "named_profile",
    "candidates",
    "builtin_only",
    "Candidates",
    "torch_release",
    "pip_torch",
    "PipTorch",
    "lower_bound",
    "PolicyError",
    "PackageRule",
    "Conflict",
    "GpuRule",
    "Caveat",
    "PythonRange",
    "Beside",
    "LEVELS",
    "on_capabilities",
    "StandIn",
    "CutlassSource",
    "Policy",
    "builtin_profiles",
    "load",
    "load_builtin",
    "resolve",
    "spec_text",
    "driver_text",
    "driver_floor_for",
]
