#!/usr/bin/env python3
"""The latency-critical tenant of the torch-pair scenario: ResNet-50 fp16 inference.

graph mode: batch 8, captured once as a CUDA graph and replayed every period (the issue's hp);
eager mode: batch 1, plain forward calls (CPU-launch bound). Default stream, no XQ code: the
node schedules it only through the interposer, if it is loaded.

Protocol with the scenario: warm up, print READY, wait for GO on stdin (with --wait-go), run
--seconds, print one JSON line. Latency = request issued -> its result on the host.
"""
import argparse
import json
import sys
import time

import torch
import torchvision


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--mode", choices=["graph", "eager"], default="graph")
    p.add_argument("--batch", type=int, default=None, help="default 8 for graph, 1 for eager")
    p.add_argument("--period-ms", type=float, default=25.0)
    p.add_argument("--seconds", type=float, default=20.0)
    p.add_argument("--warmup", type=int, default=30)
    p.add_argument("--wait-go", action="store_true")
    a = p.parse_args()
    batch = a.batch or (8 if a.mode == "graph" else 1)

    torch.manual_seed(0)
    dev = torch.device("cuda")
    model = torchvision.models.resnet50(weights=None).to(dev).half().eval()
    x = torch.randn(batch, 3, 224, 224, device=dev, dtype=torch.float16)

    with torch.no_grad():
        if a.mode == "graph":
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                for _ in range(3):
                    model(x)
            torch.cuda.current_stream().wait_stream(side)
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                out = model(x)

            def request():
                graph.replay()
                torch.cuda.current_stream().synchronize()
                return out
        else:
            def request():
                o = model(x)
                torch.cuda.current_stream().synchronize()
                return o

        for _ in range(a.warmup):
            request()
        checksum = float(request().double().sum().item())

        print("READY", flush=True)
        if a.wait_go:
            line = sys.stdin.readline()
            if line.strip() != "GO":
                print(json.dumps({"role": "hp", "error": "expected GO, got %r" % line}), flush=True)
                return 2

        period = a.period_ms / 1000.0
        lat = []
        start = time.perf_counter()
        next_at = start
        while True:
            now = time.perf_counter()
            if now - start >= a.seconds:
                break
            if next_at > now:
                if next_at - now > 0.002:
                    time.sleep(next_at - now - 0.001)
                while time.perf_counter() < next_at:
                    pass
            t0 = time.perf_counter()
            request()
            t1 = time.perf_counter()
            lat.append((t1 - t0) * 1000.0)
            next_at = max(next_at + period, t1) if period > 0 else t1
        lat_sorted = sorted(lat)

        def pct(q):
            return lat_sorted[min(len(lat_sorted) - 1, int(round(q / 100.0 * (len(lat_sorted) - 1))))]

        print(json.dumps({"role": "hp", "mode": a.mode, "batch": batch, "requests": len(lat),
                          "p50_ms": pct(50), "p99_ms": pct(99), "mean_ms": sum(lat) / len(lat),
                          "checksum": checksum, "lat_ms": [round(v, 4) for v in lat]}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
