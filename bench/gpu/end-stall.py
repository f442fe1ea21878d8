#!/usr/bin/env python3
"""Best-effort processes at a run's end, from the mix scenario's files: how long each one ran past
the run's length, its last interval between synchronizations against its median one, and how long
after the latency-critical tenant's last request its last synchronization came.

Usage: end-stall.py DIR...   (DIR: an unpacked mix-results.tgz: mix-N.json and logs-N/<mix>/<mode>/)
A best-effort process held when the latency-critical one exits shows a last interval many times its
median, ending well after the latency-critical tenant's last request.
"""
import glob
import gzip
import json
import os
import statistics
import sys


def load(path):
    if os.path.exists(path):
        return json.load(open(path))
    if os.path.exists(path + ".gz"):
        return json.load(gzip.open(path + ".gz", "rt"))
    return None


def main(dirs):
    for d in dirs:
        for path in sorted(glob.glob(os.path.join(d, "mix-*.json"))):
            idx = os.path.basename(path)[4:-5]
            for mix in json.load(open(path)).get("mixes", []):
                modes = sorted({os.path.basename(p) for p in glob.glob(os.path.join(d, "logs-" + idx, mix["name"], "*"))})
                for mode in modes:
                    base = os.path.join(d, "logs-" + idx, mix["name"], mode)
                    lc_end = None
                    for t in mix["tenants"]:
                        j = load(os.path.join(base, t["name"] + ".json"))
                        if j and t["role"] == "lc" and j.get("t_ms"):
                            end = j["t_ms"][-1] + j["lat_ms"][-1]
                            lc_end = end if lc_end is None else max(lc_end, end)
                    for t in mix["tenants"]:
                        if t["role"] != "be":
                            continue
                        j = load(os.path.join(base, t["name"] + ".json"))
                        if not j or len(j.get("sync_ms", [])) < 3:
                            continue
                        s = j["sync_ms"]
                        gaps = [b - a for a, b in zip(s, s[1:])]
                        after = "" if lc_end is None else ", last sync %+.0f ms after the LC's last request ended" % (s[-1] - lc_end)
                        print("%s %-7s %-10s ran %.2f s, last interval %.0f ms (median %.0f)%s" % (
                            mix["name"], mode, t["name"], j.get("seconds", float("nan")), gaps[-1], statistics.median(gaps), after))


if __name__ == "__main__":
    main(sys.argv[1:])
