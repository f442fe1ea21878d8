#!/usr/bin/env python3
"""How much CPU the interposers' tracker threads took, by mix and mode, against every other
thread of the tenants and the node: from bench/gpu/proc-watch.py's samples (procs-N.txt.gz, one
line per thread that ran in each interval, its clock ticks at 100 Hz) between each mode's printed
start and end (mix-N.txt[.gz]). Written for the XQ_TRACK_AHEAD A/B (session 108): a best-effort
process's tracker looked at a long command every 5 us behind a limit.

    python3 bench/gpu/trackers-cpu.py CALL_DIR     (a folder with mix-N.txt[.gz] and procs-N.txt.gz)
"""
import glob
import gzip
import os
import re
import sys


def opener(p):
    return gzip.open(p, "rt") if p.endswith(".gz") else open(p)


d = sys.argv[1]
for txt in sorted(glob.glob(os.path.join(d, 'mix-*.txt')) + glob.glob(os.path.join(d, 'mix-*.txt.gz'))):
    n = re.search(r'mix-(\d+)\.txt', txt).group(1)
    spans = {}
    for l in opener(txt):
        m = re.match(r'mix (\S+): (\S+) (started|ended) at (\d+)', l)
        if m:
            mix = m.group(1); spans.setdefault(m.group(2), [0, 0])[0 if m.group(3) == 'started' else 1] = int(m.group(4))
    p = os.path.join(d, f'procs-{n}.txt.gz')
    if not os.path.exists(p): continue
    tot = {}
    seen = {}
    for l in gzip.open(p, 'rt'):
        f = l.split()
        if len(f) < 7: continue
        t, ten, comm, ticks = int(f[0]), f[1], f[4], int(f[5])
        for mode, (a, b) in spans.items():
            if a <= t <= b:
                key = (mode, 'tracker' if comm == 'xq-tracker' else 'other')
                tot[key] = tot.get(key, 0) + ticks
    out = []
    for mode, (a, b) in spans.items():
        secs = (b - a) / 1000
        out.append(f"{mode}: trackers {tot.get((mode,'tracker'),0)/100/secs:.2f} cores, the other threads of the tenants and the node {tot.get((mode,'other'),0)/100/secs:.2f}")
    print(mix, '|', '; '.join(out))
