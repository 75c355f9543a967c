"""The README and `envcheck --help` as the tests read them: the commands each one lists."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"


def readme_commands(text: str = "") -> set[str]:
    """The commands the README's table under "## Commands" names (`envcheck lock` / `envcheck verify --lock FILE`:
    lock and verify)."""
    text = text or README.read_text(encoding="utf-8")
    section = text.split("\n## Commands\n", 1)[1].split("\n#", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `envcheck ")]
    return {name for row in rows for name in re.findall(r"`envcheck ([a-z][a-z-]*)", row.split(" | ")[0])}


def help_commands(text: str) -> set[str]:
    """The commands `envcheck --help` lists (its Commands panel in rich mode, or click's plain `Commands:` list)."""
    listed = text.split("Commands", 1)[1]
    return set(re.findall(r"^[│ ]\s+([a-z][a-z-]*)\s{2,}\S", listed, flags=re.M))
