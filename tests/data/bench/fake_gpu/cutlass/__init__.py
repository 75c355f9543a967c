"""A stand-in for CuTeDSL's `cutlass`: the smoke child imports it first."""
