"""`plain`: the one way a model value becomes JSON."""

from __future__ import annotations

import dataclasses
import enum
from typing import Any

__all__ = ["plain"]


def plain(value: Any) -> Any:
    """Dataclasses, enums and tuples as JSON-ready values: the one way a model value becomes JSON."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        data = {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
        for name in ("automatic",):
            if hasattr(type(value), name):
                data[name] = getattr(value, name)
        return data
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    return value
