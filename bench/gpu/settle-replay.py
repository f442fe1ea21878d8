#!/usr/bin/env python3
"""Replays the paired reading of recorded mix runs with a stop's alone side settled as the
scenario does now (Pauses.aloneSettleMs: 250 ms plus the longest best-effort tenant's median time
between synchronizations, at most half the shortest stop) against the fixed 250 ms it used before,
to see which readings the best-effort tenants' work left running on the device had flattered.

Usage: settle-replay.py DIR...   (each DIR searched for mix-N.json with logs-N/MIX/MODE/*.json beside)
Prints, per LC tenant and mode that had a paired reading: the ratio before and now, the settle, and
the alone requests left; then how many ratios moved by more than 5 %."""
import glob
import gzip
import json
import math
import os
import sys

SETTLE = 250


def load(path):
    """A JSON file as recorded: plain, or gzipped (results over 20 KB are kept as .gz)."""
    for p in (path, path + ".gz"):
        if os.path.exists(p):
            with (gzip.open(p, "rt") if p.endswith(".gz") else open(p)) as f:
                return json.load(f)
    return None


def pct(v, q):
    v = sorted(v)
    if not v:
        return float("nan")
    k = (len(v) - 1) * q / 100.0
    f = math.floor(k)
    c = min(f + 1, len(v) - 1)
    return v[f] + (v[c] - v[f]) * (k - f)


def split(t, lat, stops, settle):
    sh, al = [], []
    for a, l in zip(t, lat):
        e = a + l
        alone = any(a >= s0 + settle and e <= s1 for s0, s1 in stops)
        touch = any(e > s0 and a < s1 for s0, s1 in stops)
        setl = any(s1 <= a < s1 + SETTLE for s0, s1 in stops)
        if alone:
            al.append(l)
        elif not touch and not setl:
            sh.append(l)
    r = pct(sh, 99) / pct(al, 99) if len(sh) >= 10 and len(al) >= 10 else float("nan")
    return r, len(al)


def main():
    moved = total = 0
    for d in sys.argv[1:]:
        files = glob.glob(os.path.join(d, "**", "mix-*.json"), recursive=True)
        files += [f[:-3] for f in glob.glob(os.path.join(d, "**", "mix-*.json.gz"), recursive=True)]
        for mj in sorted(set(files)):
            n = os.path.basename(mj)[4:-5]
            try:
                mixes = (load(mj) or {}).get("mixes", [])
            except (OSError, ValueError):
                continue
            for m in mixes:
                base = os.path.join(os.path.dirname(mj), "logs-" + n, m["name"].replace("custom=", ""))
                if not os.path.isdir(base):
                    cands = glob.glob(os.path.join(os.path.dirname(mj), "logs-" + n, "*"))
                    base = cands[0] if len(cands) == 1 else base
                for t in m["tenants"]:
                    for mode, p in (t.get("paired") or {}).items():
                        stops = p.get("stops_ms")
                        lc = load(os.path.join(base, mode, t["name"] + ".json"))
                        if not stops or lc is None:
                            continue
                        dones = []
                        for o in m["tenants"]:
                            if o["role"] == "be":
                                bj = load(os.path.join(base, mode, o["name"] + ".json"))
                                if bj is not None:
                                    dones.append(bj.get("sync_ms") or [])
                        med = 0
                        for dd in dones:
                            if len(dd) >= 3:
                                g = sorted(dd[i] - dd[i - 1] for i in range(1, len(dd)))
                                med = max(med, g[len(g) // 2])
                        shortest = min(s1 - s0 for s0, s1 in stops)
                        settle = max(SETTLE, min(SETTLE + math.ceil(med), shortest // 2))
                        before, _ = split(lc["t_ms"], lc["lat_ms"], stops, SETTLE)
                        now, left = split(lc["t_ms"], lc["lat_ms"], stops, settle)
                        total += 1
                        flag = ""
                        if not (math.isnan(before) or math.isnan(now)) and abs(now / before - 1) > 0.05:
                            moved += 1
                            flag = "  <- moved"
                        print("%s %s %s %s: %.2f -> %.2f (settle %d ms, alone %d)%s" % (
                            os.path.relpath(mj), m["name"], t["name"], mode, before, now, settle, left, flag))
    print("readings %d, moved by more than 5 %%: %d" % (total, moved))


if __name__ == "__main__":
    main()
