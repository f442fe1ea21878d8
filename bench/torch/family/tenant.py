#!/usr/bin/env python3
"""One entry point for the family of unmodified PyTorch tenants of the `mix` scenario: 2-4 of
these processes share one GPU, and each stands for a different kind of real workload (see
README.md). No XQ code here: the node sees them only through the interposer, if it is loaded.

Protocol (the Java side depends on it): build, warm up until every lazy cost (cuDNN/cuBLAS
heuristics and handles, Triton JIT, CUDA graph capture, the caching allocator's pool) is paid,
print READY, with --wait-go read one line that must be GO, run --seconds, print one JSON line.
stdout carries nothing else; logs go to stderr.
"""
import argparse
import contextlib
import json
import math
import os
import random
import sys
import time
from types import SimpleNamespace

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # the helpers, whatever the cwd

LC_PERIOD_MS = {"graph": 25.0, "decode": 60.0, "bulk": 100.0, "graphp": 25.0, "decodep": 60.0, "bulkp": 100.0,
                "decodeg": 60.0, "chat": 100.0}
# LC kinds whose requests come at random (exponential gaps of the period on average, seeded), as
# an inference server's do: no beat for the node to learn; each is its periodic twin otherwise
# (chat has no periodic twin: a chat service's requests always come at random)
POISSON = ("graphp", "decodep", "bulkp", "chat")
BE_KINDS = ("train32", "trainbf16", "trainio", "gemm", "triton")
WARMUP = {"graph": 20, "graphp": 20, "decode": 5, "decodep": 5, "decodeg": 5, "chat": 8, "bulk": 10, "bulkp": 10, "train32": 8, "trainbf16": 8, "trainio": 8, "gemm": 4, "triton": 32}
LOSSES_KEPT = 8

# Full sizes are the workloads the scenario means; --smoke shrinks them so the logic can be
# exercised on a CPU in seconds (the numbers it gives mean nothing).
FULL = dict(img=224, graph_batch=8, bulk_batch=64, train_batch=64, vocab=32000, d=1024, heads=16,
            decode_layers=2, train_layers=12, prompt=32, new=32, seq=512, lm_batch=8,
            gemm_n=8192, tri_rows=65536, tri_cols=1024, gd_d=2048, gd_heads=16, gd_layers=12,
            chat_d=2048, chat_heads=16, chat_layers=8, chat_prompts=(128, 256, 512, 1024), chat_new=16)
SMOKE = dict(img=64, graph_batch=2, bulk_batch=4, train_batch=4, vocab=1000, d=128, heads=4,
             decode_layers=2, train_layers=2, prompt=8, new=8, seq=64, lm_batch=2,
             gemm_n=256, tri_rows=256, tri_cols=1024, gd_d=128, gd_heads=4, gd_layers=2,
             chat_d=128, chat_heads=4, chat_layers=2, chat_prompts=(8, 16, 32, 64), chat_new=4)


def log(msg):
    print("[tenant] " + msg, file=sys.stderr, flush=True)


def protocol_stdout():
    # Libraries may write to fd 1 behind Python's back (compilers, C++ warnings, a stray print);
    # the Java side parses stdout, so keep a private copy of fd 1 for the protocol lines and point
    # fd 1 (and sys.stdout) at stderr for everything else.
    sys.stdout.flush()
    out = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return out


def sync_fn(dev):
    if dev.type == "cuda":
        return torch.cuda.synchronize
    return lambda: None


def resnet50(dev, dtype):
    import torchvision  # only the ResNet kinds need it
    return torchvision.models.resnet50(weights=None).to(dev, dtype)


def param_sum(model):
    return float(sum(p.detach().double().sum() for p in model.parameters()))


# ---- latency-critical kinds: request() returns its result already on the host side of a sync

# When the request's last launch was issued (perf_counter, this thread's CPU time): each LC kind's
# request() calls issued() between its launches and its one synchronize, so that run_lc can tell
# the host's share of a slow request (its launches took long: a slow or busy core) from the
# device's (the wait at the synchronize). A launch-bound decoder's request is nearly all host.
_ISSUED = [0.0, 0.0]


def issued():
    _ISSUED[0] = time.perf_counter()
    _ISSUED[1] = time.thread_time()

