import sys, torch, traceback
import torch._inductor.config as ic
ic.max_autotune = True; ic.max_autotune_gemm_backends = "NVGEMM"
dt = torch.bfloat16; dev = "cpu"
a = torch.randn(256, 1024, device=dev, dtype=dt); w = torch.randn(2048, 1024, device=dev, dtype=dt); bias = torch.randn(2048, device=dev, dtype=dt)
x3 = torch.randn(8, 256, 1024, device=dev, dtype=dt); w3 = torch.randn(8, 1024, 2048, device=dev, dtype=dt)
b3 = torch.randn(8, 256, 2048, device=dev, dtype=dt)
cases = {"mm": (lambda a, w: a @ w.t(), (a, w)), "addmm": (lambda a, w, b: torch.addmm(b, a, w.t()), (a, w, bias)),
         "linear3d": (lambda x, w, b: torch.nn.functional.linear(x, w, b), (x3[:, :, :], w, bias)),
         "bmm": (lambda x, w: torch.bmm(x, w), (x3, w3)),
         "baddbmm": (lambda b, x, w: torch.baddbmm(b, x, w), (b3, x3, w3))}
f, args = cases[sys.argv[1]]
y = torch.compile(f)(*args)
