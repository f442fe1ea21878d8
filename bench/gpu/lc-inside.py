#!/usr/bin/env python3
"""What the node was doing to the best-effort queues while a latency-critical request ran, slow
requests against the rest.

Usage: python3 bench/gpu/lc-inside.py [--slow 1.5] DIR...

DIR is a mix run's results (bench/gpu/mix-run.sh's directory, or a docs/results call directory):
its logs-N/MIX/MODE/ files (TENANT.json, node-queues.tsv), or the logs-N.tgz that holds them.
Each latency-critical (LC) tenant's report gives every request's start (t_ms) and latency (lat_ms);
the node's queue samples (node-queues.tsv, one line per process queue every 47 ms; 50 ms before
session 122) give each best-effort (BE) queue's state then: held, its limits (guarded, narrowed,
configured...) and its share of the device's multiprocessors.

A request is slow when its latency is over --slow x the tenant's median in that mode. For every
mix, mode (those with queue samples) and LC tenant, this prints how many requests were slow, then
for each BE queue that had work the samples taken inside the slow requests and inside the others,
tallied by what the node had it do: `held` (suspended by the scheduler), `running` with its limits
(with the median and range of its share where under 100 %), `idle`. A BE queue found running unheld at full share
inside the slow requests, and held inside the others, is the company those requests met.

With the sampler locked to a beat (50 ms against 100 ms), samples may never fall inside a request:
the line then says so.
"""
import argparse
import json
import statistics

import mixlogs


def runs(d):
    """{(run, mix, mode): {'reports': {tenant: report}, 'queues': [row dict]}} under d."""
    out = {}
    for run, mix, mode, name, data in mixlogs.walk(d, ('.json', 'node-queues.tsv')):
        slot = out.setdefault((run, mix, mode), {'reports': {}, 'queues': []})
        if name.endswith('.json'):
            try:
                slot['reports'][name[:-5]] = json.loads(data.strip().splitlines()[-1])
            except (ValueError, IndexError):
                pass
        elif name == 'node-queues.tsv':
            lines = data.splitlines()
            if not lines:
                continue
            head = lines[0].split('\t')
            for line in lines[1:]:
                cells = line.split('\t')
                if len(cells) == len(head):
                    slot['queues'].append(dict(zip(head, cells)))
    return out


def what(row):
    """How the node had one sampled queue: held, running with its limits, or idle; and its share."""
    if row.get('held') == '1':
        return 'held', None
    if row.get('state') == 'idle' and row.get('in_flight') in ('0', None) and row.get('pending') in ('0', None):
        return 'idle', None
    try:
        share = int(row.get('sm_share', '100'))
    except ValueError:
        share = 100
    return 'running ' + row.get('limits', '?'), share


def tally(rows):
    """'N samples: held a, running narrowed b (share P50 x %, y-z), ...', most common first."""
    if not rows:
        return 'no samples'
    counts = {}
    shares = {}
    for r in rows:
        k, share = what(r)
        counts[k] = counts.get(k, 0) + 1
        if share is not None:
            shares.setdefault(k, []).append(share)
    parts = []
    for k, v in sorted(counts.items(), key=lambda kv: -kv[1]):
        sh = sorted(shares.get(k, []))
        if sh and sh[0] < 100:
            parts.append('%s %d (share P50 %d %%, %d-%d)' % (k, v, sh[len(sh) // 2], sh[0], sh[-1]))
        else:
            parts.append('%s %d' % (k, v))
    return '%d samples: ' % len(rows) + ', '.join(parts)


def report(d, slow_factor):
    lines = []
    for (run, mix, mode), slot in sorted(runs(d).items()):
        if not slot['queues']:
            continue
        lcs = {n: r for n, r in slot['reports'].items() if r.get('role') == 'lc' and r.get('lat_ms') and r.get('t_ms')}
        bes = {n for n, r in slot['reports'].items() if r.get('role') != 'lc'}
        for lc, r in sorted(lcs.items()):
            lat = r['lat_ms']
            med = statistics.median(lat)
            spans = [(t, t + l, l > slow_factor * med) for t, l in zip(r['t_ms'], lat)]
            nslow = sum(1 for s in spans if s[2])
            lines.append('run %s  %s  %s  %s: %d of %d requests slow (over %.1f x its median %.1f ms)'
                         % (run, mix, mode, lc, nslow, len(spans), slow_factor, med))
            by_queue = {}
            for row in slot['queues']:
                name = row.get('name', '')
                if name.split('/')[0] not in bes:
                    continue
                by_queue.setdefault(name, []).append(row)
            for q, rows in sorted(by_queue.items()):
                if all(x.get('completed') == rows[0].get('completed') for x in rows):
                    continue  # a queue that never had work
                inside = {True: [], False: []}
                for row in rows:
                    try:
                        t = float(row['t_ms'])
                    except (KeyError, ValueError):
                        continue
                    for a, b, slow in spans:
                        if a <= t <= b:
                            inside[slow].append(row)
                            break
                lines.append('    %-24s inside slow requests: %s; inside the others: %s' % (q, tally(inside[True]), tally(inside[False])))
    return lines


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    a = mixlogs.parse(p)
    out = []
    for d in a.dirs:
        out += report(d, a.slow)
    print('\n'.join(out) if out else 'no mode with queue samples and latency-critical reports under %s' % ' '.join(a.dirs))


if __name__ == '__main__':
    main()