def build_graph(a, dev, sz):
    # fp16 convolutions on a CPU are slow or missing; the smoke run only checks the logic.
    dtype = torch.float16 if dev.type == "cuda" else torch.float32
    batch = a.batch or sz["graph_batch"]
    model = resnet50(dev, dtype).eval()
    x = torch.randn(batch, 3, sz["img"], sz["img"], device=dev, dtype=dtype)
    if dev.type != "cuda":
        log("graph: no CUDA graph on %s, plain forward instead" % dev.type)
        def plain():
            out = model(x)
            issued()
            return out
        return SimpleNamespace(request=plain)
    # Capture needs the lazy work (cuDNN handles, workspace allocations) done outside the graph,
    # and on a non-default stream, as the CUDA graph docs prescribe.
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
        issued()
        torch.cuda.current_stream().synchronize()
        return out
    return SimpleNamespace(request=request)


def build_decode(a, dev, sz):
    from gpt import GPT, generate
    # The depth sets the request time, nearly all of it CPU launch work (the kernels take a few
    # us each): on the H200 test host (an eager op ~15-25 us, noisy) a request took p50/p99
    # ~25/35 ms with 2 layers, ~30/50 with 3, ~44/60 with 4 and ~80 with 8, so 2 keeps it well
    # under the 60 ms period standalone; still ~29 kernels a token, ~950 launches a request.
    # cuDNN attention (torch's first choice on Hopper) is off: its per-call CPU cost made the
    # request time there up to twice as long and much noisier than with flash attention.
    torch.backends.cuda.enable_cudnn_sdp(False)
    dtype = torch.float16 if dev.type == "cuda" else torch.float32
    batch = a.batch or 1
    layers = a.layers or sz["decode_layers"]
    max_len = sz["prompt"] + sz["new"]
    model = GPT(sz["vocab"], sz["d"], sz["heads"], layers, max_len).to(dev, dtype).eval()
    prompt = torch.randint(0, sz["vocab"], (batch, sz["prompt"]), device=dev)
    caches = model.new_caches(batch, max_len, dtype, dev)

    def request():
        # .cpu() is the request's one synchronize: the tokens reach the host.
        out = generate(model, prompt, sz["new"], caches)
        issued()
        return out.cpu()
    return SimpleNamespace(request=request)


def build_decodeg(a, dev, sz):
    # An LLM served as engines serve one (vLLM, TensorRT-LLM): each decode step replayed from a
    # CUDA graph, the sampled token read by the host after every step (a server streams it and
    # checks for the end). Batch 1 of a ~0.7B-parameter model (d 2048, 12 layers, fp16): a step
    # reads every weight once, ~1.4 GB, so it is memory-bound, one graph launch and one
    # synchronize a token, 32 of them a request; the device busy most of the request, unlike
    # `decode`, whose request is nearly all host launch work.
    from gpt import GPT, StaticDecoder
    torch.backends.cuda.enable_cudnn_sdp(False)
    dtype = torch.float16 if dev.type == "cuda" else torch.float32
    batch = a.batch or 1
    layers = a.layers or sz["gd_layers"]
    max_len = sz["prompt"] + sz["new"]
    # built on the device where torch can (a CPU took 20 s to fill ~1B parameters on the build VM)
    with (dev if hasattr(dev, "__enter__") else contextlib.nullcontext()):
        model = GPT(sz["vocab"], sz["gd_d"], sz["gd_heads"], layers, max_len)
    model = model.to(dev, dtype).eval()
    dec = StaticDecoder(model, batch, sz["prompt"], max_len, dtype, dev)
    dec.prompt.copy_(torch.randint(0, sz["vocab"], (batch, sz["prompt"]), device=dev))
    prefill, step = dec.prefill, dec.step
    if dev.type == "cuda":
        # as for `graph`: the lazy work first, on a side stream, then one capture per step
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):
                dec.prefill()
                dec.step()
        torch.cuda.current_stream().wait_stream(side)
        g_prefill = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g_prefill):
            first = dec.prefill()
        g_step = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g_step):
            nxt = dec.step()

        def prefill():
            g_prefill.replay()
            return first

        def step():
            g_step.replay()
            return nxt
    else:
        log("decodeg: no CUDA graph on %s, the same steps eagerly" % dev.type)

    def read(tok):
        # the token to the host: one synchronize a token (a copy: on a CPU .cpu() would hand back
        # the step's own buffer, which the next step rewrites); returns it and the time waited
        t = time.perf_counter()
        out = tok.to("cpu", copy=True)
        return out, time.perf_counter() - t

    def request():
        # launches and waits alternate token by token, so the request's host part is its time
        # outside the 32 reads (the mark issued() leaves is moved back by the time they waited)
        # and the device's the time in them; its CPU time is over the whole request
        first, waited = read(prefill())
        toks = [first]
        for _ in range(sz["new"] - 1):
            tok, w = read(step())
            toks.append(tok)
            waited += w
        issued()
        _ISSUED[0] -= waited
        return torch.cat(toks, 1)
    return SimpleNamespace(request=request)


