#!/usr/bin/env python3
"""The latency-critical tenants of mix runs in absolute terms: each mode's P99 (ms) with the
best-effort tenants running (shared) and stopped (alone), and the shared P99 over native's alone
P99 in the same run; then the P50s likewise, with each mode's alone P50 over native's (a reading
across modes: the host's speed drifts between them, so read it with the order the modes ran in,
printed after the mix's name; docs/performance.md, "The eager decoder's median taken apart").

The paired reading the mix scenario judges by (shared over alone, in the same mode) says what the
best-effort tenants cost a tenant; it cannot see what the other latency-critical tenants cost it,
since they run in both phases. Native's alone phase has the same latency-critical company under
the GPU's time slices: the last column is how far each mode is from that.

    python3 bench/gpu/lc-absolute.py CALL_DIR...   (folders holding mix-N.json, as mix-run.sh brings them back)
"""
import glob
import gzip
import json
import os
import sys

MODES = ("native", "xq", "xq-alt", "mps")


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as fh:
        return json.load(fh)



def run_order(m):
    """The modes run together, in the order they ran: the JSON's modes_order (since session 76), else
    the first stop of each paired mode (older runs); empty where neither says."""
    order = m.get("modes_order")
    if order:
        return [mo for mo in order if mo not in ("standalone", "xq-alone")]
    first = {}
    for t in m.get("tenants", []):
        for mo, p in (t.get("paired") or {}).items():
            if isinstance(p, dict) and p.get("stops_ms"):
                first[mo] = min(first.get(mo, p["stops_ms"][0][0]), p["stops_ms"][0][0])
    return sorted(first, key=first.get)

def main(dirs):
    if not dirs:
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    for d in dirs:
        files = sorted(glob.glob(os.path.join(d, "mix-*.json")) + glob.glob(os.path.join(d, "mix-*.json.gz")))
        for f in files:
            try:
                mixes = load(f)["mixes"]
            except (OSError, ValueError, KeyError):
                continue
            for m in mixes:
                order = run_order(m)
                print("%s %s%s%s" % (os.path.relpath(f), m.get("name"), "#%d" % m["run"] if m.get("run") else "", " (ran %s)" % ", ".join(order) if len(order) > 1 else ""))
                for t in m.get("tenants", []):
                    p = t.get("paired") or {}
                    modes = [mo for mo in MODES if isinstance(p.get(mo), dict) and "shared_p99_ms" in p[mo]]
                    if not modes:
                        continue
                    cells = ["%s %.2f/%.2f" % (mo, p[mo]["shared_p99_ms"], p[mo]["alone_p99_ms"]) for mo in modes]
                    line = "  %-10s P99 ms shared/alone: %s" % (t.get("name"), "  ".join(cells))
                    if "native" in modes and p["native"]["alone_p99_ms"] > 0:
                        base = p["native"]["alone_p99_ms"]
                        line += "  | shared over native alone: " + " ".join("%s %.2f" % (mo, p[mo]["shared_p99_ms"] / base) for mo in modes)
                    print(line)
                    if all("alone_p50_ms" in p[mo] and "shared_p50_ms" in p[mo] for mo in modes):
                        cells = ["%s %.2f/%.2f" % (mo, p[mo]["shared_p50_ms"], p[mo]["alone_p50_ms"]) for mo in modes]
                        line = "  %-10s P50 ms shared/alone: %s" % ("", "  ".join(cells))
                        if "native" in modes and p["native"]["alone_p50_ms"] > 0:
                            base = p["native"]["alone_p50_ms"]
                            line += "  | alone over native alone: " + " ".join(
                                "%s %.2f" % (mo, p[mo]["alone_p50_ms"] / base) for mo in modes if mo != "native")
                        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
