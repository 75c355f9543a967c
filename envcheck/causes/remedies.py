"""Remedies more than one explanation gives, built from the profile so that a later profile changes them without code."""

from __future__ import annotations

from ..judge._common import pip_command
from ..model import Remedy, Step
from .context import Context

__all__ = ["RECIPE_LINK", "TVM_FFI_FLOOR", "TVM_FFI_RAN", "below_remedy", "dsl_remedy", "fresh_smoke", "check_remedy", "install_remedy", "package_rule", "requirement_for"]

RECIPE_LINK = "https://github.com/NVIDIA/cutlass/tree/cutlass_api/python/cutlass_api"
TVM_FFI_FLOOR = "0.1.11"  # the first with the unpacking DSL >= 4.6 expects (facts-17 section 4; operators 0.3.0's floor)
TVM_FFI_RAN = "0.1.15.post2"  # what ran on the H200 with DSL 4.8.1 (STACK.md section 6)


def dsl_remedy(ctx: Context, text: str) -> Remedy:
    """Reinstall the DSL the profile names, saying why (text)."""
    requirement = ctx.policy.cutedsl.requirement
    return Remedy(
        text=text,
        commands=(pip_command(ctx.python, "install", requirement),),
        steps=(Step("pip-install", (requirement,), why="the profile's CuTeDSL", reinstall=True),),
        link=ctx.policy.link or RECIPE_LINK,
    )


def fresh_smoke(ctx: Context) -> tuple[str, ...]:
    """The smoke run again with envcheck's compiler caches emptied first."""
    return ("envcheck", "smoke", "--python", ctx.python, "--fresh")


def below_remedy(ctx: Context) -> Remedy:
    """The way out on a GPU below the profile's kernel floor: the profile's own ([gpu-below] remedy), else a GPU of
    the compute capability it names (9.0 on the operators stack, 8.0 on the recipe's), never a fixed number."""
    rule = ctx.policy.gpu_below
    return Remedy(text=rule.remedy or f"Run on a GPU of compute capability {rule.capability[0]}.{rule.capability[1]} "
                  "or newer.")


def check_remedy(ctx: Context, text: str) -> Remedy:
    """Where the log alone cannot tell which part failed: doctor on the interpreter that ran it."""
    return Remedy(text=text, commands=(("envcheck", "doctor", "--python", ctx.python),),
                  link=ctx.policy.link or RECIPE_LINK)


def install_remedy(ctx: Context, text: str, *requirements: str, reinstall: bool = False, why: str = "") -> Remedy:
    """pip install of these requirements into the target (a step the fixer can take)."""
    flags = ("--force-reinstall",) if reinstall else ()
    return Remedy(text=text, commands=(pip_command(ctx.python, "install", *flags, *requirements),),
                  steps=(Step("pip-install", requirements, why=why, reinstall=reinstall),))


def package_rule(ctx: Context, module: str):
    """The profile's [[packages]] rule of the distribution that provides `module` (None: the profile has none)."""
    return next((r for r in ctx.policy.packages if r.module == module), None)


def requirement_for(ctx: Context, module: str, default: str) -> str:
    """What the profile asks pip for, for the distribution that provides `module`; `default` where it names none."""
    rule = package_rule(ctx, module)
    return rule.requirement if rule is not None else default
