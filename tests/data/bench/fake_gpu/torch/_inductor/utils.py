def run_and_get_code(fn, *args):
    """(fn's result, [the code Inductor generated meanwhile]), caught where the real one catches it."""
    from .graph import GraphLowering

    codes, saved = [], GraphLowering.save_output_code
    GraphLowering.save_output_code = codes.append
    try:
        return fn(*args), codes
    finally:
        GraphLowering.save_output_code = saved
