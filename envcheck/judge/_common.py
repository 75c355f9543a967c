"""What every check shares: the inputs, and the few ways a remedy is spelled."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version

from ..model import Driver, Facts, Failure, Finding, Interpreter, Remedy, Status, Step
from ..profile import RUNTIME, Policy

__all__ = ["Context", "basis_text", "interpreter_error", "pip_install", "pip_uninstall", "fix_command", "satisfies", "version_or_none"]


@dataclass(frozen=True)
class Context:
    """Everything a check may look at. Checks are pure functions of it."""

    facts: Facts
    policy: Policy
    no_gpu: bool = False  # a builder without a GPU: checks that need one are skipped
    strict: bool = False  # recipe deviations fail (teams bound to the published recipe)

    @property
    def capabilities(self) -> tuple[tuple[int, int], ...]:
        """The compute capabilities of the GPUs seen here (none with --no-gpu or without a driver)."""
        driver = self.driver
        if self.no_gpu or driver is None:
            return ()
        return tuple(dict.fromkeys(g.capability for g in driver.gpus))

    def deviation(self, basis: str) -> Status:
        """The status of a requirement not met: fail where it is runtime (or --strict), warn where it is recipe."""
        return Status.FAIL if basis == RUNTIME or self.strict else Status.WARN

    @property
    def interpreter(self) -> Optional[Interpreter]:
        value = self.facts.interpreter
        return value if isinstance(value, Interpreter) else None

    @property
    def driver(self) -> Optional[Driver]:
        value = self.facts.driver
        return value if isinstance(value, Driver) else None

    @property
    def python(self) -> str:
        """The target interpreter, as commands should name it."""
        interpreter = self.interpreter
        if interpreter is not None:
            return interpreter.executable
        failure = self.facts.interpreter
        return getattr(failure, "python", None) or "python"


def interpreter_error(ctx: Context, check_id: str, title: str) -> Optional[Finding]:
    """The finding for a check that needs the interpreter when the probe could not run there."""
    failure = ctx.facts.interpreter
    if isinstance(failure, Failure):
        return Finding(
            id=check_id,
            title=title,
            status=Status.ERROR,
            found=f"the target interpreter could not be read: {failure.message}",
            why="Every package check runs inside the target interpreter.",
            remedy=Remedy("Point --python at a working interpreter (a path to its python executable)."),
        )
    return None


def version_or_none(text: Optional[str]) -> Optional[Version]:
    try:
        return Version(text) if text else None
    except InvalidVersion:
        return None


def satisfies(version: Optional[str], specifier: SpecifierSet) -> bool:
    """A version meets a specifier; pre-releases and local builds (2.12.0.dev+cu130) count."""
    parsed = version_or_none(version)
    return parsed is not None and specifier.contains(parsed, prereleases=True)


def pip_command(python: str, *args: str) -> tuple[str, ...]:
    return (python, "-m", "pip", *args)


def pip_install(python: str, requirements: Sequence[str], why: str, index_url: str = "", reinstall: bool = False) -> Remedy:
    """A remedy the fixer can apply: install requirements into the target interpreter."""
    args = ["install"]
    if reinstall:
        args.append("--force-reinstall")
    if index_url:
        args += ["--index-url", index_url]
    step = Step("pip-install", tuple(requirements), why, index_url=index_url, reinstall=reinstall)
    return Remedy(
        text=f"Install {', '.join(requirements)} into the target interpreter (`envcheck fix` does this).",
        commands=(fix_command(python), pip_command(python, *args, *requirements)),
        steps=(step,),
    )


def pip_uninstall(python: str, names: Sequence[str], why: str, then: Optional[Remedy] = None) -> Remedy:
    steps = (Step("pip-uninstall", tuple(names), why),) + (then.steps if then else ())
    commands = (fix_command(python), pip_command(python, "uninstall", "-y", *names)) + (then.commands[1:] if then else ())
    text = f"Uninstall {', '.join(names)}" + (f", then {then.text[0].lower()}{then.text[1:]}" if then else ".")
    return Remedy(text=text, commands=commands, steps=steps)


def fix_command(python: str) -> tuple[str, ...]:
    return ("envcheck", "fix", "--python", python)


def basis_text(basis: str, strict: bool) -> str:
    """How a verdict names its basis."""
    if basis == RUNTIME:
        return "runtime: the backend breaks without it"
    return "recipe: published, not shown necessary" + (" (--strict makes it fail)" if strict else " (warn; --strict makes it fail)")


def worst(statuses: Sequence[Status]) -> Status:
    return max(statuses, key=lambda s: s.rank, default=Status.PASS)
