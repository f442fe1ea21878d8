#!/usr/bin/env python3
"""Samples /proc/stat every 250 ms until killed (SIGTERM) and prints, per sample, the whole
machine's busy, iowait and steal share (percent of all CPUs) since the last sample, with the time."""
import signal
import sys
import time


def read():
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    # user nice system idle iowait irq softirq steal
    total = sum(v[:8])
    idle = v[3] + v[4]
    return total, idle, v[4], v[7]


stop = False


def on_term(*_):
    global stop
    stop = True


signal.signal(signal.SIGTERM, on_term)
t0 = time.time()
prev = read()
print("t_s busy% iowait% steal%", flush=True)
while not stop:
    time.sleep(0.25)
    cur = read()
    dt = cur[0] - prev[0]
    if dt > 0:
        busy = 100.0 * (dt - (cur[1] - prev[1])) / dt
        print(f"{time.time() - t0:.2f} {busy:.1f} {100.0 * (cur[2] - prev[2]) / dt:.1f} {100.0 * (cur[3] - prev[3]) / dt:.1f}", flush=True)
    prev = cur
