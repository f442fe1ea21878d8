#!/usr/bin/env python3
"""Best-effort rates stretch by stretch between the paired reading's stops, per mode, from the mix
scenario's files: where in a run a mode loses against native sharing (the start, or every stretch).

Usage: be-windows.py DIR...   (DIR: an unpacked mix-results.tgz: mix-N.json and logs-N/<mix>/<mode>/)
For each best-effort tenant and mode: its steps a second in each stretch (the run's start to the
first stop, between two stops, the last stop to the end), and each stretch over native's.
"""
import glob
import gzip
import json
import os
import sys


def stretches(sync_ms, every, stops):
    if not sync_ms or not stops:
        return []
    edges = [(sync_ms[0] - 1, stops[0][0])]
    edges += [(stops[k][1], stops[k + 1][0]) for k in range(len(stops) - 1)]
    edges.append((stops[-1][1], sync_ms[-1] + 1))
    out = []
    for a, b in edges:
        n = sum(1 for s in sync_ms if a < s <= b)
        out.append(n * every / ((b - a) / 1000.0) if b > a else float("nan"))
    return out


def main(dirs):
    for d in dirs:
        for path in sorted(glob.glob(os.path.join(d, "mix-*.json"))):
            idx = os.path.basename(path)[4:-5]
            doc = json.load(open(path))
            for mix in doc.get("mixes", []):
                lcs = [t for t in mix["tenants"] if t["role"] == "lc" and t.get("paired")]
                if not lcs:
                    continue
                paired = lcs[0]["paired"]
                for t in mix["tenants"]:
                    if t["role"] != "be":
                        continue
                    rows = {}
                    for mode in paired:
                        f = os.path.join(d, "logs-" + idx, mix["name"], mode, t["name"] + ".json")
                        if os.path.exists(f):
                            j = json.load(open(f))
                        elif os.path.exists(f + ".gz"):  # as filed under docs/results
                            j = json.load(gzip.open(f + ".gz", "rt"))
                        else:
                            continue
                        rows[mode] = stretches(j.get("sync_ms", []), j.get("sync_every", 1), paired[mode].get("stops_ms", []))
                    base = rows.get("native")
                    print("%s %s (%s)" % (mix["name"], t["name"], path))
                    for mode, r in rows.items():
                        line = "  %-8s steps/s " % mode + " ".join("%7.1f" % v for v in r)
                        if base and mode != "native" and len(base) == len(r):
                            line += "   over native " + " ".join("%.2f" % (v / b if b else float("nan")) for v, b in zip(r, base))
                        print(line)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        print(__doc__)
        sys.exit(2)
    main(sys.argv[1:])
