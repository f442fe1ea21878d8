#!/usr/bin/env python3
"""The paired reading of recorded runs with and without the mix's start.

Usage: python3 bench/gpu/steady-paired.py MIX_JSON...   (mix-N.json files as mix-run.sh keeps them,
        with their logs-N/ folders beside them)

For each latency-critical tenant and mode: its shared P99 over its alone P99 as the bench reads it
(the requests between the stops against those inside them, settled), and the same without the
shared requests before the first stop (the mix's start: every process just begun, the node
learning them). Since session 98 the bench writes the second itself (`steady_over_alone_p99`);
this reads it from the tenants' own request lists for runs recorded before. It follows the bench's
split (Pauses.split): a request is alone inside a stop from the stop's settling on, shared where it
touches no stop and starts 250 ms or more after the last continue.
"""
import glob
import gzip
import json
import os
import sys

SETTLE_MS = 250


def pct(v, q):
    v = sorted(v)
    return v[min(len(v) - 1, int(round(q / 100.0 * (len(v) - 1))))] if v else float("nan")


def load(path):
    for p in (path, path + ".gz"):
        if os.path.exists(p):
            with (gzip.open(p, "rt") if p.endswith(".gz") else open(p)) as f:
                return json.load(f)
    return None


def main(args):
    if not args:
        print(__doc__, file=sys.stderr)
        return 2
    for mj in args:
        with open(mj) as f:
            d = json.load(f)
        base = os.path.dirname(mj)
        n = os.path.basename(mj)[len("mix-"):-len(".json")]
        for m in d["mixes"]:
            runs = sum(1 for x in d["mixes"] if x["name"] == m["name"])
            folder = m["name"] + ("#%d" % m.get("run", 1) if runs > 1 else "")
            for t in m["tenants"]:
                for mode, pv in t.get("paired", {}).items():
                    stops = pv.get("stops_ms")
                    g = load(os.path.join(base, "logs-" + n, folder, mode, t["name"] + ".json")) if stops else None
                    if not g or "lat_ms" not in g:
                        continue
                    alone, shared, steady = [], [], []
                    for lat, at in zip(g["lat_ms"], g["t_ms"]):
                        end = at + lat
                        inside = any(at >= s + pv["alone_settle_ms"] and end <= e for s, e in stops)
                        touches = any(end > s and at < e for s, e in stops)
                        settling = any(e <= at < e + SETTLE_MS for s, e in stops)
                        if inside:
                            alone.append(lat)
                        elif not touches and not settling:
                            shared.append(lat)
                            if at >= stops[0][1]:
                                steady.append(lat)
                    a = pct(alone, 99)
                    print("%-50s %-10s %-7s shared/alone %.2f (%d requests), after the start %.2f (%d)" % (
                        os.path.relpath(mj) + " " + folder, t["name"], mode, pct(shared, 99) / a, len(shared),
                        pct(steady, 99) / a, len(steady)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
