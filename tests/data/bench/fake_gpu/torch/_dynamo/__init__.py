from . import utils  # noqa: F401


def reset():
    pass
