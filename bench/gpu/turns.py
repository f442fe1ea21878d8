#!/usr/bin/env python3
"""Lays the node's turns among best-effort processes beside their long commands.

Usage: turns.py MODE_DIR NODE_TXT [FROM_MS [TO_MS]]
  MODE_DIR: one mix's xq logs as mix-run.sh brings them back (logs-N/MIX/xq/, .log or .log.gz),
            run with XQ_LOG=3 (each interposed process prints its streams' commands of 1 ms or
            more at exit, on CLOCK_MONOTONIC)
  NODE_TXT: the node's output of that run (N-NAME/mix-N.txt from ab-run.sh), run with
            -Dxq.trace.wideBeats=true: the turns passed and begun, stamped with the node's
            System.nanoTime (CLOCK_MONOTONIC on Linux, the interposers' clock)
  FROM_MS, TO_MS: the window printed, in ms after the first turn (default the first 400 ms)

Prints the turn events and each process's long commands in time order (ms after the first turn
event), then per process: the time its turns lasted (from the turn's beginning, after its wait,
to the next pass) and the long commands' time that fell within its own turns and within others'.
"""
import glob
import gzip
import os
import re
import sys

TL = re.compile(r"xq: timeline (\S+): launched (\d+), from (\d+), end (\d+), estimate (\d+), horizon (\d+), commands (\d+)")
REG = re.compile(r"xq: registered with the node at \S+: \d+ slots, memory \S+/(\d+)-\d+")
PASS = re.compile(r"xq: weighed parts on \S+: pids \[([0-9, ]+)\], turns on all of it, pid (\d+)'s,.*, at (\d+) ns")
BEGIN = re.compile(r"xq: turns on \S+: pid (\d+)'s begins after a wait of (\d+) us, at (\d+) ns")


def opener(path):
    return gzip.open(path, "rt") if path.endswith(".gz") else open(path)


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    mode_dir, node_txt = sys.argv[1], sys.argv[2]
    lo = float(sys.argv[3]) if len(sys.argv) > 3 else 0.0
    hi = float(sys.argv[4]) if len(sys.argv) > 4 else lo + 400.0
    names, kernels = {}, []
    for path in sorted(glob.glob(os.path.join(mode_dir, "*.log")) + glob.glob(os.path.join(mode_dir, "*.log.gz"))):
        name = os.path.basename(path).split(".")[0]
        with opener(path) as f:
            for line in f:
                m = REG.search(line)
                if m:
                    names[int(m.group(1))] = name
                m = TL.search(line)
                if m:
                    kernels.append((int(m.group(3)), int(m.group(4)), name))
    events = []
    with opener(node_txt) as f:
        for line in f:
            m = PASS.search(line)
            if m:
                events.append((int(m.group(3)), "pass", int(m.group(2)), 0))
            m = BEGIN.search(line)
            if m:
                events.append((int(m.group(3)), "begin", int(m.group(1)), int(m.group(2))))
    if not events:
        sys.exit("no turn events in " + node_txt + " (a node run with -Dxq.trace.wideBeats=true, this build or later)")
    events.sort()
    t0 = events[0][0]
    rows = [(e[0], "turn %-5s %s%s" % (e[1], names.get(e[2], e[2]), " (waited %.1f ms)" % (e[3] / 1000) if e[1] == "begin" else ""))
            for e in events]
    rows += [(a, "  %-8s ran %.1f ms" % (n, (b - a) / 1e6)) for a, b, n in kernels if a >= t0]
    rows.sort()
    for t, text in rows:
        ms = (t - t0) / 1e6
        if lo <= ms <= hi:
            print("%9.1f  %s" % (ms, text))
    # whose turn when: from a pass (or its wait's end) to the next pass
    spans, holder, start = [], None, None
    for t, kind, pid, _ in events:
        if kind == "pass":
            if holder is not None:
                spans.append((start, t, holder))
            holder, start = pid, t
        elif kind == "begin" and pid == holder:
            start = t
    total, within, beside = {}, {}, {}
    for a, b, pid in spans:
        n = names.get(pid, str(pid))
        total[n] = total.get(n, 0) + (b - a)
    for a, b, n in kernels:
        for s, e, pid in spans:
            o = max(0, min(b, e) - max(a, s))
            if o:
                d = within if names.get(pid, str(pid)) == n else beside
                d[n] = d.get(n, 0) + o
    print("per process: its turns' time; its long commands' time within its turns / within others'")
    for n in sorted(set(total) | set(within) | set(beside)):
        print("  %-10s %8.0f ms; %8.0f / %8.0f ms" % (n, total.get(n, 0) / 1e6, within.get(n, 0) / 1e6, beside.get(n, 0) / 1e6))


if __name__ == "__main__":
    main()
