#!/usr/bin/env python3
"""Where a best-effort tenant's time went in one mode's run of a mix: whole, narrowed, stopped, idle.

Reads the `XQ_LOG=3` timelines of one mode's run (a folder with TENANT.log or TENANT.log.gz per
tenant, as bench/gpu/mix-run.sh keeps them under logs-N/MIX/MODE) and, for each best-effort
tenant (its TENANT.json says "role": "be"), splits the run's window, from its first launch of the
mix to its last command's end, into:

- kernel time on the whole device and narrowed (the timeline's width under the whole, a green
  context of part of the device), per width;
- stopped: the scenario's stops (the latency-critical tenant's `stops_ms` in the call's
  mix-K.json, converted with the log's clock line), where its commands' ends are not seen;
- idle: no command of its own in flight and not stopped (held by the node, or the process's own
  host work between its commands), with the longest such gaps.

A GEMM narrowed for most of its kernel time runs at about the share of the device it was given
(64 of 132 multiprocessors: 43.5 ms a kernel against 21.5 whole, H200 session 73), which is what
its rate over native sharing reads; long idle gaps that are not stops are holds (a spell of
learning held a GEMM 565-578 ms at a time beside a graph with requests at random).

The timeline is the interposer's sample of commands (every command of a stream with long kernels;
a trainer's many small ones are sampled), so its kernel time is a floor for trainers.

Usage: python3 bench/gpu/be-time.py MODE_DIR [MODE_DIR...]
"""
import gzip
import json
import os
import re
import sys

LINE = re.compile(r'xq: timeline (\S+): launched (\d+), from (\d+), end (\d+), estimate \d+, horizon \d+, '
                  r'commands \d+, width (\d+)/(\d+)')
CLOCK = re.compile(r'xq: timeline clock: monotonic (\d+) ns, realtime (\d+) ns')
WARM_GAP_NS = 3_000_000_000  # a gap this long before the mix's first launch ends the warm-up
GAP_NS = 2_000_000


def opened(path):
    return gzip.open(path, 'rt', errors='replace') if path.endswith('.gz') else open(path, errors='replace')


def read_log(path):
    """(commands [(stream, launched, from, end, width, whole)], monotonic-realtime offset in ns or None)."""
    out = []
    offset = None
    with opened(path) as f:
        for line in f:
            m = LINE.search(line)
            if m:
                out.append((m.group(1), int(m.group(2)), int(m.group(3)), int(m.group(4)), int(m.group(5)), int(m.group(6))))
                continue
            c = CLOCK.search(line)
            if c and offset is None:
                offset = int(c.group(2)) - int(c.group(1))
    return out, offset


def stops_of(mode_dir):
    """The scenario's stops of this mode (realtime ns pairs), from the call's mix-K.json; [] if none."""
    mode = os.path.basename(os.path.normpath(mode_dir))
    logs = os.path.dirname(os.path.dirname(os.path.normpath(mode_dir)))  # .../logs-K
    k = os.path.basename(logs).split('-')[-1]
    for name in ('mix-%s.json' % k, 'mix-%s.json.gz' % k):
        path = os.path.join(os.path.dirname(logs), name)
        if os.path.exists(path):
            with opened(path) as f:
                d = json.load(f)
            for m in d.get('mixes', []):
                for t in m.get('tenants', []):
                    stops = t.get('paired', {}).get(mode, {}).get('stops_ms')
                    if stops:
                        return [(int(a * 1_000_000), int(b * 1_000_000)) for a, b in stops]
    return []


def overlap(a, b, spans):
    return sum(max(0, min(b, y) - max(a, x)) for x, y in spans)


def tenant_report(name, commands, offset, stops):
    commands = sorted(commands, key=lambda c: c[2])
    if len(commands) < 2:
        return '%s: %d commands on the timeline' % (name, len(commands))
    start = commands[0][1]
    for prev, cur in zip(commands, commands[1:]):
        if cur[1] - prev[3] > WARM_GAP_NS:
            start = cur[1]
    run = [c for c in commands if c[1] >= start]
    end = max(c[3] for c in run)
    window = end - start
    mono_stops = [(a - offset, b - offset) for a, b in stops] if offset is not None else []
    stopped = overlap(start, end, mono_stops)
    whole = narrowed = 0
    widths = {}
    busy = []
    for _, _, f, e, w, full in run:
        # a command whose end fell in a stop ran until the stop at most (its end is seen at the continue)
        cut = e
        for x, y in mono_stops:
            if f < x < e <= y + 50_000_000:
                cut = x
        d = max(0, cut - f)
        if w >= full:
            whole += d
        else:
            narrowed += d
            widths['%d/%d' % (w, full)] = widths.get('%d/%d' % (w, full), 0) + d
        busy.append((f, cut))
    busy.sort()
    merged = []
    for f, e in busy:
        if merged and f <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], e)
        else:
            merged.append([f, e])
    gaps = []
    for (f0, e0), (f1, e1) in zip(merged, merged[1:]):
        g = f1 - e0 - overlap(e0, f1, mono_stops)
        if g > GAP_NS:
            gaps.append(g)
    idle = window - stopped - sum(e - f for f, e in merged)
    gaps.sort(reverse=True)
    ms = lambda ns: ns / 1e6
    running = window - stopped
    parts = ', '.join('%s %.0f ms' % kv for kv in sorted(((k, ms(v)) for k, v in widths.items()), key=lambda kv: -kv[1]))
    return ('%s: window %.0f ms, stopped %.0f ms%s; of the %.0f ms not stopped: kernels whole %.0f ms (%.0f %%), '
            'narrowed %.0f ms (%.0f %%%s), idle %.0f ms (%.0f %%; gaps over 2 ms %d, longest %s ms)') % (
        name, ms(window), ms(stopped), '' if offset is not None or not stops else ' (no clock line: stops not placed)',
        ms(running), ms(whole), 100 * whole / max(1, running), ms(narrowed), 100 * narrowed / max(1, running),
        ': ' + parts if parts else '', ms(max(0, idle)), 100 * max(0, idle) / max(1, running), len(gaps),
        ', '.join('%.0f' % ms(g) for g in gaps[:4]) or '-')


def report(mode_dir):
    lines = []
    stops = stops_of(mode_dir)
    for fname in sorted(os.listdir(mode_dir)):
        if not (fname.endswith('.json') or fname.endswith('.json.gz')):
            continue
        tenant = fname.split('.json')[0]
        with opened(os.path.join(mode_dir, fname)) as f:
            try:
                if json.load(f).get('role') != 'be':
                    continue
            except ValueError:
                continue
        log = next((os.path.join(mode_dir, tenant + ext) for ext in ('.log', '.log.gz')
                    if os.path.exists(os.path.join(mode_dir, tenant + ext))), None)
        if log is None:
            lines.append('%s: no log' % tenant)
            continue
        commands, offset = read_log(log)
        by_stream = {}
        for c in commands:
            by_stream.setdefault(c[0], []).append(c)
        for stream, cs in sorted(by_stream.items(), key=lambda kv: -len(kv[1])):
            if len(cs) >= 8:
                lines.append(tenant_report('%s %s' % (tenant, stream), cs, offset, stops))
    return lines


def main(args):
    if not args or args[0] in ('-h', '--help'):
        print(__doc__)
        return 0 if args else 2
    for d in args:
        print(d)
        for line in report(d):
            print('  ' + line)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
