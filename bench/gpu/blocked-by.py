#!/usr/bin/env python3
"""Which latency-critical commands waited for a best-effort process's long kernel to end.

Reads the `XQ_LOG=3` timelines of one mode's run of a mix (a folder with TENANT.log or
TENANT.log.gz per tenant, as bench/gpu/mix-run.sh keeps them under logs-N/MIX/MODE) and, for each
latency-critical tenant, counts its commands (the timeline's groups of launches) that ran beside a
long kernel of the best-effort tenant named (default: gemm; one over 5 ms of estimate, or a single
command that took over 5 ms where its estimate says less), those of
them that were slow (over three times their estimate and over 2 ms), and of the slow ones those
that ended within 2 ms of one of those kernels' ends: commands that could not start until the
long kernel left the device, whatever multiprocessors were free beside it.

On the H200 (session 68's four-LC mix, graph:3+decode:2+bulk:2+gemm), all 43 of the large
batch's slow commands beside the GEMM's half-device kernels ended within 2 ms of a GEMM kernel's
end (the CUDA graph's 1 of 47, the eager decoder's 26 of 182).

Usage: python3 bench/gpu/blocked-by.py [--by gemm] MODE_DIR [MODE_DIR...]
"""
import gzip
import os
import re
import sys

LINE = re.compile(r'xq: timeline (\S+): launched (\d+), from (\d+), end (\d+), estimate (\d+), horizon \d+, '
                  r'commands (\d+), width (\S+)')
LONG_NS = 5_000_000
NEAR_NS = 2_000_000


def timeline(path):
    """(stream, launched, from, end, estimate, commands, width) per timeline line of one log."""
    opener = gzip.open if path.endswith('.gz') else open
    out = []
    with opener(path, 'rt', errors='replace') as f:
        for line in f:
            m = LINE.match(line)
            if m:
                out.append((m.group(1), int(m.group(2)), int(m.group(3)), int(m.group(4)), int(m.group(5)),
                            int(m.group(6)), m.group(7)))
    return out


def logs(folder):
    """Tenant name -> its log's path, for the tenants of one mode's folder."""
    found = {}
    for name in sorted(os.listdir(folder)):
        for ext in ('.log.gz', '.log'):
            if name.endswith(ext):
                found.setdefault(name[:-len(ext)], os.path.join(folder, name))
    return found


def report(folder, by):
    tenants = logs(folder)
    if by not in tenants:
        return '%s: no %s log' % (folder, by)
    # long: estimated over 5 ms, its span at most five estimates (not one that counts a stop), or a
    # single command that took over 5 ms where the estimate says less (not learnt yet). The span was
    # capped at 200 ms before, which left out every GEMM kernel of n=16384 (163-335 ms, session 71)
    longs = [t for t in timeline(tenants[by])
             if (t[4] > LONG_NS and t[3] - t[2] < 5 * t[4]) or (t[4] <= LONG_NS and t[5] == 1 and LONG_NS < t[3] - t[2] < 40 * LONG_NS)]
    widths = {}
    for t in longs:
        widths[t[6]] = widths.get(t[6], 0) + 1
    parts = []
    for name, path in tenants.items():
        if name == by:
            continue
        beside = slow = ended_with = 0
        for t in timeline(path):
            start, end, estimate = t[2], t[3], t[4]
            over = [k for k in longs if k[2] < end and k[3] > start]
            if not over:
                continue
            beside += 1
            if end - start > 3 * estimate and end - start > NEAR_NS:
                slow += 1
                if any(abs(end - k[3]) < NEAR_NS for k in over):
                    ended_with += 1
        parts.append('%s beside %d, slow %d, ended with one %d' % (name, beside, slow, ended_with))
    return '%s: %s long kernels %d %s | %s' % (folder, by, len(longs), widths, '; '.join(parts))


def main(argv):
    by = 'gemm'
    if len(argv) > 1 and argv[0] == '--by':
        by, argv = argv[1], argv[2:]
    if not argv:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    for folder in argv:
        print(report(folder, by))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
