from . import config, graph  # noqa: F401
