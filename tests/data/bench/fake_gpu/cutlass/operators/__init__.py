"""A stand-in for nvidia-cutlass-operators (see ../../README.md), called as envcheck's library adapter and torch >= 2.14
call it: GemmArguments, get_operators(args, target_sm), op.compile(args, target_sm), op.run(args, artifact, ...). The
target is checked the way the real package checks it, by TargetSm in arch.py (tests/test_child_environment.py runs the
real arch.py of the 0.3.0 wheel in its place); the operators run at simulated rates."""

from .arch import TargetSm

OPERATORS = (("cutedsl.Sm80TensorOpGemmOperator_fake_tile128x128x32", 80, 342.0),
             ("cutedsl.Sm90StaticPersistentGemmOperator_fake_tile128x128x64", 90, 503.0))


class GemmArguments:
    def __init__(self, a, b, out, accumulator_type=None):
        self.a, self.b, self.out = a, b, out


class _Metadata:
    def __init__(self, name):
        self.operator_name = name


class _Operator:
    def __init__(self, name, tflops):
        self.metadata, self.tflops = _Metadata(name), tflops

    def compile(self, args, target_sm=None):
        return ("compiled", self.metadata.operator_name, str(TargetSm(target_sm)))

    def run(self, args, compiled, stream=None, assume_supported_args=False):
        import torch

        args.out.value = torch.gemm_time(args.a, args.b, self.tflops)


def get_operators(args, target_sm=None):
    """The operators for the target: the Sm80 one everywhere from sm80 on, the Sm90 one on 90a alone."""
    target = TargetSm(target_sm)
    return [_Operator(name, rate) for name, cc, rate in OPERATORS
            if (cc == 80 and target.cc >= 80) or str(target) == "%da" % cc]
