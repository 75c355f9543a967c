"""Which file set each value of a merged profile, and what an error about a value may show of it (PolicyError).

A profile can stand on others (`extends`): an error names the file that set the bad value, and shows the value only
from the file the user named or a built-in profile; a file `extends` reached may be anything on the machine (a
credentials file), so its values are never echoed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import UsageError
from ..redact import Redactor, credential_name, redact_url

__all__ = ["PolicyError"]

_BUILTIN = "built-in profile "  # the source of a built-in profile's values, in messages and `origins`
_MISSING = object()  # a key that is not there
_SHOWN_CHARS = 200  # of a bad value, in an error message


class PolicyError(UsageError):
    """A profile that cannot be used: names the file, the key and what was expected.

    The value itself is shown only where it is safe to: a single value (never a table or an array) of the file the
    user named (--policy, their pyproject.toml) or of a built-in profile, with a credential-like key masked and
    secrets in it redacted (show=False: only its type). A file that `extends` reaches may be anything on the machine
    (a credentials file): its values are never echoed."""

    def __init__(self, source: str, key: str, value: Any, expected: str, show: bool = True):
        self.source, self.key, self.value, self.expected = source, key, value, expected
        key_shown = key if len(key) <= _SHOWN_CHARS else f"{key[:_SHOWN_CHARS]}..."
        shown = _shown(value, show and not credential_name(key.rpartition(".")[2]))
        super().__init__(f"{source}: key '{key_shown}' = {shown}: expected {expected}")


def _shown(value: Any, show: bool = True) -> str:
    """A value as an error message shows it: its repr with secrets redacted and cut short, or (a table, an array, a
    value not to be shown) only its type, in parentheses like '(missing)'."""
    if value is _MISSING:
        return "(missing)"
    if not show or isinstance(value, (dict, list, tuple)):
        return f"({_kind(value)})"
    text = Redactor(paths=False)(repr(redact_url(value) if isinstance(value, str) else value))
    return text if len(text) <= _SHOWN_CHARS else f"{text[:_SHOWN_CHARS]}... ({len(text)} characters)"


def _kind(value: Any) -> str:
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, (list, tuple)):
        return f"an array of {len(value)} item{'s' if len(value) != 1 else ''}"
    kinds = ((bool, "a boolean"), (int, "an integer"), (float, "a float"), (str, "a string"))
    return next((name for kind, name in kinds if isinstance(value, kind)), "a date or time")


@dataclass(frozen=True)
class _Origins:
    """Which file set each value of a merged profile (`where`: key -> source), the file the user named, and the
    built-in profiles it stands on (their evidence is its evidence)."""

    named: str
    where: dict
    builtins: tuple[str, ...] = ()

    def of(self, key: str) -> str:
        return self.where.get(key, self.named)

    def shows(self, source: str) -> bool:
        """Whether an error may show a value from `source`: the file the user named, or a built-in profile."""
        return source == self.named or source.startswith(_BUILTIN)
