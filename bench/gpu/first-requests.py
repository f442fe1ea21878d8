#!/usr/bin/env python3
"""A latency-critical tenant's first requests in each run, against its median.

Usage: python3 bench/gpu/first-requests.py DIR...  (every logs-K/MIX/MODE/TENANT.json under them
whose tenant reports per-request latencies, lat_ms: the LC tenants of ./xq bench mix)

Prints one line per tenant and mode: the run, its P50, its first N requests (ms; N=8, FIRST=N to
change it) and how many of requests 2-4 took over 1.15 x the P50. Read beside the standalone mode
(none slow there): a count under XQ where standalone has none is a start the node did not guard
(a wide tenant's first requests before its beat is known: docs/processes.md, "A wide tenant's
first requests")."""
import glob
import json
import os
import statistics
import sys


def main(args):
    if not args:
        print(__doc__, file=sys.stderr)
        return 2
    n = int(os.environ.get("FIRST", "8"))
    total = {}
    for d in args:
        for f in sorted(glob.glob(os.path.join(d, "**", "*.json"), recursive=True)):
            try:
                with open(f) as fh:
                    t = json.load(fh)
            except (OSError, ValueError):
                continue
            lat = t.get("lat_ms") if isinstance(t, dict) else None
            if not lat or len(lat) < 5:
                continue
            mode = os.path.basename(os.path.dirname(f))
            run = os.path.relpath(os.path.dirname(os.path.dirname(f)), d)
            p50 = statistics.median(lat)
            slow = sum(1 for x in lat[1:4] if x > 1.15 * p50)
            c = total.setdefault(mode, [0, 0])
            c[0] += 1
            c[1] += 1 if slow else 0
            print("%-10s %-52s %-8s P50 %6.2f  first %s  slow of 2-4: %d" % (
                mode, run, os.path.basename(f)[:-5], p50, " ".join("%.2f" % x for x in lat[:n]), slow))
    for mode, (runs, slow) in sorted(total.items()):
        print("%s: %d of %d runs with a slow request among 2-4" % (mode, slow, runs))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
