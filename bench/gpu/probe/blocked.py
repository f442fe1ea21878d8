#!/usr/bin/env python3
"""Probe (issue 40): which of a latency-critical tenant's kernels wait for a best-effort kernel
beside it (bench/gpu/blocked-probe.sh runs it beside probe/gemmload.cu in one MPS server).

Runs the family's tenant KIND (bench/torch/family/tenant.py's builders: bulk, graph, ...) with
--batch, one request every --period-ms for --requests requests under torch.profiler, and prints
the requests' P50 and max, then for the slowest three requests: the longest kernels and the
longest gaps between one kernel's end and the next one's start on the device, each with the
kernel's name, grid, block and (where the profiler gives it) cluster. A kernel that cannot start
beside the other process's kernel shows as a gap before it; one that starts but gets no room, as a
long kernel."""
import argparse
import os
import sys
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "torch", "family"))
import tenant  # noqa: E402


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--kind", default="bulk")
    p.add_argument("--batch", type=int, default=128)
    p.add_argument("--period-ms", type=float, default=150.0)
    p.add_argument("--requests", type=int, default=12)
    p.add_argument("--label", default="")
    a = p.parse_args()
    args = argparse.Namespace(batch=a.batch, layers=None, size=None)
    torch.manual_seed(0)
    torch.backends.cudnn.benchmark = False
    torch.set_grad_enabled(False)
    dev = torch.device("cuda")
    t = tenant.BUILD[a.kind](args, dev, tenant.FULL)
    for _ in range(5):
        t.request()
    torch.cuda.synchronize()
    from torch.profiler import ProfilerActivity, profile
    lat, spans = [], []
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
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
    print("%s %s batch %d: %d requests, P50 %.1f ms, max %.1f ms, each %s" % (
        a.label, a.kind, a.batch, len(lat), s[len(s) // 2], s[-1], [round(x, 1) for x in lat]), flush=True)
    kernels = []
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA and e.time_range.elapsed_us() >= 0:
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
        waits.append((s1 - s0, best))
    for took, (w, e, first) in sorted(waits, key=lambda x: -x[0])[:3]:
        if e is not None:
            print("  request of %.1f ms: longest wait %.1f ms before %s%s" % (
                took / 1000.0, w / 1000.0, e.name[:120], " (its first device operation)" if first else ""))
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
