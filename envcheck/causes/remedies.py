"""Remedies more than one explanation gives, built from the profile so that a later profile changes them without code."""

from __future__ import annotations

from ..judge._common import pip_command
from ..model import Remedy, Step
from .context import Context

__all__ = ["RECIPE_LINK", "TVM_FFI_FLOOR", "TVM_FFI_RAN", "dsl_remedy", "fresh_smoke"]

RECIPE_LINK = "https://github.com/NVIDIA/cutlass/tree/cutlass_api/python/cutlass_api"
TVM_FFI_FLOOR = "0.1.11"  # the first with the unpacking DSL >= 4.6 expects (facts-17 section 4; operators 0.3.0's floor)
TVM_FFI_RAN = "0.1.15.post2"  # what ran on the H200 with DSL 4.8.1 (STACK.md section 6)


def dsl_remedy(ctx: Context, text: str) -> Remedy:
    """Reinstall the DSL the profile names, saying why (text)."""
    requirement = ctx.policy.cutedsl.requirement
    return Remedy(
        text=text,
        commands=(pip_command(ctx.python, "install", requirement),),
        steps=(Step("pip-install", (requirement,), why="the policy's CuTeDSL", reinstall=True),),
        link=ctx.policy.link or RECIPE_LINK,
    )


def fresh_smoke(ctx: Context) -> tuple[str, ...]:
    """The smoke run again with envcheck's compiler caches emptied first."""
    return ("envcheck", "smoke", "--python", ctx.python, "--fresh")
