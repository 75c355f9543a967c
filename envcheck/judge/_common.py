"""What every check shares: the inputs, and the few ways a remedy is spelled."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from ..model import Driver, Facts, Failure, Finding, Gpu, Interpreter, Remedy, Run, Status, Step, version_or_none
from ..profile import RUNTIME, Policy, pip_torch, spec_text, torch_release

__all__ = ["Context", "basis_text", "interpreter_error", "pip_install", "pip_uninstall", "fix_command", "satisfies",
           "shortfall", "version_or_none", "source_lines"]


@dataclass(frozen=True)
class Context:
    """Everything a check may look at. Checks are pure functions of it."""

    facts: Facts
    policy: Policy
    no_gpu: bool = False  # a builder without a GPU: checks that need one are skipped
    strict: bool = False  # recipe deviations fail (teams bound to the published recipe)
    contributed: tuple[Run, ...] = ()  # runs the user gave (doctor --evidence), beside the profile's own

    @property
    def gpus(self) -> tuple[Gpu, ...]:
        """The GPUs judged for: those given with --gpu-capability (with or without --no-gpu), else the ones seen
        here (none with --no-gpu)."""
        gpus = self.facts.gpus
        return tuple(g for g in gpus if g.given) if self.no_gpu else gpus

    @property
    def capabilities(self) -> tuple[tuple[int, int], ...]:
        """The compute capabilities judged for (see gpus): every capability-dependent basis uses these."""
        return tuple(dict.fromkeys(g.capability for g in self.gpus))

    @property
    def runs(self) -> tuple[Run, ...]:
        return self.policy.runs + self.contributed

    @property
    def torch(self) -> Optional[Version]:
        """The installed torch's release (torch/version.py, else its metadata); None without one (or unreadable)."""
        return torch_release(self.interpreter.torch_version) if self.interpreter is not None else None

    @property
    def torch_judged(self) -> tuple[Optional[Version], str]:
        """The torch a torch-dependent verdict is judged for, and how it was found: the installed one (""), else the
        one a plain `pip install torch` gives on the target's Python where this profile covers it (the profile's
        newest: "pip"); (None, "") where neither is known."""
        if self.torch is not None:
            return self.torch, ""
        version = ".".join(map(str, self.interpreter.version)) if self.interpreter is not None else None
        found = pip_torch((self.policy,), version)
        return (found.torch, "pip") if found is not None and found.torch is not None else (None, "")

    def deviation(self, basis: str) -> Status:
        """The status of a requirement not met: fail where it is runtime (or --strict), warn where it is recipe."""
        return Status.FAIL if basis == RUNTIME or self.strict else Status.WARN

    @property
    def interpreter(self) -> Optional[Interpreter]:
        value = self.facts.interpreter
        return value if isinstance(value, Interpreter) else None

    def installed_version(self, name: str) -> Optional[str]:
        """The installed version of a distribution in the target (None: not installed, or no target read)."""
        dist = self.interpreter.dist(name) if self.interpreter is not None else None
        return dist.version if dist is not None else None

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


def satisfies(version: Optional[str], specifier: SpecifierSet) -> bool:
    """A version meets a specifier; pre-releases and local builds (2.12.0.dev+cu130) count."""
    parsed = version_or_none(version)
    return parsed is not None and specifier.contains(parsed, prereleases=True)


def shortfall(name: str, version: Optional[str], specifier: SpecifierSet) -> str:
    """Why what is installed does not meet a requirement, as a plan's step says it: `nvcc is missing (needs >=13.1,
    <14)`, `nvcc is too old (found 13.0.88, needs >=13.1, <14)`, `... is too new (...)`, `... is excluded (...)`; a
    version that is not one: `... is not a version envcheck can read (...)`."""
    needs = spec_text(specifier) or "any version"
    if version is None:
        return f"{name} is missing" + (f" (needs {needs})" if str(specifier) else "")
    found = version_or_none(version)
    if found is None:
        return f"{name} {version} is not a version envcheck can read (needs {needs})"
    if specifier.contains(found, prereleases=True):
        return f"{name} {version} meets {needs}"
    said = "outside the range"
    for spec in specifier:
        if spec.contains(found, prereleases=True):
            continue
        bound = version_or_none(spec.version.rstrip(".*"))
        if spec.operator in (">=", ">", "~="):
            said = "too old"
        elif spec.operator in ("<", "<="):
            said = "too new"
        elif spec.operator == "!=":
            said = "excluded"
        elif bound is not None:  # == and ===: below or above the one version
            said = "too old" if found < bound else "too new"
        break
    return f"{name} is {said} (found {version}, needs {needs})"


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


def source_lines(*sources: tuple[str, str]) -> tuple[str, ...]:
    """A finding's details naming where each verdict comes from: ('what', 'a wheel file and line or a run')."""
    return tuple(f"source ({what}): {text}" for what, text in sources if text)


def worst(statuses: Sequence[Status]) -> Status:
    return max(statuses, key=lambda s: s.rank, default=Status.PASS)
