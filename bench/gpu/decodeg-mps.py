#!/usr/bin/env python3
"""Where MPS's price on `decodeg` is paid (issue 40; run by bench/gpu/decodeg-mps.sh, bare and as
an MPS client). `decodeg` (bench/torch/family) alone pays +13.6 % at P50 as the only client of a
plain MPS daemon (H100, session 101). Its request is 32 token steps, each one CUDA graph replay
and one synchronize. This process builds the same decoder and times its token step four ways, so
that bare against MPS says which part grows:

  sync    replay + read the token (the tenant's way): wall a token, and the device time between
          events recorded just before and after the replay;
  batch   32 replays back to back, events around them, one synchronize: device time a token with
          no host in between (the kernels' own running plus graph boundaries);
  launch  the host's cuGraphLaunch alone (replay() returns before the work ends);
  eager   the same step launched kernel by kernel (no graph): device time a token.

SCHED=spin|yield|block sets cudaSetDeviceFlags before the context exists (default: the runtime's
choice). Prints one JSON line: medians and P99s in microseconds.
"""
import ctypes
import json
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "torch", "family"))
from gpt import GPT, StaticDecoder  # noqa: E402


def pct(v, q):
    v = sorted(v)
    k = (len(v) - 1) * q / 100.0
    f = int(k)
    c = min(f + 1, len(v) - 1)
    return v[f] + (v[c] - v[f]) * (k - f)


def summary(v):
    return {"p50": round(pct(v, 50), 1), "p99": round(pct(v, 99), 1), "n": len(v)}


def main():
    tokens = int(os.environ.get("TOKENS", "640"))
    sched = os.environ.get("SCHED", "")
    if sched:
        flags = {"spin": 1, "yield": 2, "block": 4}
        if sched not in flags:
            sys.exit("decodeg-mps: SCHED=%r; allowed: spin, yield, block" % sched)
        rt = None
        for name in ("libcudart.so.13", "libcudart.so.12", "libcudart.so"):
            try:
                rt = ctypes.CDLL(name)
                break
            except OSError:
                continue
        if rt is None:
            sys.exit("decodeg-mps: no libcudart to set SCHED=%s" % sched)
        rc = rt.cudaSetDeviceFlags(ctypes.c_uint(flags[sched]))
        if rc != 0:
            sys.exit("decodeg-mps: cudaSetDeviceFlags(%s) returned %d" % (sched, rc))
    torch.manual_seed(0)
    torch.set_grad_enabled(False)
    torch.backends.cuda.enable_cudnn_sdp(False)
    dev = torch.device("cuda")
    vocab, d, heads, layers, prompt, new = 32000, 2048, 16, 12, 32, 32
    with dev:
        model = GPT(vocab, d, heads, layers, prompt + new)
    model = model.to(dev, torch.float16).eval()
    dec = StaticDecoder(model, 1, prompt, prompt + new, torch.float16, dev)
    dec.prompt.copy_(torch.randint(0, vocab, (1, prompt), device=dev))
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            dec.prefill()
            dec.step()
    torch.cuda.current_stream().wait_stream(side)
    g_step = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g_step):
        nxt = dec.step()
    torch.cuda.synchronize()

    def restart():
        # the position back to the prompt's end every `new` tokens, as a request would
        dec.pos.fill_(prompt)

    ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(new)]
    res = {"sched": sched or "default", "mps": bool(os.environ.get("CUDA_MPS_PIPE_DIRECTORY")),
           "pct": os.environ.get("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", "")}
    for _warm in range(2):
        restart()
        for _ in range(new - 1):
            g_step.replay()
            nxt.to("cpu", copy=True)
    # sync: the tenant's way
    wall, devt, launch = [], [], []
    for r in range(tokens // new):
        restart()
        for i in range(new - 1):
            t0 = time.perf_counter()
            ev[i][0].record()
            g_step.replay()
            t1 = time.perf_counter()
            ev[i][1].record()
            nxt.to("cpu", copy=True)
            t2 = time.perf_counter()
            wall.append((t2 - t0) * 1e6)
            launch.append((t1 - t0) * 1e6)
        torch.cuda.synchronize()
        devt.extend(ev[i][0].elapsed_time(ev[i][1]) * 1000.0 for i in range(new - 1))
    res["sync_wall_us"] = summary(wall)
    res["sync_device_us"] = summary(devt)
    res["launch_us"] = summary(launch)
    # batch: back to back, one synchronize
    per = []
    b0, b1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for r in range(tokens // new):
        restart()
        b0.record()
        for i in range(new - 1):
            g_step.replay()
        b1.record()
        b1.synchronize()
        per.append(b0.elapsed_time(b1) * 1000.0 / (new - 1))
    res["batch_device_us"] = summary(per)
    # eager: the same step kernel by kernel
    eag = []
    for r in range(max(1, tokens // new // 4)):
        restart()
        for i in range(new - 1):
            ev[i][0].record()
            dec.step()
            ev[i][1].record()
        torch.cuda.synchronize()
        eag.extend(ev[i][0].elapsed_time(ev[i][1]) * 1000.0 for i in range(new - 1))
    res["eager_device_us"] = summary(eag)
    res["checksum"] = int(nxt.sum())
    print(json.dumps(res), flush=True)


if __name__ == "__main__":
    main()
