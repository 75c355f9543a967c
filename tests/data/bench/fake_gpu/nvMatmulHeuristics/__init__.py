"""A stand-in for nvidia-matmul-heuristics 0.1.0.27 (see ../README.md): the part of its Python API that Inductor and
envcheck's library.rank call, with a made-up performance model: the estimated runtime falls with the tile's area
(bigger tiles first), so the ranking differs from the library's own order; for B column-major (TN_ROW_MAJOR:
nn.Linear's weight) a tile wider in N than in M is estimated 1.5x slower, so the order depends on the layout asked. Like the real one, it proposes each
tile and cluster shape more than once (one per stage count) and asks the validity callback about each.
FAKE_NO_HEURISTICS=1: not installed (the import fails)."""

import os
from enum import Enum

if os.environ.get("FAKE_NO_HEURISTICS") == "1":
    raise ImportError("No module named 'nvMatmulHeuristics' (FAKE_NO_HEURISTICS=1)")

TILES = ((256, 256, 32), (128, 256, 32), (256, 128, 32), (128, 128, 32), (64, 128, 32), (128, 64, 32),
         (64, 64, 32), (32, 32, 32), (512, 64, 32))  # the last is offered by no kernel: the callback refuses it


class NvMatmulHeuristicsTarget(Enum):
    GENERIC = 0
    CUTLASS3 = 4


class NvMatmulHeuristicsFlags(Enum):
    NONE = 0
    PERF_MODEL_BASED_AUTO_TUNING = 1 << 3


class NvMatmulHeuristicsNvidiaGpu(Enum):
    H100_SXM = 9000
    H200_SXM = 9003


class NvMatmulHeuristicsMatmulLayout(Enum):
    NN_ROW_MAJOR = 0
    NT_ROW_MAJOR = 1
    TN_ROW_MAJOR = 2
    TT_ROW_MAJOR = 3


class NvMatmulHeuristicsBackendPropertyCallbackKind(Enum):
    KERNEL_ADDITIONAL_VALIDITY_CHECK = 0


class _Config(object):
    def __init__(self, tile, stages):
        self.cta_tile_m, self.cta_tile_n, self.cta_tile_k = tile
        self.cluster_m, self.cluster_n = 1, 1
        self.stages, self.split_k = stages, 1
        self.cta, self.cluster = list(tile), [1, 1, 1]


class _Pointer(object):
    def __init__(self, contents):
        self.contents = contents


class _Problem(object):
    def __init__(self, m, n, k, layout, batch_size):
        self.m, self.n, self.k, self.matmulLayout, self.batch_size = m, n, k, layout, batch_size


class NvMatmulHeuristicsInterfaceEx(object):
    def __init__(self, backend=NvMatmulHeuristicsTarget.GENERIC, path=None, flags=NvMatmulHeuristicsFlags.NONE,
                 load_discovery_implicitly=True, gpu=None):
        self.backends = {}

    def createBackend(self, target):
        backend = object()
        self.backends[id(backend)] = None
        return backend

    def destroyBackend(self, backend):
        self.backends.pop(id(backend), None)

    def setBackendCallbackProperty(self, backend, kind, callback):
        self.backends[id(backend)] = callback

    def loadInternalDiscoverySet(self, matmulLayout, precision=None):
        return True

    def makeNvMatmulHeuristicsProblem(self, m, n, k, matmulLayout, batch_size=1):
        return _Problem(m, n, k, matmulLayout, batch_size)

    def getEx(self, problem, count, backend, precision=None):
        valid = self.backends.get(id(backend))
        found = []
        for tile in TILES:
            for stages in (3, 4):
                config = _Config(tile, stages)
                if valid is not None and not valid(_Pointer(config), _Pointer(problem)):
                    continue
                runtime = 2.0 * problem.m * problem.n * problem.k / (tile[0] * tile[1]) * 1e-12 * (1 + 0.01 * stages)
                if problem.matmulLayout is NvMatmulHeuristicsMatmulLayout.TN_ROW_MAJOR and tile[1] > tile[0]:
                    runtime *= 1.5  # B column-major (nn.Linear's weight): a tile wider in N than in M loads it worse
                found.append({"kernel": config, "runtime": runtime})
        found.sort(key=lambda entry: entry["runtime"])
        return found[:count]
