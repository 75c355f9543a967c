"""Reading [compile-target] (schema.py says what it means): the DSL's compile-target variable, the torches whose
precompile workers compile without a target, the DSL's fallback, the values it accepts and one row per compute
capability; where torch says from how many NVGEMM choices it sends a GEMM to the workers, one row per torch range of
that threshold and the choices seen, and the settings that raise the choices. Every value is checked against the
others: the fallback and each row's target must be values the DSL accepts, and a row's target must compile for its
own capability."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any, Optional

from .fields import _Table, _capability, _matching, _specifier, _status
from .rules import RUN, SOURCES
from .targetrules import CompileTarget, MoreChoices, TargetRow, TorchChoices

__all__ = ["compile_target"]

# A target as the DSL names one (its Arch enum, base_dsl/enums.py): "sm_90a", "sm_100f". It reaches a Dockerfile's
# ENV line, a shell's `export` and a cache folder's name, so nothing else is taken.
_target = _matching(r"sm_[0-9]{2,3}[af]?")
_variable = _matching(r"[A-Z_][A-Z0-9_]*")
_TARGET = "a target as the DSL names one, such as 'sm_90a'"
# A file in torch's package folder (the probe reads it as text) and the name one of its lines assigns a number to.
_torch_file = _matching(r"[A-Za-z0-9_]+(/[A-Za-z0-9_]+)*\.py")
_name = _matching(r"[A-Za-z_][A-Za-z0-9_]*")


def _basis(value: Any) -> str:
    if value not in (RUN, SOURCES):
        raise ValueError
    return value


def _accepts(value: Any) -> tuple[tuple[str, tuple[int, int]], ...]:
    """A table of target -> the compute capability it compiles for ({sm_90a = '9.0', sm_101a = '11.0'})."""
    if not isinstance(value, dict) or not value:
        raise TypeError
    return tuple((_target(name), _capability(cc)) for name, cc in value.items())


def _count(value: Any) -> int:
    """A whole number of choices, 0 or more."""
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ValueError
    return value


def _choices(value: Any) -> tuple[tuple[tuple[int, int], int], ...]:
    """A table of compute capability -> the most choices one GEMM got there ({ "9.0" = 5 })."""
    if not isinstance(value, dict) or not value:
        raise TypeError
    return tuple(sorted((_capability(cc), _count(count)) for cc, count in value.items()))


def _words(value: Any) -> tuple[str, ...]:
    """Values of a variable, compared in lower case: plain words ("1", "all")."""
    if not isinstance(value, list) or not all(isinstance(v, str) and re.fullmatch(r"[A-Za-z0-9_.-]+", v) for v in value):
        raise TypeError
    return tuple(v.lower() for v in value)


def _by_torch(entry: _Table) -> TorchChoices:
    row = TorchChoices(
        torch=entry.get("torch", _specifier, "a torch version specifier such as '>=2.15,<2.16'"),
        threshold=entry.get("threshold", _count, "a whole number of choices, 0 or more"),
        choices=entry.get("choices", _choices, "a table of compute capability -> the most NVGEMM choices one GEMM got "
                                               "there, such as { \"9.0\" = 5 }"),
        basis=entry.get("basis", _basis, f"'{RUN}' (a recorded run shows it) or '{SOURCES}' (read, not run)"),
        text=entry.text("text"),
        source=entry.text("source", ""),
    )
    entry.done()
    return row


def _more_choices(entry: _Table) -> MoreChoices:
    row = MoreChoices(
        variable=entry.get("variable", _variable, "an environment variable name such as "
                                                  "'TORCHINDUCTOR_NVGEMM_SUPPLEMENT_CONFIGS'"),
        values=entry.get("values", _words, "a list of the values that raise the choices, such as [\"1\"]"),
        above=entry.get("above", _count, "a whole number: a value above it raises the choices", None),
        text=entry.text("text"),
        source=entry.text("source", ""),
    )
    entry.done()
    return row


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
        threshold_file=table.get("threshold-file", _torch_file, "a file in torch's package folder such as "
                                                                "'_inductor/select_algorithm.py'", ""),
        threshold_name=table.get("threshold-name", _name, "a Python name such as "
                                                          "'_NVGEMM_SUBPROCESS_PRECOMPILE_THRESHOLD'", ""),
        by_torch=tuple(_by_torch(entry) for entry in table.tables("by-torch", [])),
        more_choices=tuple(_more_choices(entry) for entry in table.tables("more-choices", [])),
    )
    if bool(accepts.threshold_file) != bool(accepts.threshold_name):
        raise table._error("threshold-name" if accepts.threshold_file else "threshold-file", "(missing)",
                           "threshold-file and threshold-name both, or neither", show=False)
    if len({m.variable for m in accepts.more_choices}) != len(accepts.more_choices):
        raise table._error("more-choices", "(a variable twice)", "one [[compile-target.more-choices]] row per "
                           "variable", show=False)
    if accepts.capability_of(accepts.fallback) is None:
        raise table._error("fallback", accepts.fallback, "a value of compile-target.accepts")
    rows = [_row(entry, accepts) for entry in table.tables("gpu", [])]
    if len({r.capability for r in rows}) != len(rows):
        raise table._error("gpu", "(a capability twice)", "one [[compile-target.gpu]] row per compute capability",
                           show=False)
    table.done()
    return replace(accepts, gpus=tuple(sorted(rows, key=lambda r: r.capability)))
