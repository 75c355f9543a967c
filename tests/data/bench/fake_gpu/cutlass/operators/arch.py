"""TargetSm as nvidia-cutlass-operators 0.3.0 has it (cutlass/operators/arch.py:43-97, :194-209, in outline): a
compile target "NNN", "NNNa" or "NNNf"; an `a` target below 90 and an `f` target below 100 are refused with the
real package's messages. The slow test of tests/test_child_environment.py swaps in the wheel's own file."""


class TargetSm:
    def __init__(self, sm_str):
        suffix = sm_str[-1]
        try:
            self.cc, self.portability = (int(sm_str), "") if suffix.isdigit() else (int(sm_str[:-1]), {"a": "a", "f": "f"}[suffix])
        except (ValueError, KeyError):
            raise ValueError("Invalid TargetSm: '%s'. Expected form: '100', '100a', '100f'" % sm_str) from None
        if self.portability == "a" and self.cc < 90:
            raise ValueError("TargetSm %s is invalid. ArchConditional targets must be Hopper (sm90) or newer" % self)
        if self.portability == "f" and self.cc < 100:
            raise ValueError("TargetSm %s is invalid. FamilyPortable targets must be Blackwell (sm100) or newer" % self)

    def __str__(self):
        return "%d%s" % (self.cc, self.portability)
