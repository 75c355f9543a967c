"""TOML out: the standard library reads TOML but does not write it; tomli-w writes it, behind a header comment."""

from __future__ import annotations

from typing import Any, Mapping

__all__ = ["to_toml"]


def _without_none(value: Any) -> Any:
    """TOML has no null: keys whose value is None are left out, at every depth."""
    if isinstance(value, Mapping):
        return {k: _without_none(v) for k, v in value.items() if v is not None}
    if isinstance(value, (list, tuple)):
        return [_without_none(v) for v in value]
    return value


def to_toml(data: Mapping[str, Any], header: str = "") -> str:
    import tomli_w

    comment = "".join(f"# {line}\n" if line else "#\n" for line in header.splitlines())
    return comment + tomli_w.dumps(_without_none(data))