def build_chat(a, dev, sz):
    # An LLM chat service as a plain eager PyTorch server runs one (a generate loop with a token
    # streamer): each request brings a prompt of its own length (128, 256, 512 or 1024 tokens,
    # drawn seeded), whose prefill is one burst of large GEMMs across the whole device, then 16
    # greedy tokens one at a time, eager (~115 launches a token at 8 layers), the host reading
    # each token as it comes (to stream it and look for an end: a synchronize a token). Wide for
    # a few ms, then launch-bound: both shapes in one request, in proportions that change from
    # request to request. ~0.4B parameters (d 2048, 16 heads, 8 layers, fp16), batch 1.
    from gpt import GPT
    torch.backends.cuda.enable_cudnn_sdp(False)  # as `decode`: flash attention, less CPU a call
    dtype = torch.float16 if dev.type == "cuda" else torch.float32
    batch = a.batch or 1
    layers = a.layers or sz["chat_layers"]
    prompts, new = sz["chat_prompts"], sz["chat_new"]
    max_len = max(prompts) + new
    with (dev if hasattr(dev, "__enter__") else contextlib.nullcontext()):
        model = GPT(sz["vocab"], sz["chat_d"], sz["chat_heads"], layers, max_len)
    model = model.to(dev, dtype).eval()
    caches = model.new_caches(batch, max_len, dtype, dev)
    text = torch.randint(0, sz["vocab"], (batch, max(prompts)), device=dev)
    # the prompt lengths in request order: the warm-up sees each length twice (every shape's
    # lazy cost paid), then they come at random, the same in every run and mode
    rng = random.Random(41)
    lengths = list(prompts) * 2 + [rng.choice(prompts) for _ in range(8192)]
    count = [0]

    def read(tok):
        # as decodeg: the token to the host (a copy), and the time waited for it
        t = time.perf_counter()
        out = tok.to("cpu", copy=True)
        return out, time.perf_counter() - t

    def request():
        n = lengths[count[0] % len(lengths)]
        count[0] += 1
        tok = model(text[:, :n], caches, 0, last_only=True)[:, -1].argmax(-1, keepdim=True)
        first, waited = read(tok)
        toks = [first]
        pos = n
        for _ in range(new - 1):
            tok = model(tok, caches, pos, last_only=True)[:, -1].argmax(-1, keepdim=True)
            pos += 1
            got, w = read(tok)
            toks.append(got)
            waited += w
        # the host part is the request's time outside the reads, as decodeg's
        issued()
        _ISSUED[0] -= waited
        return torch.cat(toks, 1)
    return SimpleNamespace(request=request)


def build_bulk(a, dev, sz):
    dtype = torch.float16 if dev.type == "cuda" else torch.float32
    model = resnet50(dev, dtype).eval()
    x = torch.randn(a.batch or sz["bulk_batch"], 3, sz["img"], sz["img"], device=dev, dtype=dtype)
    sync = sync_fn(dev)

    def request():
        out = model(x)
        issued()
        sync()
        return out
    return SimpleNamespace(request=request)


# ---- best-effort kinds: step() only enqueues; the loop synchronizes every sync_every steps

def build_train32(a, dev, sz):
    model = resnet50(dev, torch.float32).train()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    batch = a.batch or sz["train_batch"]
    x = torch.randn(batch, 3, sz["img"], sz["img"], device=dev)
    y = torch.randint(0, 1000, (batch,), device=dev)

    def step():
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss
    return SimpleNamespace(step=step, sync=sync_fn(dev), sync_every=1, model=model)


