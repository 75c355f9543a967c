"""The two kinds of GEMM a language model runs, told apart by M (the tokens in the batch): decode (M up to the
largest decode size of shapes.toml, 64) and prefill (larger M). Where a backend wins differs between them, and a
serving process often runs only one (a decode worker, a prefill worker)."""

from __future__ import annotations

from .data import llm_sizes
from .shapes import Shape

__all__ = ["CLASSES", "DECODE_MAX_M", "shape_class", "condition", "describe"]

CLASSES = ("decode", "prefill")
DECODE_MAX_M = max(llm_sizes()[0])


def shape_class(shape: Shape) -> str:
    return "decode" if shape.m <= DECODE_MAX_M else "prefill"


def condition(name: str) -> str:
    """"M <= 64" for decode, "M > 64" for prefill."""
    return f"M {'<=' if name == 'decode' else '>'} {DECODE_MAX_M}"


def describe(name: str) -> str:
    """"decode (M <= 64)", "prefill (M > 64)"."""
    return f"{name} ({condition(name)})"
