#!/usr/bin/env python3
"""A fixed piece of pure-Python work every PERIOD ms for SECONDS; prints one JSON line with each
tick's duration (ms) and start (s from the first). If a host's CPU speed changes in phases (a
neighbour, a frequency step, a busy hyperthread sibling), these durations show it without any GPU.
Usage: cpu-tick.py SECONDS [PERIOD_MS] [WORK]; SECONDS 0: until killed, a line per tick
("EPOCH_MS DURATION_MS", flushed), for splitting by the modes of a run (ticks-by-mode.py)."""
import json
import sys
import time

seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 12.0
period = (float(sys.argv[2]) if len(sys.argv) > 2 else 60.0) / 1000.0
work = int(sys.argv[3]) if len(sys.argv) > 3 else 400_000


def tick(n):
    s = 0
    for i in range(n):
        s += i * i % 7
    return s


tick(work)  # warm
if seconds == 0:
    nxt = time.perf_counter()
    while True:
        nxt += period
        a = time.perf_counter()
        tick(work)
        b = time.perf_counter()
        print(f"{int(time.time() * 1000)} {(b - a) * 1000:.2f}", flush=True)
        d = nxt - time.perf_counter()
        if d > 0:
            time.sleep(d)
t0 = time.perf_counter()
nxt = t0
ms, at = [], []
while time.perf_counter() - t0 < seconds:
    nxt += period
    a = time.perf_counter()
    tick(work)
    b = time.perf_counter()
    ms.append(round((b - a) * 1000, 2))
    at.append(round(a - t0, 3))
    d = nxt - time.perf_counter()
    if d > 0:
        time.sleep(d)
print(json.dumps({"ticks": len(ms), "ms": ms, "at": at}))
