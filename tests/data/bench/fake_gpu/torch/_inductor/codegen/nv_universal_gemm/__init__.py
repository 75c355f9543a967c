from . import kernel_cache  # noqa: F401
