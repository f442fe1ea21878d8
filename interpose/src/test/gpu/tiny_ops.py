"""Microseconds per tiny PyTorch op (one kernel launch each) on the legacy default stream: best of
5 rounds of N ops. Usage: tiny_ops.py [N]"""
import sys, time, torch
n = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
a = torch.zeros(1, device='cuda')
best = 1e9
for r in range(6):
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(n):
        a.add_(1)
    torch.cuda.synchronize()
    if r:
        best = min(best, (time.perf_counter() - t0) / n * 1e6)
print('{"us_per_op": %.3f}' % best)
