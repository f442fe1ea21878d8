"""PyTorch on a real GPU, for running under libxq-cuda.so: training steps (forward, backward,
optimizer), a CUDA graph captured and replayed, a high-priority side stream, and a loop of tiny
kernels that measures the cost of one launch. Prints one JSON line.
Usage: torch_smoke.py [STEPS] [TINY_OPS]
"""
import json, os, sys, time
import torch

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 50
tiny = int(sys.argv[2]) if len(sys.argv) > 2 else 20000
torch.manual_seed(0)
dev = 'cuda'
model = torch.nn.Sequential(torch.nn.Linear(1024, 4096), torch.nn.ReLU(), torch.nn.Linear(4096, 1024)).to(dev)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.randn(256, 1024, device=dev)
y = torch.randn(256, 1024, device=dev)
t0 = time.perf_counter()
losses = []
for i in range(steps):
    loss = torch.nn.functional.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    losses.append(loss.item())
train_s = time.perf_counter() - t0

# CUDA graph: capture the forward pass, replay, compare with eager
static_x = torch.randn(256, 1024, device=dev)
side = torch.cuda.Stream()
side.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(side):
    for _ in range(3):
        model(static_x)
torch.cuda.current_stream().wait_stream(side)
g = torch.cuda.CUDAGraph()
with torch.no_grad():
    with torch.cuda.graph(g):
        static_out = model(static_x)
    for _ in range(10):
        static_x.copy_(torch.randn(256, 1024, device=dev))
        g.replay()
        eager = model(static_x)
    graph_ok = torch.allclose(static_out, eager, atol=1e-4)

# a stream with a CUDA priority
hi = torch.cuda.Stream(priority=-1)
with torch.cuda.stream(hi):
    z = (x @ x.T).sum()
torch.cuda.synchronize()

# tiny kernels: the cost of one launch
a = torch.zeros(1, device=dev)
for _ in range(1000):
    a.add_(1)
torch.cuda.synchronize()
a.zero_()
t0 = time.perf_counter()
for _ in range(tiny):
    a.add_(1)
torch.cuda.synchronize()
tiny_us = (time.perf_counter() - t0) / tiny * 1e6
# Triton: its launcher gets cuLaunchKernelEx by dlopen + dlsym of libcuda
triton_ok = None
try:
    import triton
    import triton.language as tl

    @triton.jit
    def add_one(p, n, BLOCK: tl.constexpr):
        o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(p + o, tl.load(p + o, mask=o < n) + 1, mask=o < n)

    t = torch.zeros(10000, device=dev)
    for _ in range(5):
        add_one[(triton.cdiv(10000, 1024),)](t, 10000, BLOCK=1024)
    triton_ok = bool((t == 5).all())
except Exception as e:  # reported, not fatal
    triton_ok = 'error: %s' % e

print(json.dumps(dict(pid=os.getpid(), triton_ok=triton_ok, first_loss=round(losses[0], 6), last_loss=round(losses[-1], 6),
                      train_s=round(train_s, 3), graph_ok=bool(graph_ok), tiny_ok=int(a.item()) == tiny,
                      tiny_us_per_op=round(tiny_us, 3), hi_ok=bool(torch.isfinite(z)))), flush=True)
