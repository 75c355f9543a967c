"""The simulated device: a clock that GEMMs, flushes and the sleep kernel advance; events read it."""

import os

CYCLES_PER_MS = 1980000.0
_clock = [0.0]


def advance(ms):
    _clock[0] += ms


def is_available():
    return os.environ.get("FAKE_NO_CUDA") != "1"  # FAKE_NO_CUDA=1: a CUDA build of torch that sees no device


class _Props:
    name, major, minor, multi_processor_count = "NVIDIA H200", 9, 0, 132
    uuid = "3b8b9a5c-1d2e-4f60-a1b2-c3d4e5f60718"
    if os.environ.get("FAKE_CAPABILITY"):  # FAKE_CAPABILITY=8.0: the device reads 8.0, as the H200 was made to (E4)
        major, minor = map(int, os.environ["FAKE_CAPABILITY"].split("."))


def get_device_properties(device=None):
    return _Props()


def get_device_name(device=None):
    return _Props.name


def get_device_capability(device=None):
    return (_Props.major, _Props.minor)


def _sleep(cycles):
    advance(cycles / CYCLES_PER_MS)


def synchronize():
    pass


def empty_cache():
    pass


class Event:
    def __init__(self, enable_timing=False):
        self.at = None

    def record(self):
        self.at = _clock[0]

    def elapsed_time(self, end):
        return end.at - self.at

    def synchronize(self):
        pass

    def query(self):
        return False  # the sleep kernel never ends before the host has queued its batch


def current_stream():
    return "stream"
