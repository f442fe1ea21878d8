#!/usr/bin/env python3
"""The latency-critical tenants of a mix run, over all their requests and without their first
ones: how much of a short run's P99 comes from the start, before the node has learnt the tenant's
beat (docs/processes.md, "Arrival guards"). Reads each tenant's JSON line (lat_ms) under a
mix-run.sh logs folder; prints one line per LC tenant and mode.

    python3 bench/gpu/lc-phases.py [--skip 15] LOGS_DIR...
"""
import argparse
import glob
import json
import os


def pct(s, q):
    return s[min(len(s) - 1, int(round(q / 100.0 * (len(s) - 1))))]


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--skip", type=int, default=15, help="requests left out at the start (default 15)")
    p.add_argument("logs", nargs="+")
    a = p.parse_args()
    for d in a.logs:
        for f in sorted(glob.glob(os.path.join(d, "*", "*.json")) + glob.glob(os.path.join(d, "*", "*", "*.json"))):
            try:
                with open(f) as fh:
                    r = json.loads(fh.read().strip().splitlines()[-1])
            except (OSError, ValueError, IndexError):
                continue
            if r.get("role") != "lc" or not r.get("lat_ms"):
                continue
            lat = r["lat_ms"]
            s, t = sorted(lat), sorted(lat[a.skip:])
            worst = sorted(range(len(lat)), key=lambda i: -lat[i])[:3]
            print("%-60s n %3d  P50 %.3f  P99 %.3f  | without the first %d: P50 %.3f  P99 %.3f | worst at %s" % (
                os.path.relpath(f, d), len(lat), pct(s, 50), pct(s, 99), a.skip, pct(t, 50) if t else 0,
                pct(t, 99) if t else 0, worst))


if __name__ == "__main__":
    main()
