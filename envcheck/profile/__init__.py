"""The profile: what the stack must look like, read from TOML and validated the moment it is read."""

from .load import (
    DEFAULT_PROFILE, MAX_ENTRIES, RECIPE, RUNTIME, Candidates, Conflict, CutlassSource, GpuRule, PackageRule, Policy,
    PolicyError, ProfileChoice, SmokeSpec, StandIn, builtin_profiles, candidates, driver_floor_for, driver_text, load,
    load_builtin, resolve, select, spec_text, torch_release,
)
