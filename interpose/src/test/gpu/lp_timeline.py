#!/usr/bin/env python3
"""Where the training tenant's device time goes: ResNet-50 fp32 training, batch 64 (the
torch-pair lp tenant, bench/torch/lp_train.py), measured two ways in one process:

1. throughput: iterations per second over --seconds, nothing traced;
2. the device timeline of --trace iterations, from PyTorch's profiler (CUPTI, device activities
   only, so the host path is not slowed): every kernel, copy and memset with its start and end
   on the GPU. From it: how much of the traced span the device was busy, the idle gaps between
   consecutive commands (count, sum, percentiles, by size), and the device time per kernel name
   (whether kernels themselves run slower, not only later).

Run it bare and under the interposer with a node holding limits (limits-matrix.sh) and compare.
Prints one JSON line.
"""
import argparse
import json
import os
import sys
import tempfile
import time

import torch
import torchvision


def pct(xs, q):
    if not xs:
        return 0.0
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def timeline(path, iters):
    ev = json.load(open(path))
    ev = ev.get("traceEvents", ev) if isinstance(ev, dict) else ev
    ops = [e for e in ev if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
    ops.sort(key=lambda e: e["ts"])
    if not ops:
        return {"error": "no device activity in the trace"}
    gaps, busy, by_name, where = [], 0.0, {}, {}
    end, prev = ops[0]["ts"], ""
    for e in ops:
        s, d = float(e["ts"]), float(e.get("dur", 0))
        if s > end:
            gaps.append(s - end)
            busy += d
            if s - end >= 10:  # which commands the longer gaps fall between
                w = where.setdefault((prev[:60], e.get("name", "?")[:60]), [0, 0.0])
                w[0] += 1
                w[1] += s - end
        else:
            busy += max(0.0, s + d - end)
        end = max(end, s + d)
        prev = e.get("name", "?")
        n = e.get("name", "?")[:80]
        c = by_name.setdefault(n, [0, 0.0])
        c[0] += 1
        c[1] += d
    span = end - float(ops[0]["ts"])
    top = sorted(by_name.items(), key=lambda kv: -kv[1][1])[:25]
    cls = {}
    for lo, hi in ((0, 2), (2, 5), (5, 10), (10, 20), (20, 50), (50, 100), (100, 1e12)):
        g = [x for x in gaps if lo <= x < hi]
        cls["%g-%g" % (lo, hi if hi < 1e12 else 0)] = [len(g), round(sum(g), 1)]
    return {
        "traced_iterations": iters,
        "commands": len(ops),
        "span_ms": round(span / 1e3, 3),
        "busy_ms": round(busy / 1e3, 3),
        "busy_frac": round(busy / span, 4) if span else 0,
        "gaps": len(gaps),
        "gap_sum_ms": round(sum(gaps) / 1e3, 3),
        "gap_p50_us": round(pct(gaps, 0.5), 2),
        "gap_p90_us": round(pct(gaps, 0.9), 2),
        "gap_p99_us": round(pct(gaps, 0.99), 2),
        "gap_max_us": round(max(gaps) if gaps else 0, 1),
        "gaps_by_us": cls,
        "per_iteration_ms": round(span / 1e3 / iters, 3),
        "device_ms_per_iteration": round(busy / 1e3 / iters, 3),
        "top_kernels": [[n, c, round(t / iters, 1)] for n, (c, t) in top],  # name, count, us per iteration
        # gaps of 10 us or more by the commands before and after: before, after, count, us per iteration
        "gaps_between": [[a, b, c, round(t / iters, 1)] for (a, b), (c, t) in sorted(where.items(), key=lambda kv: -kv[1][1])[:15]],
    }


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--seconds", type=float, default=8.0)
    p.add_argument("--warmup", type=int, default=8)
    p.add_argument("--trace", type=int, default=20)
    p.add_argument("--label", default="")
    a = p.parse_args()

    torch.manual_seed(0)
    dev = torch.device("cuda")
    model = torchvision.models.resnet50(weights=None).to(dev).train()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_fn = torch.nn.CrossEntropyLoss()
    x = torch.randn(a.batch, 3, 224, 224, device=dev)
    y = torch.randint(0, 1000, (a.batch,), device=dev)

    def step():
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        return loss

    first = float(step().item())
    for _ in range(a.warmup):
        step()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    iters = 0
    while time.perf_counter() - t0 < a.seconds:
        step()
        iters += 1
    torch.cuda.synchronize()
    t1 = time.perf_counter()
    out = {"label": a.label, "it_per_s": round(iters / (t1 - t0), 3), "iterations": iters, "first_loss": first}
    if a.trace > 0:
        from torch.profiler import ProfilerActivity, profile

        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            h0 = time.perf_counter()
            for _ in range(a.trace):
                step()
            torch.cuda.synchronize()
            h1 = time.perf_counter()
        fd, path = tempfile.mkstemp(suffix=".json")
        os.close(fd)
        prof.export_chrome_trace(path)
        out["traced_it_per_s"] = round(a.trace / (h1 - h0), 3)
        out.update(timeline(path, a.trace))
        os.unlink(path)
    print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
