import contextlib
import sys

max_autotune = False
max_autotune_gemm_backends = "ATEN,TRITON"
fx_graph_cache = True
autotune_local_cache = True


@contextlib.contextmanager
def patch(settings):
    module = sys.modules[__name__]
    saved = {k: getattr(module, k, None) for k in settings if "." not in k}
    for key, value in settings.items():
        if "." not in key:
            setattr(module, key, value)
    try:
        yield
    finally:
        for key, value in saved.items():
            setattr(module, key, value)
