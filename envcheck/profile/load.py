"""Reading a profile: a file (or a built-in id), the profiles it `extends`, merged and built into a Policy.

A profile stands on at most _MAX_EXTENDS others; every file read is checked before merging (no array of more than
MAX_ENTRIES entries, no tables nested deeper than a profile's) and every file `extends` reaches must be an envcheck
profile. The built-in profiles (builtin/*.toml, plain files in the wheel) are read once per process.
"""

from __future__ import annotations

import functools
from pathlib import Path
from types import MappingProxyType
from typing import Any, Mapping, Optional

from ..userfile import parse_toml, read_toml
from .build import build
from .merge import merge
from .origins import _BUILTIN, PolicyError, _Origins
from .schema import Policy

__all__ = ["MAX_ENTRIES", "builtin_profiles", "load", "load_builtin"]

MAX_ENTRIES = 1000  # in any one array of a profile: the built-in ones hold a dozen; merging stays linear anyway
_MAX_DEPTH = 8  # tables in tables: a profile has three levels
_MAX_EXTENDS = 8
# The keys a profile's top level may hold: a file `extends` reaches with any other key is not a profile.
_TOP_KEYS = frozenset({"schema", "extends", "id", "title", "backend", "link", "python", "torch", "cuda", "cutedsl",
                       "cutlass", "packages", "conflicts", "stand-ins", "gpu", "gpu-below", "inductor", "smoke",
                       "mixed-cuda-exempt", "caveats", "gemm-ops", "compile-target"})


@functools.lru_cache(maxsize=1)
def builtin_profiles() -> Mapping[str, str]:
    """Built-in profile ids and their TOML text, read once."""
    folder = Path(__file__).parent / "builtin"  # a plain directory in the wheel; importlib.resources costs start-up
    return MappingProxyType({p.stem: p.read_text(encoding="utf-8") for p in sorted(folder.glob("*.toml"))})


def load(path: Path) -> Policy:
    """A profile file, or a built-in profile id."""
    if not Path(path).exists() and str(path) in builtin_profiles():
        return load_builtin(str(path))
    return build(*_read(_read_toml(Path(path)), str(path), Path(path).parent))


@functools.lru_cache(maxsize=None)  # a Policy is frozen: each built-in profile is read and built once
def load_builtin(profile_id: str) -> Policy:
    """A built-in profile by its id."""
    profiles = builtin_profiles()
    if profile_id not in profiles:
        raise PolicyError("--profile", "extends", profile_id, f"a file or one of the built-in profiles {sorted(profiles)}")
    source = _BUILTIN + profile_id
    return build(*_read(parse_toml(profiles[profile_id], source), source, None))


def _read_toml(path: Path) -> dict:
    return read_toml(path, f"profile file {path}")


def _read(data: dict, source: str, folder: Optional[Path]) -> tuple[dict, _Origins]:
    """A profile merged over the ones it extends (tables key by key, arrays of tables entry by entry, everything
    else replaced), with the file that set each value."""
    merged: dict = {}
    where: dict = {}
    layers = _layers(data, source, folder)
    for layer_source, layer in layers:
        merged = merge(merged, layer, layer_source, where)
    builtins = tuple(name[len(_BUILTIN):] for name, _ in layers if name.startswith(_BUILTIN))
    return merged, _Origins(source, where, builtins)


def _layers(data: dict, source: str, folder: Optional[Path], depth: int = 0) -> list[tuple[str, dict]]:
    """The profiles `data` stands on, the first base first and `data` last, each with its source. A file that
    `extends` names must be an envcheck profile: one with other keys is refused without a word of its contents."""
    _check_shape(data, source)
    data = dict(data)
    base_name = data.pop("extends", None)
    if base_name is None:
        return [(source, data)]
    show = depth == 0 or source.startswith(_BUILTIN)
    if not isinstance(base_name, str) or depth >= _MAX_EXTENDS:
        raise PolicyError(source, "extends", base_name, "a built-in profile id or a path to a profile, without cycles",
                          show)
    profiles = builtin_profiles()
    if base_name in profiles:
        base_source = _BUILTIN + base_name
        return _layers(parse_toml(profiles[base_name], base_source), base_source, None, depth + 1) + [(source, data)]
    try:
        base_path = (folder / base_name).resolve() if folder is not None else None
    except (OSError, RuntimeError):  # a symbolic link loop: RuntimeError before Python 3.13, OSError since
        raise PolicyError(source, "extends", base_name, "a profile file, not a symbolic link that loops", show) from None
    if base_path is None or not base_path.is_file():
        raise PolicyError(source, "extends", base_name, f"a file or one of the built-in profiles {sorted(profiles)}",
                          show)
    base = _read_toml(base_path)
    if not set(base) <= _TOP_KEYS:
        named = f"{base_path}, which is" if show else "a file that is"
        raise PolicyError(source, "extends", base_name, f"a built-in profile id or a profile file; it names {named} "
                          "not an envcheck profile (it holds keys a profile does not have; its contents are not shown)",
                          show)
    return _layers(base, str(base_path), base_path.parent, depth + 1) + [(source, data)]


def _check_shape(data: dict, source: str) -> None:
    """No array longer than MAX_ENTRIES, no tables nested deeper than a profile's: checked before any merging, which
    then cannot take long or recurse without end."""
    stack: list[tuple[str, Any, int]] = [("", data, 0)]
    while stack:
        path, value, depth = stack.pop()
        if depth > _MAX_DEPTH:
            raise PolicyError(source, path, value, f"tables nested at most {_MAX_DEPTH} deep", show=False)
        if isinstance(value, list):
            if len(value) > MAX_ENTRIES:
                raise PolicyError(source, path, value, f"at most {MAX_ENTRIES} entries ([[...]] tables or items)")
            items = ((f"{path}[{i}]", item) for i, item in enumerate(value))
        else:  # a table: only tables and arrays are ever on the stack
            items = ((f"{path}.{k}" if path else k, item) for k, item in value.items())
        stack.extend((at, item, depth + 1) for at, item in items if isinstance(item, (dict, list)))
