#!/usr/bin/env python3
"""How far two samples of the same condition disagree at P99: the noise a latency-critical
tenant's paired verdict is read against.

Usage: python3 bench/gpu/lc-aa.py [--over 1.10] DIR...

DIR is a mix run's results (bench/gpu/mix-run.sh's directory, or a docs/results call directory):
its mix-N.json (the paired reading's stops of the best-effort tenants) and logs-N/MIX/MODE/ files
or logs-N.tgz. For each latency-critical tenant and mode with a paired reading, the requests made
while the company was stopped (the verdict's "alone" half) are split into two parts, those of the
even-numbered stops and those of the odd-numbered ones: the same tenant, host and mode, nothing
beside it. Their P99s' ratio (the larger over the smaller) is what the verdict's shared/alone P99
would read if the company changed nothing. Prints one line a reading, then per tenant kind and mode
the median ratio and how many readings were over --over (the goal's 1.10): where that is most of
them, a verdict at that margin says more about the run's length than about the scheduler.
"""
import argparse
import json
import re

import mixlogs


def p99(xs):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(0.99 * (len(xs) - 1))))] if xs else None


def readings(d):
    st = mixlogs.stops(d)
    for run, mix, mode, name, text in mixlogs.walk(d, ('.json',)):
        try:
            r = json.loads(text.strip().splitlines()[-1])
        except (ValueError, IndexError):
            continue
        sp = st.get((run, mix, mode, name[:-5]))
        if r.get('role') != 'lc' or not sp or not r.get('t_ms'):
            continue
        _, alone = mixlogs.halves(r, sp)
        parts = ([], [])
        for i in alone:
            k = next((k for k, (a, b) in enumerate(sp) if a <= r['t_ms'][i] <= b), -1)
            if k >= 0:
                parts[k % 2].append(r['lat_ms'][i])
        if min(len(parts[0]), len(parts[1])) >= 10:
            a, b = p99(parts[0]), p99(parts[1])
            yield run, mix, mode, name[:-5], max(a, b) / min(a, b), len(parts[0]), len(parts[1])


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument('--over', type=float, default=1.10, help='count the readings over this ratio (default 1.10, the goal)')
    a = mixlogs.parse(p, slow=False)
    if a.over <= 1.0:
        p.error('--over %s: must be over 1 (a ratio of the larger P99 to the smaller)' % a.over)
    by = {}
    for d in a.dirs:
        for run, mix, mode, name, ratio, n0, n1 in readings(d):
            print('%s run %s  %s  %s  %s: alone, even stops / odd stops P99 %.3f (%d / %d requests)' % (d, run, mix, mode, name, ratio, n0, n1))
            kind = re.sub(r'-\d+$', '', name)
            by.setdefault((kind, 'xq' if mode.startswith('xq') else mode), []).append(ratio)
    for (kind, mode), rs in sorted(by.items()):
        rs.sort()
        print('%-8s %-7s %3d readings: median %.3f, over %.2f in %d' % (kind, mode, len(rs), rs[len(rs) // 2], a.over, sum(1 for x in rs if x > a.over)))
    if not by:
        print('no paired reading with enough requests in its stops under %s' % ' '.join(a.dirs))


if __name__ == '__main__':
    main()
