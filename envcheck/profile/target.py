"""Reading [compile-target] (schema.py says what it means): the DSL's compile-target variable, the torches whose
precompile workers compile without a target, the DSL's fallback, the values it accepts and one row per compute
capability. Every value is checked against the others: the fallback and each row's target must be values the DSL
accepts, and a row's target must compile for its own capability."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Optional

from .fields import _Table, _capability, _matching, _specifier, _status
from .rules import RUN, SOURCES, CompileTarget, TargetRow

__all__ = ["compile_target"]

# A target as the DSL names one (its Arch enum, base_dsl/enums.py): "sm_90a", "sm_100f". It reaches a Dockerfile's
# ENV line, a shell's `export` and a cache folder's name, so nothing else is taken.
_target = _matching(r"sm_[0-9]{2,3}[af]?")
_variable = _matching(r"[A-Z_][A-Z0-9_]*")
_TARGET = "a target as the DSL names one, such as 'sm_90a'"


def _basis(value: Any) -> str:
    if value not in (RUN, SOURCES):
        raise ValueError
    return value


def _accepts(value: Any) -> tuple[tuple[str, tuple[int, int]], ...]:
    """A table of target -> the compute capability it compiles for ({sm_90a = '9.0', sm_101a = '11.0'})."""
    if not isinstance(value, dict) or not value:
        raise TypeError
    return tuple((_target(name), _capability(cc)) for name, cc in value.items())


def _row(entry: _Table, accepts: CompileTarget) -> TargetRow:
    row = TargetRow(
        capability=entry.get("capability", _capability, "a compute capability such as '9.0'"),
        target=entry.get("target", _target, _TARGET),
        status=entry.get("status", _status, "'pass', 'warn' or 'fail'"),
        basis=entry.get("basis", _basis, f"'{RUN}' (a recorded run shows it) or '{SOURCES}' (read, not run)"),
        text=entry.text("text"),
        source=entry.text("source", ""),
    )
    if accepts.capability_of(row.target) != row.capability:
        raise entry._error("target", row.target, f"a value of compile-target.accepts that compiles for "
                                                 f"{row.capability[0]}.{row.capability[1]}")
    entry.done()
    return row


def compile_target(top: _Table) -> Optional[CompileTarget]:
    """The profile's [compile-target], or None where it has none (its torch compiles where the GPU is seen)."""
    if "compile-target" not in top.data:
        top.used.add("compile-target")
        return None
    table = top.table("compile-target")
    accepts = CompileTarget(
        variable=table.get("variable", _variable, "an environment variable name such as 'CUTE_DSL_ARCH'"),
        torch=table.get("torch", _specifier, "a torch version specifier such as '>=2.14'"),
        fallback=table.get("fallback", _target, _TARGET),
        accepts=table.get("accepts", _accepts, "a table of target -> compute capability, such as { sm_90a = '9.0' }"),
        gpus=(),
        why=table.text("why", ""),
        source=table.text("source", ""),
    )
    if accepts.capability_of(accepts.fallback) is None:
        raise table._error("fallback", accepts.fallback, "a value of compile-target.accepts")
    rows = [_row(entry, accepts) for entry in table.tables("gpu", [])]
    if len({r.capability for r in rows}) != len(rows):
        raise table._error("gpu", "(a capability twice)", "one [[compile-target.gpu]] row per compute capability",
                           show=False)
    table.done()
    return replace(accepts, gpus=tuple(sorted(rows, key=lambda r: r.capability)))
