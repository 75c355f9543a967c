class GraphLowering:
    save_output_code = None