def build_trainio(a, dev, sz):
    # Training fed by its host: each step's batch is cropped, flipped and normalised on the CPU
    # from a pool of uint8 images (as a data pipeline without enough workers does), then copied
    # in from pinned memory; ResNet-50 in bf16 autocast, SGD momentum. The device waits for the
    # host every step (on the order of 10-20 ms of a 4-thread CPU step at full size): a
    # best-effort process with gaps of its own, which native time slicing does not charge it for.
    torch.set_num_threads(4)
    model = resnet50(dev, torch.float32).train()
    opt = torch.optim.SGD(model.parameters(), lr=0.002, momentum=0.9)  # random labels: kept low so that bf16 stays finite
    batch = a.batch or sz["train_batch"]
    img = sz["img"]
    pad = img // 8
    gen = torch.Generator().manual_seed(0)
    pool = torch.randint(0, 256, (2 * batch, 3, img + pad, img + pad), dtype=torch.uint8, generator=gen)
    labels = torch.randint(0, 1000, (2 * batch,), generator=gen)
    mean = torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1) * 255
    std = torch.tensor([0.229, 0.224, 0.225]).view(1, 3, 1, 1) * 255
    pin = dev.type == "cuda"
    host = torch.empty(batch, 3, img, img, pin_memory=pin)

    def step():
        idx = torch.randint(0, 2 * batch, (batch,), generator=gen)
        dy, dx = (int(v) for v in torch.randint(0, pad + 1, (2,), generator=gen))
        x = pool.index_select(0, idx)[:, :, dy:dy + img, dx:dx + img]
        if int(torch.randint(0, 2, (1,), generator=gen)):
            x = x.flip(3)
        host.copy_(x)  # to float, into the pinned buffer (~25 ms a step on the 2-vCPU build VM)
        host.sub_(mean).div_(std)
        xd = host.to(dev, non_blocking=True)
        yd = labels.index_select(0, idx).to(dev, non_blocking=True)
        opt.zero_grad(set_to_none=True)
        with torch.autocast(dev.type, dtype=torch.bfloat16):
            loss = F.cross_entropy(model(xd), yd)
        loss.backward()
        opt.step()
        return loss
    # a synchronize a step: the pinned buffer is refilled by the next step's host work
    return SimpleNamespace(step=step, sync=sync_fn(dev), sync_every=1, model=model)


def build_trainbf16(a, dev, sz):
    from gpt import GPT
    layers = a.layers or sz["train_layers"]
    model = GPT(sz["vocab"], sz["d"], sz["heads"], layers, sz["seq"]).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
    tokens = torch.randint(0, sz["vocab"], (a.batch or sz["lm_batch"], sz["seq"] + 1), device=dev)
    inp, tgt = tokens[:, :-1], tokens[:, 1:]

    def step():
        opt.zero_grad(set_to_none=True)
        # fp32 master weights, bf16 matmuls: the usual mixed-precision recipe (no grad scaler
        # needed with bf16's range); autocast runs cross_entropy in fp32 by itself.
        with torch.autocast(dev.type, dtype=torch.bfloat16):
            loss = F.cross_entropy(model(inp).flatten(0, 1), tgt.flatten())
        loss.backward()
        opt.step()
        return loss
    return SimpleNamespace(step=step, sync=sync_fn(dev), sync_every=1, model=model)


def build_gemm(a, dev, sz):
    # Full fp32 (no TF32) so that one kernel is long: n=8192 is 1.1 TFLOP, ~20 ms on an H200.
    torch.backends.cuda.matmul.allow_tf32 = False
    n = a.size or sz["gemm_n"]
    x = torch.randn(n, n, device=dev)
    w = torch.randn(n, n, device=dev)
    out = torch.empty(n, n, device=dev)
    if dev.type != "cuda":
        log("gemm: no side stream on %s" % dev.type)
        return SimpleNamespace(step=lambda: torch.mm(x, w, out=out), sync=lambda: None, sync_every=4,
                               result=lambda: out)
    # The point of this kind: long kernels on a stream of its own, not the legacy default one.
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())  # x and w were filled on the default stream

    def step():
        with torch.cuda.stream(stream):
            torch.mm(x, w, out=out)
    return SimpleNamespace(step=step, sync=stream.synchronize, sync_every=4, result=lambda: out)


