#!/usr/bin/env python3
"""What each best-effort tenant did while the latency-critical ones worked, from the tenants' own reports.

Usage: python3 bench/gpu/be-beside.py [--held] DIR...

DIR is a mix run's results (bench/gpu/mix-run.sh's directory, or a docs/results call directory):
its logs-N/MIX/MODE/TENANT.json files, or the logs-N.tgz that holds them, and the mix-N.json the
paired reading's stops come from. Each latency-critical tenant's report has every request's start
(t_ms) and latency (lat_ms); each best-effort tenant's has the time of every synchronize (sync_ms,
one every sync_every steps). Between two synchronizes a tenant made sync_every steps; this splits
each such interval into the time some latency-critical tenant of the mix worked (a request in
progress) and the rest, and fits the two rates that best explain every interval's steps (least
squares, steps = rate_free x free time + rate_busy x busy time), leaving out the intervals that
hold one of the paired reading's stops (the company stopped) and the first two. A reading needs
8 intervals and the LC tenants at work for 5-95 % of them; a tenant that synchronizes seldom (a
GEMM process every 4 kernels) gives a rough fit, which can come out below 0.

For every mix, mode and best-effort tenant it prints the share of the time the LC tenants worked,
the rate with none working (steps a second), the rate while one worked, and that over the first:
0 is a tenant held whenever a latency-critical one works, 1 one that does not notice it. Natively
the GPU's time slices give it 0.6-0.7 beside an eager decoder or a chat server (H100, session 116).
--held: only the readings whose rate while the LC works is under 0.1 of its rate alone in a mode
other than native while native's is 0.3 or more: a best-effort tenant held where native sharing
let it run.
"""
import argparse
import glob
import json
import os
import re
import sys

import mixlogs


def reports(d):
    """{(run, mix, mode): {tenant: report}} under d, from files or logs-N.tgz."""
    out = {}
    for run, mix, mode, name, data in mixlogs.walk(d, ('.json',)):
        try:
            out.setdefault((run, mix, mode), {})[name[:-5]] = json.loads(data)
        except ValueError:
            pass
    return out


def stops(d):
    """{(run, mix, mode): [(from_ms, to_ms)]} from the paired readings in d's mix-N.json."""
    out = {}
    for p in glob.glob(os.path.join(d, 'mix-*.json')):
        run = re.search(r'mix-(\d+)\.json$', p)
        if not run:
            continue
        try:
            with open(p) as f:
                doc = json.load(f)
        except ValueError:
            continue
        for m in doc.get('mixes', []):
            for t in m.get('tenants', []):
                for mode, r in (t.get('paired') or {}).items():
                    if r and r.get('stops_ms'):
                        out[(run.group(1), m['name'], mode)] = [tuple(s) for s in r['stops_ms']]
    return out


def overlap(a, b, spans):
    return sum(max(0.0, min(b, y) - max(a, x)) for x, y in spans)


def fit(rows):
    """Least squares of n = rf x f + rb x u over rows (n, f, u), f and u in seconds."""
    sff = sum(f * f for _, f, _ in rows)
    suu = sum(u * u for _, _, u in rows)
    sfu = sum(f * u for _, f, u in rows)
    snf = sum(n * f for n, f, _ in rows)
    snu = sum(n * u for n, _, u in rows)
    det = sff * suu - sfu * sfu
    if det <= 1e-12 * max(sff * suu, 1e-30):
        return None
    return (snf * suu - snu * sfu) / det, (snu * sff - snf * sfu) / det


def reading(tenants, stop_spans):
    lcs = {n: r for n, r in tenants.items() if r.get('role') == 'lc' and r.get('t_ms') and r.get('lat_ms')}
    if not lcs:
        return []
    busy = sorted((s, s + l) for r in lcs.values() for s, l in zip(r['t_ms'], r['lat_ms']))
    merged = []
    for a, b in busy:
        if merged and a <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], b))
        else:
            merged.append((a, b))
    lo, hi = merged[0][0], merged[-1][1]
    out = []
    for name, r in sorted(tenants.items()):
        if r.get('role') != 'be' or not r.get('sync_ms'):
            continue
        s, n = r['sync_ms'], r.get('sync_every', 1) or 1
        rows, busy_t, total_t = [], 0.0, 0.0
        for i in range(2, len(s) - 1):
            a, b = s[i], s[i + 1]
            if a < lo or b > hi or b <= a or any(min(b, y) > max(a, x) for x, y in stop_spans):
                continue
            u = overlap(a, b, merged)
            rows.append((n, (b - a - u) / 1000.0, u / 1000.0))
            busy_t += u
            total_t += b - a
        # both kinds of time in some measure, or the fit has nothing to tell them apart by
        if len(rows) < 8 or total_t <= 0 or not 0.05 <= busy_t / total_t <= 0.95:
            continue
        got = fit(rows)
        if not got:
            continue
        rf, rb = got
        out.append((name, ','.join(sorted(lcs)), busy_t / total_t, rf, rb, len(rows)))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--held', action='store_true', help='only best-effort tenants held where native sharing let them run')
    ap.add_argument('dirs', nargs='+')
    a = ap.parse_args()
    found = 0
    for d in a.dirs:
        rep, st = reports(d), stops(d)
        by_mix = {}
        for (run, mix, mode), tenants in rep.items():
            for name, lcs, share, rf, rb, k in reading(tenants, st.get((run, mix, mode), [])):
                by_mix.setdefault((run, mix), {}).setdefault(name, {})[mode] = (lcs, share, rf, rb, k)
        for (run, mix), bes in sorted(by_mix.items()):
            for be, modes in sorted(bes.items()):
                nat = modes.get('native')
                nat_ratio = nat[3] / nat[2] if nat and nat[2] > 0 else None
                for mode, (lcs, share, rf, rb, k) in sorted(modes.items()):
                    ratio = rb / rf if rf > 0 else float('nan')
                    if a.held and not (mode != 'native' and ratio < 0.1 and nat_ratio is not None and nat_ratio >= 0.3):
                        continue
                    found += 1
                    print(f'{d}  run {run}  {mix:44s} {mode:7s} {be:10s} beside {lcs}: LC working {share:4.2f} of the time; '
                          f'{rf:7.1f} steps/s with none working, {rb:7.1f} while one works ({ratio:5.2f}; {k} intervals)')
    if not found:
        print('no readings' + (' of a best-effort tenant held where native let it run' if a.held else ''), file=sys.stderr)


if __name__ == '__main__':
    main()
