"""How a value on the command line becomes what a command takes, without pydantic.

typer 0.29 turns each parameter's value into its annotated type through a pydantic TypeAdapter, built when the
parameter is first processed; and every parameter of the command that runs is processed, given or not (--help's
too). The first adapter imports pydantic, and its plugin loader importlib.metadata: 0.1 to 0.2 s of every command's
start (benchmarks/startup_options.py). envcheck declares only str, float, bool, Path and lists of str and Path.
`plain(params)` gives each such parameter a conversion of its own, by the rules typer's adapters follow, before
typer builds one: tests/test_optionvalues.py holds the two to the same answers over tables of values, and names any
parameter left to typer. A type not above, a parser, a range or a path_type stay typer's, and so does everything
under a typer without these hooks (`type_descriptor`, `_runtime_param`: before 0.29 typer converts through click's
types, with no pydantic); a hook that went away costs time, never a changed value.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable, List, Optional, get_args, get_origin

import typer

__all__ = ["plain"]

# pydantic's words for a value it cannot convert, which typer shows after "Invalid value for '--flag':"
NOT_A_NUMBER = "Input should be a valid number, unable to parse string as a number"
NOT_A_BOOLEAN = "Input should be a valid boolean, unable to interpret input"
TRUE = frozenset(("1", "on", "t", "true", "y", "yes"))
FALSE = frozenset(("0", "off", "f", "false", "n", "no"))


def _text(value: Any) -> str:
    return os.fsdecode(value) if isinstance(value, bytes) else str(value)  # argv and defaults are text already


def _number(value: Any) -> float:
    """A float from a float, an int, a bool or the text of a decimal number (ASCII, as pydantic reads one: '1e3',
    ' 2 ', 'inf', '1_000'); a ValueError otherwise ('0x10', '５', '')."""
    if isinstance(value, (bool, int, float)):
        return float(value)
    if isinstance(value, str) and value.isascii():
        return float(value)
    raise ValueError(value)


def _boolean(value: Any) -> bool:
    """A bool from a bool, 0 or 1, or a word pydantic reads as one ('yes', 'Off'; blank is False, as typer has it);
    a ValueError with pydantic's words otherwise."""
    if isinstance(value, str):
        word = value.strip().lower()
        if not word:
            return False
        if word in TRUE or word in FALSE:
            return word in TRUE
    elif isinstance(value, (bool, int)) or (isinstance(value, float) and value.is_integer()):
        if value in (0, 1):
            return bool(value)
    else:
        raise ValueError(NOT_A_BOOLEAN.partition(",")[0])  # 0.5, nan, an object: pydantic's shorter words
    raise ValueError(NOT_A_BOOLEAN)


class _Plain:
    """A parameter's conversion: the contract of typer 0.29's RuntimeParam (a missing value is None, or () for a
    parameter that takes many; a string given for many is refused; else each value converted)."""

    __slots__ = ("one",)

    def __init__(self, one: Callable[[Any, Any, Any], Any]) -> None:
        self.one = one

    def coerce(self, value: Any, param: Any, ctx: Any) -> Any:
        many = param.multiple or param.nargs == -1
        if value is None:
            return () if many else None
        if not many:
            return self.one(value, param, ctx)
        if isinstance(value, str):
            raise typer.BadParameter("Value must be an iterable.", ctx=ctx, param=param)
        return [self.one(item, param, ctx) for item in (value if isinstance(value, (list, tuple)) else [value])]


def _as_text(value: Any, param: Any, ctx: Any) -> str:
    return _text(value)


def _as_number(value: Any, param: Any, ctx: Any) -> float:
    try:
        return _number(value)
    except (TypeError, ValueError):
        raise typer.BadParameter(NOT_A_NUMBER, ctx=ctx, param=param) from None


def _as_flag(value: Any, param: Any, ctx: Any) -> bool:
    try:
        return _boolean(value)
    except ValueError as refused:
        raise typer.BadParameter(str(refused), ctx=ctx, param=param) from None


def _as_path(check: Callable[..., Any]) -> Callable[[Any, Any, Any], Any]:
    """typer's own check of a path (exists, file or folder, readable...: typer._param_types.coerce_cli_path), given
    the Path that pydantic's adapter would have made of the text."""

    def convert(value: Any, param: Any, ctx: Any) -> Any:
        if isinstance(value, str):
            value = Path(value)
        elif not isinstance(value, Path):
            raise typer.BadParameter(f"Input is not a valid path for {Path}", ctx=ctx, param=param)
        return check(value, param.type_descriptor.parameter_info, path_type=Path, param=param, ctx=ctx)

    return convert


def _path_check() -> Optional[Callable[..., Any]]:
    try:
        from typer._param_types import coerce_cli_path
    except ImportError:  # a typer without it converts in its own way
        return None
    return coerce_cli_path


def _conversion(annotation: Any, info: Any) -> Optional[Callable[[Any, Any, Any], Any]]:
    """The conversion of a parameter of this type, or None where typer's own stays."""
    if get_origin(annotation) is list:
        (annotation,) = get_args(annotation) or (None,)
    if any(getattr(info, name, None) is not None for name in ("parser", "min", "max", "path_type")):
        return None
    if annotation is str:
        return _as_text
    if annotation is float:
        return _as_number
    if annotation is bool:
        return _as_flag
    if annotation is Path:
        check = _path_check()
        return _as_path(check) if check is not None else None
    return None


def plain(params: List[Any]) -> List[Any]:
    """The parameters, each of a type above given its own conversion where typer would build a pydantic adapter
    (a parameter of typer 0.29 with no conversion yet: `_runtime_param` None)."""
    for param in params:
        descriptor = getattr(param, "type_descriptor", None)
        if descriptor is None or getattr(param, "_runtime_param", False) is not None:
            continue
        if getattr(descriptor, "file_annotation", None) is not None:
            continue
        one = _conversion(descriptor.annotation, descriptor.parameter_info)
        if one is not None:
            param._runtime_param = _Plain(one)
    return params