def build_triton(a, dev, sz):
    if dev.type != "cuda":
        # Triton's interpreter runs the same kernel on CPU tensors; it must be chosen before
        # @triton.jit decorates the kernel, i.e. before the import below.
        os.environ.setdefault("TRITON_INTERPRET", "1")
    try:
        from softmax_triton import softmax_rows
    except ImportError as e:
        if dev.type == "cuda":
            raise
        log("triton: not importable on %s (%s), torch.softmax instead" % (dev.type, e))

        def softmax_rows(x, y):
            torch.softmax(x, dim=-1, out=y)
    rows = a.size or sz["tri_rows"]
    x = torch.randn(rows, sz["tri_cols"], device=dev)  # 65536 x 1024 fp32: 256 MB in, 256 MB out
    y = torch.empty_like(x)
    return SimpleNamespace(step=lambda: softmax_rows(x, y), sync=sync_fn(dev), sync_every=16,
                           result=lambda: y * y)


BUILD = {"graph": build_graph, "graphp": build_graph, "decode": build_decode, "decodep": build_decode, "decodeg": build_decodeg,
         "chat": build_chat, "bulk": build_bulk,
         "bulkp": build_bulk, "train32": build_train32, "trainio": build_trainio,
         "trainbf16": build_trainbf16, "gemm": build_gemm, "triton": build_triton}


def pct(sorted_vals, q):
    return sorted_vals[min(len(sorted_vals) - 1, int(round(q / 100.0 * (len(sorted_vals) - 1))))]


def launch_timer():
    """This thread's time inside the driver's launch calls, in ms, as a function (None where the
    interposer is not loaded or does not count it: XQ_TIME_LAUNCHES=1, which main sets for
    latency-critical kinds before CUDA starts)."""
    import ctypes
    try:
        f = ctypes.CDLL(None).xq_bench_launch_time
    except (AttributeError, OSError):
        return None
    counts = getattr(ctypes.CDLL(None), "xq_bench_counts", None)
    buf = (ctypes.c_uint64 * 2)()
    cbuf = (ctypes.c_uint64 * 2)()

    def read():
        """(ms inside launch calls, launches timed, lean launches of this thread, launches of the process)"""
        f(buf)
        if counts:
            counts(cbuf)
        return buf[0] / 1e6, buf[1], cbuf[0], cbuf[1]
    return read


def run_lc(t, seconds, period_ms, poisson=False, before=None):
    period = period_ms / 1000.0
    rng = random.Random(40)  # the same arrivals in every run and mode
    lat, at, host, host_cpu = [], [], [], []
    # How fast this thread ran just before each request: turns of the release spin (below) per
    # microsecond over its last stretch, -1 where the spin lasted under 0.3 ms. A request whose
    # host part is slow with a spin as fast as the others' met a CPU at its usual speed, and its
    # time went in its calls (bench/gpu/host-speed.py)
    spin = []
    # this thread's time inside the driver's launch calls during each request (ms; under the
    # interposer with XQ_TIME_LAUNCHES=1, else not reported), its launches, and how many of them
    # took the interposer's lean path (nothing could hold them: the top of the device)
    timer = launch_timer()
    launch_ms, launch_n, lean_n, timed = [], [], [], 0
    start = time.perf_counter()
    # each request's issue time in epoch ms: a run that pauses the BE tenants now and then (the mix
    # scenario's `pause`) splits the requests by what ran beside them
    epoch0 = time.time() * 1000.0 - start * 1000.0
    end = start + seconds
    next_at = start
    while next_at < end:
        # Sleep for the bulk of the wait, spin the last ~1 ms: time.sleep alone overshoots by
        # up to a scheduler tick, which would shift every release.
        wait = next_at - time.perf_counter()
        if wait > 0.002:
            time.sleep(wait - 0.001)
        s0 = time.perf_counter()
        turns = 0
        while time.perf_counter() < next_at:
            turns += 1
        s1 = time.perf_counter()
        spin.append(round(turns / ((s1 - s0) * 1e6), 3) if s1 - s0 >= 0.0003 else -1.0)
        if before:
            before(len(lat))
        d0 = timer() if timer else None
        c0 = time.thread_time()
        t0 = time.perf_counter()
        _ISSUED[0] = 0.0
        t.request()
        t1 = time.perf_counter()
        lat.append((t1 - t0) * 1000.0)
        if d0:
            d1 = timer()
            launch_ms.append(round(d1[0] - d0[0], 3))
            timed += d1[1] - d0[1]
            launch_n.append(d1[3] - d0[3])
            lean_n.append(d1[2] - d0[2])
        # until the last launch was issued: wall and this thread's CPU time (-1: not marked)
        host.append((_ISSUED[0] - t0) * 1000.0 if _ISSUED[0] else -1.0)
        host_cpu.append((_ISSUED[1] - c0) * 1000.0 if _ISSUED[0] else -1.0)
        at.append(epoch0 + t0 * 1000.0)
        # Open loop: releases stay on the period grid; a request that overran starts the next
        # one at once instead of queueing a burst of catch-up requests.
        next_at = max(next_at + (rng.expovariate(1.0 / period) if poisson else period), t1)
    extra = {"spin_per_us": spin}
    if timed:  # the interposer counted (XQ_TIME_LAUNCHES=1)
        extra |= {"launch_ms": launch_ms, "launch_n": launch_n, "lean_n": lean_n}
    return lat, at, host, host_cpu, extra


