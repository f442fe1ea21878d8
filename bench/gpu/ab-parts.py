#!/usr/bin/env python3
"""An A/B of the node's default (mode xq) against one changed setting (mode xq-alt), run by run.

Usage: python3 bench/gpu/ab-parts.py DIR_OR_JSON...   (the mix-N.json files of ./xq bench mix runs
made with MODES=...,xq,xq-alt ALT=...; files without both modes are skipped)

For every run of every mix, one line per latency-critical tenant: its P99 with the company running
over its P99 with the company stopped (the paired reading, PAUSE=), then where its requests' time
went, the device's part (P50/P99 ms, from the first launch to the synchronize's return) and the
host's part (P99 ms); one line per best-effort tenant: its rate over native's, overall and between
the stops. A last paragraph counts, over every latency-critical reading, in how many the changed
setting's device-part P99 was lower by more than 5 %, within 5 %, or higher by more than 5 %, and
the same for the shared/alone ratio: the device's part is what a setting of the device (an MPS
client priority, a share) can move; the host's part moves with the host's CPU, run to run.
"""
import glob
import json
import os
import sys


def files(args):
    for a in args:
        if os.path.isdir(a):
            yield from sorted(glob.glob(os.path.join(a, "mix-*.json")))
        else:
            yield a


def get(d, *keys):
    for k in keys:
        if not isinstance(d, dict):
            return None
        d = d.get(k)
    return d


def fmt(v, spec=".2f"):
    return "-" if v is None else format(v, spec)


def compare(counts, key, a, b):
    if a is None or b is None or a <= 0:
        return
    r = b / a
    c = counts.setdefault(key, [0, 0, 0])
    c[0 if r < 0.95 else 1 if r <= 1.05 else 2] += 1


def main(args):
    if not args:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    counts = {}
    seen = 0
    for f in files(args):
        d = json.load(open(f))
        alt = get(d, "params", "alt") or next((v for k, v in d.get("params", {}).items() if k == "alt"), None)
        for m in d.get("mixes", []):
            if not {"xq", "xq-alt"} <= set(m.get("modes_order", [])):
                continue
            seen += 1
            print(f"{m['name']}  ({f}; xq-alt: {alt}; goals met: {m.get('goals_met')})")
            for t in m["tenants"]:
                if t["role"] == "lc":
                    p, h = t.get("paired", {}), t.get("host_device_parts", {})
                    sa = [get(p, mode, "shared_over_alone_p99") for mode in ("native", "xq", "xq-alt")]
                    dev = [(get(h, mode, "device_p50_ms"), get(h, mode, "device_p99_ms")) for mode in ("xq", "xq-alt")]
                    host = [get(h, mode, "host_p99_ms") for mode in ("xq", "xq-alt")]
                    print(f"  LC {t['name']:10s} shared/alone native {fmt(sa[0])}, xq {fmt(sa[1])}, xq-alt {fmt(sa[2])};"
                          f" device P50/P99 ms xq {fmt(dev[0][0], '.3f')}/{fmt(dev[0][1], '.3f')},"
                          f" xq-alt {fmt(dev[1][0], '.3f')}/{fmt(dev[1][1], '.3f')};"
                          f" host P99 ms xq {fmt(host[0])}, xq-alt {fmt(host[1])}")
                    compare(counts, "LC device-part P99", dev[0][1], dev[1][1])
                    compare(counts, "LC shared/alone P99", sa[1], sa[2])
                else:
                    steady = t.get("steady_rate_vs_native") or {}
                    print(f"  BE {t['name']:10s} rate/native xq {fmt(t.get('xq_vs_native'))}, xq-alt {fmt(t.get('xq-alt_vs_native'))};"
                          f" between the stops xq {fmt(steady.get('xq'))}, xq-alt {fmt(steady.get('xq-alt'))}")
                    compare(counts, "BE rate between the stops", steady.get("xq"), steady.get("xq-alt"))
    print()
    print(f"{seen} runs of mixes with both modes")
    for k, (lower, same, higher) in counts.items():
        print(f"{k}, xq-alt over xq: lower by more than 5 % in {lower}, within 5 % in {same}, higher by more than 5 % in {higher}")
    return 0 if seen else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
