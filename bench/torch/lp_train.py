#!/usr/bin/env python3
"""The best-effort tenant of the torch-pair scenario: ResNet-50 fp32 training, batch 64, back to
back, on synthetic data made once on the GPU (no data loading in the way). Default stream, no
XQ code.

Protocol with the scenario: a few iterations whose losses are kept (the correctness check:
same seed, same data, so the losses must agree with and without the interposer within
floating-point noise), print READY, wait for GO on stdin (with --wait-go), train for --seconds,
print one JSON line with iterations per second.
"""
import argparse
import json
import sys
import time

import torch
import torchvision


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--seconds", type=float, default=20.0)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--wait-go", action="store_true")
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

    losses = [float(step().item()) for _ in range(a.warmup)]
    print("READY", flush=True)
    if a.wait_go:
        line = sys.stdin.readline()
        if line.strip() != "GO":
            print(json.dumps({"role": "lp", "error": "expected GO, got %r" % line}), flush=True)
            return 2

    torch.cuda.synchronize()
    t0 = time.perf_counter()
    iters = 0
    while time.perf_counter() - t0 < a.seconds:
        step()
        iters += 1
    torch.cuda.synchronize()
    t1 = time.perf_counter()
    print(json.dumps({"role": "lp", "batch": a.batch, "iterations": iters, "seconds": t1 - t0,
                      "it_per_s": iters / (t1 - t0), "losses": losses}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
