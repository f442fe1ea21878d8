#!/usr/bin/env python3
"""What the node decided for each tenant during a mix, from the bench's samples of its queues.

usage: node-queues.py DIR|logs-N.tgz ... [--mix SUBSTRING]

./xq bench mix writes node-queues.tsv beside the tenants' reports of every mode that runs the
tenants under the node (QueueSampler: every 47 ms a line per process queue). This prints, per mix,
mode and tenant process (its busiest queue: the one that completed most), over the samples where
that queue had work (in flight or pending):
  busy     samples with work (of all samples)
  stop     of those, samples where its queue was suspended (its process stopped: the paired
           reading's stops of the best-effort tenants, 1.5 s of every 3, or a hold found stopped)
  held     of the others, the node held it in time
  narrow   it ran narrowed to a part of the device (limits "narrowed")
  top      kept on top (limits "on_top" or "alone")
  guard    under an arrival guard
  share    its share of the device's multiprocessors while narrowed: median [min-max], percent
  width    its width as its process told it: widest of its last seconds / its current stretch (medians)
  rate     commands completed a second over the whole mode
Rows are what a best-effort tenant's rate against native sharing is read with: a GEMM narrowed to
a share of 30 % while Triton beside it ran on the rest tells why one kept 0.6 of native and the other 1.6.
"""
import io
import os
import statistics
import sys
import tarfile


def med(xs):
    return statistics.median(xs) if xs else None


def read_tsv(text):
    lines = text.splitlines()
    if not lines:
        return []
    head = lines[0].split('\t')
    rows = []
    for l in lines[1:]:
        f = l.split('\t')
        if len(f) != len(head):
            continue
        rows.append(dict(zip(head, f)))
    return rows


def sources(args):
    """(mix, mode, text) for every node-queues.tsv under the given dirs or archives."""
    for a in args:
        if os.path.isdir(a):
            for root, _, files in os.walk(a):
                if 'node-queues.tsv' in files:
                    p = os.path.join(root, 'node-queues.tsv')
                    parts = os.path.normpath(root).split(os.sep)
                    with open(p) as f:
                        yield parts[-2], parts[-1], f.read()
                for fn in files:
                    if fn.startswith('logs-') and fn.endswith('.tgz'):
                        yield from sources([os.path.join(root, fn)])
        elif a.endswith('.tgz') or a.endswith('.tar.gz'):
            with tarfile.open(a) as t:
                for m in t.getmembers():
                    if m.isfile() and m.name.endswith('/node-queues.tsv'):
                        parts = m.name.split('/')
                        yield parts[-3], parts[-2], t.extractfile(m).read().decode()
        else:
            sys.exit("node-queues.py: %s is neither a directory nor a .tgz" % a)


def summarize(rows):
    """Per pid: its busiest queue's figures."""
    by_q = {}
    for r in rows:
        by_q.setdefault((r['pid'], r['name']), []).append(r)
    best = {}
    for (pid, name), rs in by_q.items():
        done = int(rs[-1]['completed']) - int(rs[0]['completed'])
        if pid not in best or done > best[pid][0]:
            best[pid] = (done, name, rs)
    out = []
    for pid, (done, name, rs) in sorted(best.items(), key=lambda kv: kv[1][1]):
        t0, t1 = int(rs[0]['t_ms']), int(rs[-1]['t_ms'])
        busy_all = [r for r in rs if int(r['in_flight']) > 0 or int(r['pending']) > 0]
        busy = [r for r in busy_all if r['state'] != 'suspended']
        n = len(busy)
        stop = (len(busy_all) - n) / len(busy_all) if busy_all else 0.0

        def frac(pred):
            return sum(1 for r in busy if pred(r)) / n if n else 0.0

        shares = [int(r['sm_share']) for r in busy if r['limits'] == 'narrowed']
        widths = [int(r['width']) for r in rs if int(r['width']) > 0]
        stretch = [int(r['stretch']) for r in rs if int(r['width']) > 0]
        out.append(dict(
            pid=pid, name=name, samples=len(rs), busy=len(busy_all) / len(rs) if rs else 0.0, stop=stop,
            held=frac(lambda r: r['held'] == '1'), narrow=frac(lambda r: r['limits'] == 'narrowed'),
            top=frac(lambda r: r['limits'] in ('on_top', 'alone')), guard=frac(lambda r: r['limits'] == 'guarded'),
            share=(med(shares), min(shares), max(shares)) if shares else None,
            width=(med(widths), med(stretch)) if widths else None,
            rate=done / ((t1 - t0) / 1000.0) if t1 > t0 else 0.0))
    return out


def main(argv):
    mix_filter = None
    args = []
    i = 0
    while i < len(argv):
        if argv[i] == '--mix':
            mix_filter = argv[i + 1]
            i += 2
            continue
        args.append(argv[i])
        i += 1
    if not args:
        sys.exit(__doc__)
    found = 0
    for mix, mode, text in sources(args):
        if mix_filter and mix_filter not in mix:
            continue
        found += 1
        print("%s, %s:" % (mix, mode))
        print("  %-24s %5s %5s %5s %5s %6s %5s %5s %-15s %-9s %s" % ('queue (pid)', 'n', 'busy', 'stop', 'held', 'narrow',
                                                                  'top', 'guard', 'share %', 'width', 'rate/s'))
        for s in summarize(read_tsv(text)):
            share = '-' if not s['share'] else '%d [%d-%d]' % (round(s['share'][0]), s['share'][1], s['share'][2])
            width = '-' if not s['width'] else '%d/%d' % (round(s['width'][0]), round(s['width'][1]))
            print("  %-24s %5d %5.2f %5.2f %5.2f %6.2f %5.2f %5.2f %-15s %-9s %.1f" % (
                ('%s (%s)' % (s['name'], s['pid']))[:24], s['samples'], s['busy'], s['stop'], s['held'], s['narrow'], s['top'],
                s['guard'], share, width, s['rate']))
    if not found:
        print("no node-queues.tsv found (the bench writes it from this build on, in modes run under the node)")


if __name__ == '__main__':
    main(sys.argv[1:])
