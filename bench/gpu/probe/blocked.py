#!/usr/bin/env python3
"""Probe (issue 40): which of a latency-critical tenant's kernels wait for a best-effort kernel
beside it (bench/gpu/blocked-probe.sh runs it beside probe/gemmload.cu in one MPS server).

Runs the family's tenant KIND (bench/torch/family/tenant.py's builders: bulk, graph, ...) with
--batch, one request every --period-ms for --requests requests under torch.profiler, and prints
the requests' P50 and max, then for the slowest three requests: the longest kernels and the
longest gaps between one kernel's end and the next one's start on the device, each with the
kernel's name, grid, block and (where the profiler gives it) cluster. A kernel that cannot start
beside the other process's kernel shows as a gap before it; one that starts but gets no room, as a
long kernel.

Options for telling causes apart (bench/gpu/blocked-probe.sh runs them as lists, a load of its own
for each): --sync (how a request ends: the tenant's own, the context's synchronize, the stream's,
an event's, a timing event's, an event polled), --profile 0 (no profiler: latencies only), --marks
(a stream memory write, an event or a timing event behind every --mark-every'th layer, as the
interposer's marks sit behind launches). On the H200 (session 71) a batch of 128 was held beside a
64-SM green context's GEMM whichever way it ended its requests."""
import argparse
import os
import sys
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "torch", "family"))
import tenant  # noqa: E402


