"""The options several commands share, and the checks run on a value as its option is parsed (each a UsageError
naming the flag and what was expected, before anything is read, run or written). What cli.py is made of, with
helpstyle and endings.

No `from __future__ import annotations` here, for the reason cli.py gives.
"""

import math
from pathlib import Path
from typing import Callable, List, Optional

import typer

from .errors import UsageError

__all__ = ["CutlassDirOpt", "LayoutOpt", "MAX_SECONDS", "PolicyOpt", "ProfileOpt", "PythonOpt", "StrictOpt",
           "gpu_capabilities", "gpu_capability_option", "named_profile", "output_file", "output_option", "seconds"]

PythonOpt = typer.Option(None, "--python", metavar="PATH", help="Target interpreter (default: the one running envcheck).")
# --profile on every command that chooses one, the same words: the default in one line, how every command chooses in
# the README (What it checks), where a change of the choice is said once.
ProfileOpt = typer.Option(
    None, "--profile", metavar="ID|FILE",
    help="The profile to judge by: a built-in id or a TOML file; default: the one for the target's torch (README: What "
         "it checks).",
)
PolicyOpt = typer.Option(None, "--policy", metavar="ID|FILE", hidden=True, help="The old name of --profile.")
LayoutOpt = typer.Option(
    "linear", "--layout", metavar="LAYOUT",
    help="How B of each GEMM is stored: linear (nn.Linear's weight, x @ W.T: what LLM layers run), row-major "
         "(B [K, N] row-major) or both.",
)
StrictOpt = typer.Option(False, "--strict", help="Deviations from the published recipe fail (they warn by default).")
CutlassDirOpt = typer.Option(None, "--cutlass-dir", metavar="DIR", help="The CUTLASS checkout to check or fetch into.")

MAX_SECONDS = 7 * 24 * 3600.0  # a week: a longer time limit is a typo, and inf or 1e309 would be none at all


def gpu_capabilities(flag: str) -> Callable[[Optional[List[str]]], tuple[tuple[int, int], ...]]:
    """The one reading of --gpu-capability (model.capability_of), run as the option is parsed: each value MAJOR.MINOR,
    or a UsageError naming the flag and what was expected ('9', '9.0.1', 'abc', '-1.0', '100.0' are refused)."""

    def check(values: Optional[List[str]]) -> tuple[tuple[int, int], ...]:
        from .model import capability_of

        parsed = []
        for value in values or ():
            try:
                parsed.append(capability_of(value))
            except ValueError:
                raise UsageError(f"{flag} {value!r}: expected a compute capability MAJOR.MINOR such as 9.0 or "
                                 "12.1") from None
        return tuple(parsed)

    return check


def gpu_capability_option(what: str = "Judge", no_gpu: bool = True, help: Optional[str] = None) -> typer.models.OptionInfo:
    """--gpu-capability; no_gpu: the command takes --no-gpu too, and the help says how the two go together."""
    with_no_gpu = "; with --no-gpu on a machine without one: an image build, CI" if no_gpu else ""
    return typer.Option([], "--gpu-capability", metavar="X.Y", callback=gpu_capabilities("--gpu-capability"),
                        help=help or f"{what} for a GPU of this compute capability, as if it were here (it wins over "
                                     f"one seen; repeatable{with_no_gpu}).")


def output_file(flag: str) -> Callable[[Optional[Path]], Optional[Path]]:
    """The one check of every file a command writes (-o, --junit, --plot), run as its option is parsed: in a folder
    that exists (userfile.existing_folder: envcheck makes none), or a UsageError naming the flag and the folder, before
    anything is read, run or written."""

    def check(value: Optional[Path]) -> Optional[Path]:
        if value is not None:
            from .userfile import existing_folder

            existing_folder(value, f"{flag} {value}")
        return value

    return check


def output_option(help: str, default: Optional[Path] = None, metavar: str = "FILE") -> typer.models.OptionInfo:
    return typer.Option(default, "-o", "--output", metavar=metavar, callback=output_file("-o"), help=help)


def named_profile(profile: Optional[str], policy: Optional[str]) -> Optional[str]:
    """The profile named by --profile or its hidden alias --policy (profile.named_profile: both is an error)."""
    from .profile import named_profile as named

    return named(profile, policy)


def seconds(flag: str) -> Callable[[Optional[float]], Optional[float]]:
    """The one check of every numeric flag (each is a time in seconds), run as its option is parsed: a finite number
    above 0 and at most MAX_SECONDS, or a UsageError naming the flag and the range. nan fails every comparison."""

    def check(value: Optional[float]) -> Optional[float]:
        if value is not None and not (math.isfinite(value) and 0 < value <= MAX_SECONDS):
            raise UsageError(f"{flag} {value:g}: expected a number of seconds above 0 and at most {MAX_SECONDS:g} (a week)")
        return value

    return check
