#!/usr/bin/env python3
"""Where the family's misses are: every tenant of every recorded mix run, grouped by its kind and its company.

Usage: python3 bench/gpu/miss-board.py [--since N] [--mode xq] DIR...

Reads the mix scenario's JSON files (mix-*.json, plain or gzipped) under each DIR, recursively, from
sessions N and later (the session is the -sNN in the path; default 0: all), and judges MODE (default
xq; an A/B call's xq-alt where --mode xq-alt). Each tenant goes into a group by its kind, its role
and its company:
  best-effort:      "LC+triton" (a latency-critical tenant and Triton beside it), "LC" (a
                    latency-critical tenant, no Triton), "triton" (Triton, no latency-critical
                    tenant), "BE" (other best-effort processes only); Triton itself by "LC" or "BE"
  latency-critical: "+long" (a GEMM or fp32 trainer beside it: long kernels), "+triton" (Triton,
                    no long kernels), "+other"
For each group: how many readings, how many missed the tenant's own goal (the scenario's goal_met
for the tenant), and medians (with the quartiles) of
  best-effort:      rate / native as the scenario judged it (between the stops where the run
                    paused, else over the whole run), in its first stretch (to the first stop), after
                    it, and by its median interval between synchronizes, where the file has them
  latency-critical: P99 shared / alone in the paired reading for MODE and for native in the same
                    runs, how many of MODE's misses the scenario named host-slowed
                    (lc_miss_host_slowed, session 112 on)
A reading without the figure is left out of that median (the count in brackets says how many there were).
"""
import argparse
import collections
import gzip
import json
import os
import re
import statistics
import sys

LC_KINDS = {'graph', 'graphp', 'decode', 'decodep', 'decodeg', 'chat', 'bulk', 'bulkp'}
LONG = {'gemm', 'train32'}


def load(path):
    opener = gzip.open if path.endswith('.gz') else open
    with opener(path, 'rt') as f:
        return json.load(f)


def files(dirs, since):
    for d in dirs:
        for root, _, names in os.walk(d):
            m = re.search(r'-s(\d+)', root)
            if since and (not m or int(m.group(1)) < since):
                continue
            for name in sorted(names):
                if re.match(r'mix-\d+\.json(\.gz)?$', name):
                    yield os.path.join(root, name)


def pick(v, mode):
    if isinstance(v, dict):
        v = v.get(mode)
    return v if isinstance(v, (int, float)) else None


def company(t, kinds, roles):
    others = list(kinds)
    others.remove(t['kind'])
    lc = any(r == 'lc' for r in roles_without(roles, kinds, t['kind']))
    if t.get('role') == 'be':
        if t['kind'] == 'triton':
            return 'LC' if lc else 'BE'
        if lc:
            return 'LC+triton' if 'triton' in others else 'LC'
        return 'triton' if 'triton' in others else 'BE'
    if any(k in LONG for k in others):
        return '+long'
    return '+triton' if 'triton' in others else '+other'


def roles_without(roles, kinds, kind):
    out = list(zip(kinds, roles))
    for i, (k, _) in enumerate(out):
        if k == kind:
            del out[i]
            break
    return [r for _, r in out]


def quart(xs):
    xs = sorted(x for x in xs if x is not None)
    if not xs:
        return '-'
    if len(xs) < 4:
        return '%.2f (%d)' % (statistics.median(xs), len(xs))
    q = statistics.quantiles(xs, n=4)
    return '%.2f [%.2f-%.2f] (%d)' % (statistics.median(xs), q[0], q[2], len(xs))


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--since', type=int, default=0)
    ap.add_argument('--mode', default='xq')
    ap.add_argument('dirs', nargs='+')
    a = ap.parse_args(argv)
    groups = collections.defaultdict(list)
    runs = 0
    for path in files(a.dirs, a.since):
        try:
            d = load(path)
        except (OSError, ValueError):
            continue
        for mx in d.get('mixes', []):
            if a.mode not in (mx.get('modes_order') or [a.mode]):
                continue
            ts = mx.get('tenants', [])
            kinds = [t.get('kind') for t in ts]
            roles = [t.get('role') for t in ts]
            slowed = set(mx.get('lc_miss_host_slowed') or [])
            runs += 1
            for t in ts:
                if t.get('kind') is None or t.get('role') not in ('lc', 'be'):
                    continue
                key = (t['role'], t['kind'], company(t, kinds, roles))
                if t['role'] == 'be':
                    whole = t.get(a.mode + '_vs_native')
                    between = pick(t.get('steady_rate_vs_native'), a.mode)
                    groups[key].append({
                        'met': t.get('goal_met'),
                        # what the scenario judges by: the rate between the stops where the run
                        # paused, else over the whole run
                        'judged': between if between is not None else whole if isinstance(whole, (int, float)) else None,
                        'start': pick(t.get('start_rate_vs_native'), a.mode),
                        'after': pick(t.get('after_start_rate_vs_native'), a.mode),
                        'interval': pick(t.get('steady_vs_native'), a.mode)})
                else:
                    p = t.get('paired') or {}
                    groups[key].append({
                        'met': t.get('goal_met'),
                        'mode': pick((p.get(a.mode) or {}).get('shared_over_alone_p99'), a.mode),
                        'native': pick((p.get('native') or {}).get('shared_over_alone_p99'), a.mode),
                        'slowed': t.get('name') in slowed})
    if not groups:
        print('no mix runs found under %s%s' % (', '.join(a.dirs), ' from session %d on' % a.since if a.since else ''))
        return 1
    print('%d mix runs judged in mode %s%s' % (runs, a.mode, ' from session %d on' % a.since if a.since else ''))
    print()
    print('| best-effort | company | readings | missed | rate/native, judged | first stretch | after it | median interval |')
    print('|---|---|---|---|---|---|---|---|')
    for key in sorted(k for k in groups if k[0] == 'be'):
        g = groups[key]
        print('| %s | %s | %d | %d | %s | %s | %s | %s |' % (
            key[1], key[2], len(g), sum(1 for x in g if x['met'] is False),
            quart([x['judged'] for x in g]), quart([x['start'] for x in g]),
            quart([x['after'] for x in g]), quart([x['interval'] for x in g])))
    print()
    print('| latency-critical | company | readings | missed | host-slowed | P99 shared/alone, %s | native |' % a.mode)
    print('|---|---|---|---|---|---|---|')
    for key in sorted(k for k in groups if k[0] == 'lc'):
        g = groups[key]
        print('| %s | %s | %d | %d | %d | %s | %s |' % (
            key[1], key[2], len(g), sum(1 for x in g if x['met'] is False), sum(1 for x in g if x['slowed']),
            quart([x['mode'] for x in g]), quart([x['native'] for x in g])))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