def install_marks(kind, every):
    """Wraps tenant.resnet50 so that the model it builds puts a mark of KIND on the current stream
    after every EVERY'th leaf layer's forward, as the interposer's sparse marks sit behind launches."""
    import ctypes
    cu = ctypes.CDLL("libcuda.so.1")
    word = torch.zeros(1, dtype=torch.int64).pin_memory()  # page-locked: under UVA its address is the device's
    seq = [0]
    events = []

    def mark(*_):
        seq[0] += 1
        if seq[0] % every:
            return
        st = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
        if kind == "memop":
            r = cu.cuStreamWriteValue64_v2(st, ctypes.c_uint64(word.data_ptr()), ctypes.c_uint64(seq[0]), ctypes.c_uint(0))
            if r:
                raise RuntimeError("cuStreamWriteValue64_v2: %d" % r)
        else:
            e = torch.cuda.Event(enable_timing=kind == "tevent")
            e.record()
            events.append(e)
            if len(events) > 64:
                events.pop(0)
    build = tenant.resnet50

    def resnet50(dev, dtype):
        m = build(dev, dtype)
        for mod in m.modules():
            if not list(mod.children()):
                mod.register_forward_hook(mark)
        return m
    tenant.resnet50 = resnet50


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--kind", default="bulk")
    p.add_argument("--batch", type=int, default=128)
    p.add_argument("--period-ms", type=float, default=150.0)
    p.add_argument("--requests", type=int, default=12)
    p.add_argument("--label", default="")
    p.add_argument("--profile", type=int, default=1, choices=[0, 1],
                   help="0: no torch.profiler (CUPTI) around the requests, only their latencies")
    p.add_argument("--sync", default="own", choices=["own", "device", "stream", "event", "tevent", "query"],
                   help="how a request ends: the tenant's own (own), torch.cuda.synchronize (device: the "
                        "context), the current stream's, an event recorded after it (event; tevent: one that takes "
                        "times, as the interposer's timed samples do) or polled (query)")
    p.add_argument("--marks", default="none", choices=["none", "memop", "event", "tevent"],
                   help="after every --mark-every'th layer of a ResNet-50 tenant (bulk, graph), what the interposer "
                        "puts behind launches on the stream: a stream memory write into page-locked host memory "
                        "(memop, cuStreamWriteValue64), an event record (event) or a timing one (tevent)")
    p.add_argument("--mark-every", type=int, default=8)
    a = p.parse_args()
    if a.sync != "own":
        def stream_sync():
            torch.cuda.current_stream().synchronize()

        def event_sync():
            e = torch.cuda.Event()
            e.record()
            e.synchronize()

        def tevent_sync():
            e = torch.cuda.Event(enable_timing=True)
            e.record()
            e.synchronize()

        def query_sync():
            e = torch.cuda.Event()
            e.record()
            while not e.query():
                pass
        # tenant.sync_fn(dev) hands out torch.cuda.synchronize: replaced before the tenant is built
        torch.cuda.synchronize = {"device": torch.cuda.synchronize, "stream": stream_sync,
                                  "event": event_sync, "tevent": tevent_sync, "query": query_sync}[a.sync]
    args = argparse.Namespace(batch=a.batch, layers=None, size=None)
    torch.manual_seed(0)
    torch.backends.cudnn.benchmark = False
    torch.set_grad_enabled(False)
    dev = torch.device("cuda")
    if a.marks != "none":
        install_marks(a.marks, a.mark_every)
    t = tenant.BUILD[a.kind](args, dev, tenant.FULL)
    for _ in range(5):
        t.request()
    torch.cuda.synchronize()
    from torch.profiler import ProfilerActivity, profile
    lat, spans = [], []
    import contextlib
    with (profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) if a.profile else contextlib.nullcontext()) as prof:
        nxt = time.perf_counter()
        for _ in range(a.requests):
            nxt += a.period_ms / 1000.0
            t0 = time.perf_counter()
            with torch.profiler.record_function("request"):
                t.request()
            t1 = time.perf_counter()
            lat.append((t1 - t0) * 1000.0)
            spans.append((t0, t1))
            time.sleep(max(0.0, nxt - time.perf_counter()))
    s = sorted(lat)
    print("%s %s batch %d (sync %s%s%s): %d requests, P50 %.1f ms, max %.1f ms, each %s" % (
        a.label, a.kind, a.batch, a.sync, "" if a.profile else ", not profiled",
        "" if a.marks == "none" else ", marks %s every %d layers" % (a.marks, a.mark_every), len(lat), s[len(s) // 2], s[-1], [round(x, 1) for x in lat]), flush=True)
    if not a.profile:
        return
    kernels = []
    for e in prof.events():
        # the request's own annotation shows on the device too, spanning the request: not an operation
        if e.device_type == torch.autograd.DeviceType.CUDA and e.time_range.elapsed_us() >= 0 and e.name != "request":
            kernels.append(e)
    kernels.sort(key=lambda e: e.time_range.start)
    if not kernels:
        print("  no device events from the profiler")
        return
    # each request's device work from its start on the host (the profiler's clocks are one): the
    # longest wait before a device operation began, counted from the request's start or the end of
    # the operations before it, names what could not start
    reqs = sorted((e for e in prof.events() if e.name == "request" and e.device_type != torch.autograd.DeviceType.CUDA),
                  key=lambda e: e.time_range.start)
    waits = []
    for r in reqs:
        s0, s1 = r.time_range.start, r.time_range.end
        prev, best = s0, (0.0, None, None)
        for e in kernels:
            if e.time_range.start < s0 or e.time_range.start > s1:
                continue
            w = e.time_range.start - prev
            if w > best[0]:
                best = (w, e, prev == s0)
            prev = max(prev, e.time_range.end)
        # and the host's wait after the last device operation in the request ended (its synchronize)
        waits.append((s1 - s0, best, s1 - prev))
    for took, (w, e, first), tail in sorted(waits, key=lambda x: -x[0])[:3]:
        if e is not None:
            print("  request of %.1f ms: longest wait %.1f ms before %s%s; %.1f ms from its last device operation's end "
                  "to the request's" % (took / 1000.0, w / 1000.0, e.name[:120],
                                        " (its first device operation)" if first else "", tail / 1000.0))
    # the profiler's device times are in us on its own clock: split the kernels into requests by the
    # gaps of the period (a request's kernels are back to back, requests a period apart)
    groups, cur = [], [kernels[0]]
    for e in kernels[1:]:
        if e.time_range.start - cur[-1].time_range.end > a.period_ms * 1000.0 * 0.3 and len(cur) > 3:
            groups.append(cur)
            cur = [e]
        else:
            cur.append(e)
    groups.append(cur)
    dur = [(g[-1].time_range.end - g[0].time_range.start) / 1000.0 for g in groups]
    print("  %d groups of kernels on the device, their spans ms %s" % (len(groups), [round(d, 1) for d in dur]))

    def desc(e):
        extra = []
        for k in ("grid", "block", "cluster", "registers per thread", "shared memory"):
            v = getattr(e, "kwinputs", {}) or {}
            if k in v:
                extra.append("%s %s" % (k, v[k]))
        return "%s%s" % (e.name[:110], (" [" + ", ".join(extra) + "]") if extra else "")
    for gi in sorted(range(len(groups)), key=lambda i: -dur[i])[:3]:
        g = groups[gi]
        print("  group %d: %.1f ms, %d kernels" % (gi, dur[gi], len(g)))
        for e in sorted(g, key=lambda e: -e.time_range.elapsed_us())[:4]:
            print("    long %.2f ms: %s" % (e.time_range.elapsed_us() / 1000.0, desc(e)))
        gaps = [(g[i + 1].time_range.start - g[i].time_range.end, i) for i in range(len(g) - 1)]
        for gap, i in sorted(gaps, reverse=True)[:4]:
            print("    gap %.2f ms before: %s (after: %s)" % (gap / 1000.0, desc(g[i + 1]), g[i].name[:60]))


if __name__ == "__main__":
    main()
