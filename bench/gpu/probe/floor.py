#!/usr/bin/env python3
"""Probe: does work that ran *between* a latency-critical tenant's requests, and was done before
the next one arrived, slow that next request? (Issue 40: beside a held trainer the graph tenant's
whole latency distribution moved up 7-10 %, its P10 included.)

One process, no XQ, no other tenant: the family's `graph` tenant (ResNet-50 fp16 batch 8 as a CUDA
graph, a request every 25 ms) run in rounds of variants, alternated, each variant doing something
different right after each request, synchronised, so it is over long before the next release:

  none    nothing
  dirty   fill a 512 MiB buffer (writes: the L2, 60 MB on an H200, left full of dirty lines)
  read    sum the same buffer (reads: the L2 left full of clean lines of other data)
  gemm    one 4096^2 fp32 matmul (compute, a small working set)

Prints one JSON line per variant and round (p10/p50/p99/mean ms) and a summary per variant with
the rounds pooled. Usage: floor.py [--seconds 6] [--rounds 3] [--variants none,dirty,read,gemm]
"""
import argparse
import json
import os
import sys
import time
from types import SimpleNamespace

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "torch", "family"))
import tenant  # noqa: E402  (the family's own graph tenant, so the request is the one measured in the mixes)


def pct(s, q):
    return s[min(len(s) - 1, int(round(q / 100.0 * (len(s) - 1))))]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--seconds", type=float, default=6.0)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--variants", default="none,dirty,read,gemm")
    p.add_argument("--period-ms", type=float, default=25.0)
    a = p.parse_args()
    dev = torch.device("cuda")
    torch.manual_seed(0)
    torch.backends.cudnn.benchmark = False
    torch.set_grad_enabled(False)
    t = tenant.build_graph(SimpleNamespace(batch=None), dev, tenant.FULL)
    for _ in range(20):
        t.request()
    buf = torch.empty(512 << 20, dtype=torch.uint8, device=dev)
    acc = torch.zeros((), dtype=torch.float32, device=dev)
    torch.backends.cuda.matmul.allow_tf32 = False
    ga = torch.randn(4096, 4096, device=dev)
    gb = torch.randn(4096, 4096, device=dev)
    gc = torch.empty(4096, 4096, device=dev)
    between = {
        "none": lambda: None,
        "dirty": lambda: buf.fill_(7),
        "read": lambda: acc.copy_(buf.view(torch.float32).sum()),
        "gemm": lambda: torch.mm(ga, gb, out=gc),
    }
    variants = a.variants.split(",")
    for v in variants:
        if v not in between:
            sys.exit("floor.py: variant %r is not one of %s" % (v, ",".join(between)))
    period = a.period_ms / 1000.0
    pooled = {v: [] for v in variants}
    for r in range(a.rounds):
        for v in variants:
            work = between[v]
            lat = []
            end = time.perf_counter() + a.seconds
            next_at = time.perf_counter()
            while next_at < end:
                wait = next_at - time.perf_counter()
                if wait > 0.002:
                    time.sleep(wait - 0.001)
                while time.perf_counter() < next_at:
                    pass
                t0 = time.perf_counter()
                t.request()
                t1 = time.perf_counter()
                lat.append((t1 - t0) * 1000.0)
                work()
                torch.cuda.current_stream().synchronize()
                next_at = max(next_at + period, time.perf_counter())
            s = sorted(lat)
            pooled[v].extend(lat)
            print(json.dumps({"round": r + 1, "variant": v, "requests": len(s), "p10_ms": round(pct(s, 10), 4),
                              "p50_ms": round(pct(s, 50), 4), "p99_ms": round(pct(s, 99), 4),
                              "mean_ms": round(sum(s) / len(s), 4)}), flush=True)
    base = sorted(pooled[variants[0]])
    for v in variants:
        s = sorted(pooled[v])
        print(json.dumps({"pooled": v, "requests": len(s), "p10_ms": round(pct(s, 10), 4), "p50_ms": round(pct(s, 50), 4),
                          "p99_ms": round(pct(s, 99), 4),
                          "p10_vs_first": round(pct(s, 10) / pct(base, 10), 4),
                          "p50_vs_first": round(pct(s, 50) / pct(base, 50), 4),
                          "p99_vs_first": round(pct(s, 99) / pct(base, 99), 4)}), flush=True)


if __name__ == "__main__":
    main()