def run_be(t, seconds):
    n = 0
    start = time.perf_counter()
    epoch0 = time.time() * 1000.0 - start * 1000.0
    done = []  # epoch ms at each synchronization: when the work issued so far had finished
    while time.perf_counter() - start < seconds:
        t.step()
        n += 1
        if n % t.sync_every == 0:
            t.sync()
            done.append(round(epoch0 + time.perf_counter() * 1000.0, 1))
    # Count only work that finished: everything issued is waited for before the clock stops.
    t.sync()
    if torch.cuda.is_initialized():
        torch.cuda.synchronize()
    return n, time.perf_counter() - start, done


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--kind", required=True, choices=sorted(BUILD))
    p.add_argument("--seconds", type=float, default=20.0)
    p.add_argument("--period-ms", type=float, default=None, help="LC kinds; default per kind")
    p.add_argument("--batch", type=int, default=None, help="all but gemm/triton; default per kind")
    p.add_argument("--layers", type=int, default=None, help="decode/decodeg/chat/trainbf16 transformer depth")
    p.add_argument("--size", type=int, default=None, help="gemm: matrix n; triton: rows")
    p.add_argument("--warmup", type=int, default=None, help="warm-up requests/iterations")
    p.add_argument("--sync-every", type=int, default=None,
                   help="best-effort kinds: synchronize every N steps instead of the kind's own (train* 1, gemm 4, triton 16)")
    p.add_argument("--wait-go", action="store_true")
    p.add_argument("--device", default="cuda")
    p.add_argument("--smoke", action="store_true", help="tiny shapes, to check the logic on a CPU")
    p.add_argument("--ab-interposer", action="store_true",
                   help="LC kinds under ./xq run: every other request with the interposer's launch path bypassed "
                        "(its xq_bench_bypass), the order alternating pair by pair; reports both halves")
    a = p.parse_args()

    proto = protocol_stdout()

    def emit(obj_or_line):
        proto.write((obj_or_line if isinstance(obj_or_line, str) else json.dumps(obj_or_line)) + "\n")
        proto.flush()

    kind = a.kind
    lc = kind in LC_PERIOD_MS
    if lc and not a.ab_interposer:
        # under ./xq run, the interposer counts this thread's time inside the driver's launch calls
        # (two clock reads a launch); read when it resolves the driver, at the first CUDA call
        os.environ.setdefault("XQ_TIME_LAUNCHES", "1")
    role = "lc" if lc else "be"
    dev = torch.device(a.device)
    sz = SMOKE if a.smoke else FULL
    warmup = WARMUP[kind] if a.warmup is None else a.warmup
    t_start = time.perf_counter()

    torch.manual_seed(0)
    # Heuristic algorithm choice rather than timing-based autotuning: the same kernels in every
    # run and in every mix, so checksums and losses stay comparable.
    torch.backends.cudnn.benchmark = False
    if lc:
        torch.set_grad_enabled(False)  # pure inference: no autograd bookkeeping per op

    t = BUILD[kind](a, dev, sz)
    if a.sync_every is not None:
        if lc or a.sync_every < 1:
            emit({"role": role, "kind": kind, "error": "--sync-every %d: a whole number of steps >= 1, for best-effort kinds (%s)"
                  % (a.sync_every, ", ".join(BE_KINDS))})
            return 2
        t.sync_every = a.sync_every

    if lc:
        for _ in range(warmup):
            t.request()
        out = t.request()
        checksum = float(out.double().sum())
    else:
        losses = []
        for i in range(warmup):
            loss = t.step()
            if hasattr(t, "model") and i < LOSSES_KEPT:
                losses.append(float(loss.item()))
        t.sync()
        # Training kinds: the weights after the seeded warm-up steps; the others: their output.
        checksum = param_sum(t.model) if hasattr(t, "model") else float(t.result().double().sum())
        if dev.type == "cuda":
            torch.cuda.synchronize()

    log("%s on %s ready in %.1f s (checksum %r%s)" % (
        kind, dev, time.perf_counter() - t_start, checksum,
        "" if lc or not hasattr(t, "model") else ", losses %r" % losses))
    if dev.type == "cuda":
        log("max memory allocated %.2f GB" % (torch.cuda.max_memory_allocated() / 1e9))
    emit("READY")

    if a.wait_go:
        line = sys.stdin.readline()
        if line.strip() != "GO":
            emit({"role": role, "kind": kind, "error": "expected GO, got %r" % line})
            return 2

    bypassed = []
    before = None
    if a.ab_interposer:
        if not lc:
            emit({"role": role, "kind": kind, "error": "--ab-interposer is for latency-critical kinds"})
            return 2
        import ctypes
        try:
            bypass = ctypes.CDLL(None).xq_bench_bypass
        except AttributeError:
            emit({"role": role, "kind": kind, "error": "--ab-interposer: xq_bench_bypass not found: run under ./xq run "
                  "(the interposer preloaded)"})
            return 2
        bypass.argtypes = [ctypes.c_int]

        def before(i):
            # pairs (2k, 2k+1): interposed first in even pairs, bypassed first in odd ones; the
            # previous request ended with its synchronize, so nothing of ours is in flight
            on = (i % 2 == 1) if (i // 2) % 2 == 0 else (i % 2 == 0)
            bypass(1 if on else 0)
            bypassed.append(1 if on else 0)
    if lc:
        lat, at, host, host_cpu, extra = run_lc(t, a.seconds, LC_PERIOD_MS[kind] if a.period_ms is None else a.period_ms, kind in POISSON,
                         before)
        lean = {}
        if before:
            bypass(0)
            try:  # the launch path's lean share (this thread's lean launches, the process's launches)
                counts = (ctypes.c_uint64 * 2)()
                ctypes.CDLL(None).xq_bench_counts(counts)
                lean = {"lean_launches": counts[0], "launches": counts[1]}
            except AttributeError:
                pass
        s = sorted(lat)
        emit({"role": "lc", "kind": kind, "requests": len(lat),
              "p50_ms": pct(s, 50) if s else 0.0, "p99_ms": pct(s, 99) if s else 0.0,
              "mean_ms": sum(s) / len(s) if s else 0.0, "checksum": checksum,
              "lat_ms": [round(v, 4) for v in lat], "t_ms": [round(v, 1) for v in at],
              "host_ms": [round(v, 3) for v in host], "host_cpu_ms": [round(v, 3) for v in host_cpu]}
             | extra | ({"bypassed": bypassed} if a.ab_interposer else {}) | lean)
    else:
        n, secs, done = run_be(t, a.seconds)
        res = {"role": "be", "kind": kind, "iterations": n, "seconds": secs,
               "it_per_s": n / secs if secs > 0 else 0.0, "checksum": checksum,
               "sync_every": t.sync_every, "sync_ms": done}
        if hasattr(t, "model"):
            res["losses"] = losses
        emit(res)
    if not math.isfinite(checksum):
        log("warning: checksum is not finite")
    return 0


if __name__ == "__main__":
    sys.exit(main())
