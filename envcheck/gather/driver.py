"""Facts about the NVIDIA driver and every GPU, through NVML (nvidia-ml-py). No CUDA context is created."""

from __future__ import annotations

import sys
from typing import Optional

from ..model import Driver, Gpu

__all__ = ["gather_driver", "NvmlUnavailable"]


class NvmlUnavailable(RuntimeError):
    """NVML could not be used: no driver library, no device node, or an error from NVML itself."""


def _nvml_loadable() -> bool:
    """Whether the NVML library can be loaded at all: the same dlopen pynvml's nvmlInit makes first. Asked before
    importing pynvml (a large module) so that a machine without a driver is told so at once."""
    import ctypes

    try:
        ctypes.CDLL("libnvidia-ml.so.1")
    except OSError:
        return False
    return True


def gather_driver() -> Driver:
    if sys.platform.startswith("linux") and not _nvml_loadable():
        raise NvmlUnavailable("NVML library not found (libnvidia-ml.so.1): no NVIDIA driver is installed here")
    try:
        import pynvml
    except ImportError:
        raise NvmlUnavailable("nvidia-ml-py is not installed, so NVML cannot be asked") from None
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError_LibraryNotFound:
        raise NvmlUnavailable("NVML library not found (libnvidia-ml.so.1): no NVIDIA driver is installed here") from None
    except pynvml.NVMLError_DriverNotLoaded:
        raise NvmlUnavailable("the NVIDIA driver is installed but not loaded (no kernel module)") from None
    except pynvml.NVMLError_NoPermission:
        raise NvmlUnavailable("no permission to use the NVIDIA driver (/dev/nvidia*)") from None
    except pynvml.NVMLError as exc:
        raise NvmlUnavailable(f"NVML failed to start: {exc}") from None
    try:
        version = _text(pynvml.nvmlSystemGetDriverVersion())
        cuda = pynvml.nvmlSystemGetCudaDriverVersion()  # 1000*major + 10*minor
        gpus = tuple(_gpu(pynvml, i) for i in range(pynvml.nvmlDeviceGetCount()))
        return Driver(version=version, cuda=f"{cuda // 1000}.{cuda % 1000 // 10}", gpus=gpus)
    finally:
        try:
            pynvml.nvmlShutdown()
        except pynvml.NVMLError:
            pass


def _gpu(pynvml, index: int) -> Gpu:
    handle = pynvml.nvmlDeviceGetHandleByIndex(index)
    major, minor = pynvml.nvmlDeviceGetCudaComputeCapability(handle)
    try:
        memory = int(pynvml.nvmlDeviceGetMemoryInfo(handle).total)
    except pynvml.NVMLError:
        memory = None
    try:
        current, _pending = pynvml.nvmlDeviceGetMigMode(handle)
        mig = bool(current)
    except pynvml.NVMLError:
        mig = None  # not supported on this GPU
    try:
        uuid: Optional[str] = _text(pynvml.nvmlDeviceGetUUID(handle))
    except pynvml.NVMLError:
        uuid = None
    return Gpu(index=index, name=_text(pynvml.nvmlDeviceGetName(handle)), capability=(major, minor), memory_bytes=memory, mig=mig, uuid=uuid)


def _text(value) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
