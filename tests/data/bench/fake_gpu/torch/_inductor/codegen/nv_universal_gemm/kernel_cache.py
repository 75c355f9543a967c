_kernel_by_name_cache = None  # filled by the first generated code that looks a kernel up (or seeded)
