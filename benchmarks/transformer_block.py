"""A transformer block that is not a bias-free MLP, in the form `envcheck bench --model` takes (issue 30): attention
with a fused QKV projection with bias on a 3-D input, scaled_dot_product_attention (a fused kernel on the GPU and on
the CPU: its math decomposition's two batched GEMMs never run there), an output projection with bias, then MoE-like
experts through torch.bmm (the tokens split evenly over 8 experts, each an up and a down projection). bf16.

    envcheck bench --model benchmarks/transformer_block.py              # model(): the whole block, 4 x 512 tokens
    envcheck bench --model benchmarks/transformer_block.py:attention    # attention alone (addmm with bias, SDPA)
    envcheck bench --model benchmarks/transformer_block.py:experts      # the experts alone (bmm, batch 8)
    envcheck bench --model benchmarks/transformer_block.py:fp8          # an fp8 projection (_scaled_mm; GPUs of 8.9+)

What the GPU runs per forward of model() (each GEMM as Inductor sees it, the 3-D input flattened by nn.Linear):
aten.addmm 2048x6144x2048 with bias [6144] (qkv), SDPA's flash-attention kernel, aten.addmm 2048x2048x2048 with bias
[2048] (out), aten.bmm 8x256x4096x2048 (up) and aten.bmm 8x256x2048x4096 (down). tiny() and tiny_fp8(): the same at
toy sizes, for the tests on the CPU.

envcheck calls the function under `with torch.device(...)`: the device the model runs on (CUDA, or the CPU where
there is no GPU; the meta device with --record-on meta), so nothing here names a device."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Attention(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(d, 3 * d, bias=True)
        self.out = nn.Linear(d, d, bias=True)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.out(y.transpose(1, 2).reshape(b, t, d))


class Experts(nn.Module):
    """Tokens split evenly over the experts (a router's even assignment), each expert an up and a down projection
    through torch.bmm on its weights stored [experts, in, out]."""

    def __init__(self, d, hidden, experts):
        super().__init__()
        self.experts = experts
        self.up = nn.Parameter(torch.randn(experts, d, hidden) / d ** 0.5)
        self.down = nn.Parameter(torch.randn(experts, hidden, d) / hidden ** 0.5)

    def forward(self, x):
        b, t, d = x.shape
        tokens = x.reshape(self.experts, b * t // self.experts, d)
        return torch.bmm(F.silu(torch.bmm(tokens, self.up)), self.down).reshape(b, t, d)


class Block(nn.Module):
    def __init__(self, d=2048, heads=16, hidden=4096, experts=8):
        super().__init__()
        self.attention = Attention(d, heads)
        self.experts = Experts(d, hidden, experts)

    def forward(self, x):
        h = x + self.attention(x)
        return h + self.experts(h)


class Fp8Linear(nn.Module):
    """y = x @ W.T in fp8 (e4m3) with per-tensor scales, out in bf16: torch._scaled_mm, as fp8 inference runs it."""

    def __init__(self, d=4096, n=4096):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(n, d).to(torch.float8_e4m3fn), requires_grad=False)
        self.scale = nn.Parameter(torch.ones(()), requires_grad=False)

    def forward(self, x):
        return torch._scaled_mm(x.to(torch.float8_e4m3fn), self.weight.t(), self.scale, self.scale,
                                out_dtype=torch.bfloat16)


def _block(batch, seq, **sizes):
    torch.manual_seed(0)
    block = Block(**sizes).to(torch.bfloat16).eval()
    return block, torch.randn(batch, seq, block.attention.qkv.in_features, dtype=torch.bfloat16)


def model():
    return _block(4, 512)


def attention():
    torch.manual_seed(0)
    return Attention(2048, 16).to(torch.bfloat16).eval(), torch.randn(4, 512, 2048, dtype=torch.bfloat16)


def experts():
    torch.manual_seed(0)
    return Experts(2048, 4096, 8).to(torch.bfloat16).eval(), torch.randn(4, 512, 2048, dtype=torch.bfloat16)


def fp8():
    torch.manual_seed(0)
    return Fp8Linear().eval(), torch.randn(2048, 4096, dtype=torch.bfloat16)


def tiny():
    return _block(2, 16, d=64, heads=4, hidden=96, experts=4)


def tiny_fp8():
    torch.manual_seed(0)
    return Fp8Linear(64, 48).eval(), torch.randn(32, 64, dtype=torch.bfloat16)
