"""Known failures, shared by smoke, bench and explain.

  signatures.toml  the table: each known failure as it shows in output, in priority order
  table.py         that table read once, validated
  explanations.py  what each signature means for a target: a sentence and a remedy built from the profile
  stack.py         the same for the operators stack's failures (torch >= 2.14, cutlass.operators, the DSL's
                   flavours, tvm-ffi, the driver); explanations.py adds them to its table
  upstream.py      the same for the environment messages read from the upstream sources (torch 2.11-2.15's NVGEMM
                   path, cutlass.operators 0.1-0.3, the DSL 4.3-4.8.1: tests/data/upstream-messages.toml holds them)
  gemmops.py       the same for an aten op NVGEMM has no kernel for on a stack (the profile's [[gemm-ops]])
  remedies.py      remedies and versions more than one explanation names
  context.py       what is known of the target (Context), how a child run ended (Evidence), the outcome (Cause)
  logstack.py      what a log says of the stack that wrote it (its torch, frames, kernel library, DSL, interpreter)
  child.py         why a child run failed (diagnose), the op a compile stopped on (lowering_target, failed_op), and what is known
                   before one starts (preflight)

The modules of this package import each other directly, never this __init__, which re-exports what the rest of
envcheck uses.
"""

from .child import diagnose, failed_op, lowering_target, preflight
from .context import Cause, Context, Evidence, OpFailure, context_for_log, context_from
from .explanations import SIGNATURES, explain_match

__all__ = ["Cause", "Context", "Evidence", "OpFailure", "context_for_log", "context_from", "diagnose", "failed_op",
           "lowering_target", "preflight", "explain_match", "SIGNATURES"]
