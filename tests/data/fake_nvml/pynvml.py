"""A stand-in for nvidia-ml-py's pynvml (see README.md): one NVIDIA H200 on driver 580.159.04 (CUDA 13.0), idle, no
processes. envcheck's own process imports it (PYTHONPATH), never the target; the names are the ones envcheck calls
(envcheck/gather/driver.py, envcheck/bench/watch.py)."""


class NVMLError(Exception):
    pass


class NVMLError_LibraryNotFound(NVMLError):
    pass


class NVMLError_DriverNotLoaded(NVMLError):
    pass


class NVMLError_NoPermission(NVMLError):
    pass


NVML_CLOCK_SM = 1
NVML_TEMPERATURE_GPU = 0


class _Memory:
    total = 150 * 1024 ** 3


class _Utilization:
    gpu = 0
    memory = 0


def nvmlInit():
    pass


def nvmlShutdown():
    pass


def nvmlSystemGetDriverVersion():
    return "580.159.04"


def nvmlSystemGetCudaDriverVersion():
    return 13000


def nvmlDeviceGetCount():
    return 1


def nvmlDeviceGetHandleByIndex(index):
    return index


def nvmlDeviceGetName(handle):
    return "NVIDIA H200"


def nvmlDeviceGetCudaComputeCapability(handle):
    return 9, 0


def nvmlDeviceGetMemoryInfo(handle):
    return _Memory()


def nvmlDeviceGetMigMode(handle):
    return 0, 0


def nvmlDeviceGetUUID(handle):
    return "GPU-00000000-0000-0000-0000-000000000000"


def nvmlDeviceGetClockInfo(handle, kind):
    return 1980


def nvmlDeviceGetComputeRunningProcesses(handle):
    return []


def nvmlDeviceGetCurrentClocksThrottleReasons(handle):
    return 0


def nvmlDeviceGetPowerUsage(handle):
    return 100000


def nvmlDeviceGetTemperature(handle, kind):
    return 40


def nvmlDeviceGetUtilizationRates(handle):
    return _Utilization()
