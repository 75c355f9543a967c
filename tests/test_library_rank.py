"""library.rank: which of a library's candidate kernels --library times, and what it says about it. The ranking is
nvMatmulHeuristics' (here the fake of tests/data/bench/fake_gpu: estimated runtime falls with the tile's area, each
shape proposed twice); every boundary of the choice: all asked for, the heuristic missing, failing, proposing none
of the kernels, fewer kernels than the count, kernels without a design."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from envcheck.inside import library

FAKE_GPU = Path(__file__).parent / "data" / "bench" / "fake_gpu"


def kernels(*tiles):
    return [library.LibraryKernel("k%dx%d" % tile[:2] if tile else "nodesign", None, None,
                                  key=(tile + (32, 1, 1)) if tile else None) for tile in tiles]


@pytest.fixture
def fake_heuristics(monkeypatch):
    monkeypatch.delitem(sys.modules, "nvMatmulHeuristics", raising=False)
    monkeypatch.syspath_prepend(str(FAKE_GPU))
    monkeypatch.delenv("FAKE_NO_HEURISTICS", raising=False)
    yield monkeypatch
    sys.modules.pop("nvMatmulHeuristics", None)


def names(chosen):
    return [k.name for k in chosen[0]]


def test_the_best_count_in_the_heuristics_order_each_once(fake_heuristics):
    offered = kernels((64, 64), (128, 256), (64, 128), (128, 128), (32, 32))
    chosen = library.rank(offered, 4096, 4096, 4096, "bfloat16", 3)
    assert names(chosen) == ["k128x256", "k128x128", "k64x128"]
    assert chosen[1] == "nvMatmulHeuristics' top 3 of 5 candidates"


@pytest.mark.parametrize("count, expected", [(1, 1), (4, 4), (5, 5), (6, 5), (None, 5)])
def test_count_boundaries(fake_heuristics, count, expected):
    offered = kernels((64, 64), (128, 256), (64, 128), (128, 128), (32, 32))
    chosen, how = library.rank(offered, 16, 4096, 4096, "bfloat16", count)
    assert len(chosen) == expected
    if count is None:  # --all-candidates: the library's own order, untouched
        assert chosen == offered and how == "every candidate (5), as asked"
    else:
        assert how == "nvMatmulHeuristics' top %d of 5 candidates" % expected


def test_not_installed_times_every_candidate_and_says_why(fake_heuristics):
    fake_heuristics.setenv("FAKE_NO_HEURISTICS", "1")
    offered = kernels((64, 64), (128, 256))
    assert library.rank(offered, 64, 64, 64, "bfloat16", 1) == (offered, "every candidate (2): nvMatmulHeuristics is not installed")


def test_a_failing_heuristic_times_every_candidate_and_names_the_error(fake_heuristics):
    import nvMatmulHeuristics

    def broken(*args, **kwargs):
        raise RuntimeError("no discovery set for TST")

    fake_heuristics.setattr(nvMatmulHeuristics.NvMatmulHeuristicsInterfaceEx, "getEx", broken)
    offered = kernels((64, 64))
    assert library.rank(offered, 64, 64, 64, "bfloat16", 5) == (
        offered, "every candidate (1): nvMatmulHeuristics failed (RuntimeError: no discovery set for TST)")


def test_kernels_it_does_not_propose_or_without_a_design_are_not_ranked(fake_heuristics):
    offered = kernels((96, 96), ())  # a shape the model has no entry for, a kernel without metadata.design
    assert library.rank(offered, 64, 64, 64, "bfloat16", 5) == (
        offered, "every candidate (2): nvMatmulHeuristics proposed none of them")
    blind = kernels((), ())
    assert library.rank(blind, 64, 64, 64, "bfloat16", 5) == (
        blind, "every candidate (2): none names its tile and cluster shape")
    mixed = kernels((96, 96), (64, 64), ())
    assert library.rank(mixed, 64, 64, 64, "bfloat16", 5) == ([mixed[1]], "nvMatmulHeuristics' top 1 of 3 candidates")


@pytest.mark.parametrize("width", [4, 5])
def test_the_key_has_tile_k_only_where_the_library_does(fake_heuristics, width):
    # cutlass_api (torch 2.11) matches on the tile's k too; cutlass.operators (2.14) does not
    key = (128, 128, 32, 1, 1) if width == 5 else (128, 128, 1, 1)
    assert library.heuristic_order([key], 64, 64, 64, "bfloat16")[0][0] == key
