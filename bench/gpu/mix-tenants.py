#!/usr/bin/env python3
"""Prints every tenant's figures of a mix run from its processes' own JSON lines, one row per mix
and mode: what a run cut short by its time limit still has (the scenario writes its JSON report
only at the end). Usage: mix-tenants.py DIR... (the run's /tmp/xq-mix-* folder, or a copy)."""
import glob
import json
import os
import sys


def rows(d):
    for mix in sorted(os.listdir(d)):
        if not os.path.isdir(os.path.join(d, mix)):
            continue
        # standalone-KIND folders hold the tenant's files themselves
        modes = [m for m in sorted(os.listdir(os.path.join(d, mix))) if os.path.isdir(os.path.join(d, mix, m))] or [""]
        for mode in modes:
            cells = []
            for f in sorted(glob.glob(os.path.join(d, mix, mode, "*.json"))):
                t = os.path.basename(f)[:-5]
                try:
                    j = json.loads(open(f).read().strip().splitlines()[-1])
                except (ValueError, IndexError) as e:
                    j = {"error": "no JSON line (%s)" % e}
                if "p99_ms" in j:
                    cells.append("%s P50 %.2f / P99 %.2f ms (%d requests)" % (t, j["p50_ms"], j["p99_ms"], j["requests"]))
                elif "it_per_s" in j:
                    cells.append("%s %.2f it/s" % (t, j["it_per_s"]))
                else:
                    cells.append("%s: %s" % (t, j.get("error", "?")))
            yield mix, mode, "; ".join(cells)


for d in sys.argv[1:]:
    for mix, mode, text in rows(d):
        print("| %s | %s | %s |" % (mix, mode, text))
