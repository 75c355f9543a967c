"""How --help names what a parameter takes: as git, pip and click do (`--python PATH`, a flag alone, an argument by
its name), never as typer 0.29 does, with Python types (`--json <bool>`, `REPORT... <list[Path]>`, `[FILE|-] <str>`).

typer 0.29 fills the type column of --help from each parameter's display_type_rich(): for an option its metavar
where it declares one, else its type in angle brackets (a flag's `<bool>`, typer's own --help included); for an
argument its type, beside the name column that already shows its metavar. Command and Group answer with the metavar
alone: an option that takes a value shows it, a flag and an argument show nothing more. Every option of envcheck that
takes a value declares a metavar (tests/test_cli.py reads every command's --help for a `<type>`). typer before 0.29
never calls display_type_rich and shows click's help, which has none of these labels.
"""

from __future__ import annotations

from typing import Any, List

from typer.core import TyperCommand, TyperGroup

from . import optionvalues

__all__ = ["Command", "Group"]


def _metavar_only(params: List[Any]) -> List[Any]:
    for param in params:
        if param.param_type_name == "option" and not getattr(param, "is_flag", False):
            if param.metavar is None:
                continue  # typer's own label, which the test of every --help names
            shown = param.metavar
        else:
            shown = None  # a flag takes nothing; an argument's metavar is its name
        param.display_type_rich = lambda ctx=None, shown=shown: shown
    return params


class Command(TyperCommand):
    """A command whose --help shows each parameter by its metavar (the module's docstring says why), and whose
    parameters convert their values without pydantic (envcheck/optionvalues.py)."""

    def get_params(self, ctx: Any) -> List[Any]:
        return optionvalues.plain(_metavar_only(super().get_params(ctx)))


class Group(TyperGroup):
    """The group of commands, whose own parameters (--version, --help) are shown and converted the same way."""

    def get_params(self, ctx: Any) -> List[Any]:
        return optionvalues.plain(_metavar_only(super().get_params(ctx)))
