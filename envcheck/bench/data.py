"""The data bench reads: the GPUs' dense peaks (peaks.toml) and the named shape sets (shapes.toml), each with its
source. Read once, validated, frozen."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from importlib import resources
from typing import Optional

from ..userfile import tomllib

__all__ = ["Peak", "Model", "peaks", "peak_for", "models", "llm_sizes", "square_sizes", "DTYPES"]

DTYPES = ("bfloat16", "float16")  # what a bench run times
PEAK_DTYPES = DTYPES + ("float8_e4m3fn",)  # peaks.toml's figures: those and fp8's (a model's _scaled_mm GEMMs)


@dataclass(frozen=True)
class Peak:
    """One GPU's dense tensor-core peak per dtype, in TFLOP/s, and where the figure comes from."""

    name: str
    match: str
    tflops: tuple[tuple[str, float], ...]
    source: str

    def for_dtype(self, dtype: str) -> Optional[float]:
        return dict(self.tflops).get(dtype)


@dataclass(frozen=True)
class Model:
    """A public model whose layer GEMMs bench measures: N and K come from its config.json (source)."""

    name: str
    hidden: int
    intermediate: int
    source: str


def _load(name: str) -> dict:
    return tomllib.loads(resources.files("envcheck.bench").joinpath(name).read_text(encoding="utf-8"))


@functools.lru_cache(maxsize=None)
def peaks() -> tuple[Peak, ...]:
    found = []
    for entry in _load("peaks.toml")["gpu"]:
        rates = tuple((dtype, float(entry[dtype])) for dtype in PEAK_DTYPES if dtype in entry)
        found.append(Peak(entry["name"], entry["match"], rates, entry["source"]))
    return tuple(found)


def peak_for(gpu_name: str) -> Optional[Peak]:
    """The first entry of peaks.toml whose pattern is found in the GPU's name (case-insensitive), or None."""
    for entry in peaks():
        if re.search(entry.match, gpu_name, re.IGNORECASE):
            return entry
    return None


@functools.lru_cache(maxsize=None)
def _shapes() -> dict:
    return _load("shapes.toml")


def models() -> tuple[Model, ...]:
    return tuple(Model(m["name"], int(m["hidden"]), int(m["intermediate"]), m["source"]) for m in _shapes()["llm"]["model"])


def llm_sizes() -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(decode Ms, prefill Ms)."""
    llm = _shapes()["llm"]
    return tuple(llm["decode"]), tuple(llm["prefill"])


def square_sizes() -> tuple[int, ...]:
    return tuple(_shapes()["square"]["sizes"])
