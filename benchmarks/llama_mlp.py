"""The H200 reference workload (../shared/h200/2026-12-01-s4/model.py) in the form `envcheck bench --model` takes:
a Llama-3.1-8B MLP block (4096 -> 14336 twice, SiLU gate, 14336 -> 4096) of nn.Linear layers, bf16, and its input
of M tokens. One function per M of the reference's table:

    envcheck bench --model benchmarks/llama_mlp.py             # model(): M = 2048
    envcheck bench --model benchmarks/llama_mlp.py:decode      # M = 16
    envcheck bench --model benchmarks/llama_mlp.py:prefill_8192

envcheck calls the function under `with torch.device(...)`: the device the model runs on (CUDA, or the CPU where
there is no GPU; the meta device with --record-on meta) to record its GEMMs, CUDA to time the module; so nothing
here names a device."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class MLP(nn.Module):
    def __init__(self, d=4096, h=14336):
        super().__init__()
        self.g = nn.Linear(d, h, bias=False)
        self.u = nn.Linear(d, h, bias=False)
        self.d = nn.Linear(h, d, bias=False)

    def forward(self, x):
        return self.d(F.silu(self.g(x)) * self.u(x))


def _block(m):
    torch.manual_seed(0)
    return MLP().to(torch.bfloat16).eval(), torch.randn(m, 4096, dtype=torch.bfloat16)


def model():
    return _block(2048)


def decode():
    return _block(16)


def prefill_8192():
    return _block(8192)
