#!/usr/bin/env python3
"""How often each tenant's default stream went idle under XQ, from the interposer's timeline lines
(XQ_LOG=3: 'xq: timeline default: launched L, from F, end E, ...', one per mark, in a tenant's log).

A burst is a run of marks each starting within GAP_US of the last one's end; the stream was idle
between two bursts. Prints per tenant log: marks, bursts, the bursts' device time (P10/P50/P90 ms),
the idle gaps between them (P50 us) and bursts a second. Tests the model that native time slicing
gives a process about b / (b + slice) of the device, b its device time between idles: where two
tenants' bursts are alike, that model gives them alike shares.

Usage: bench/gpu/bursts.py LOGDIR... (each a mode's directory of TENANT.log[.gz] files) [--gap-us 20]
"""
import gzip
import os
import re
import statistics
import sys

LINE = re.compile(r"xq: timeline default: launched (\d+), from (\d+), end (\d+)")


def read(path):
    op = gzip.open if path.endswith(".gz") else open
    with op(path, "rt", errors="replace") as f:
        return [tuple(map(int, m.groups())) for m in map(LINE.search, f) if m]


def pct(xs, p):
    s = sorted(xs)
    return s[min(len(s) - 1, int(len(s) * p))]


def bursts(rows, gap_ns):
    out, gaps = [], []
    start = prev = None
    for _, fr, en in rows:
        if prev is None or fr - prev > gap_ns:
            if prev is not None:
                out.append(prev - start)
                gaps.append(fr - prev)
            start = fr
        prev = max(en, prev or en)
    if prev is not None:
        out.append(prev - start)
    return out, gaps


def main(argv):
    gap_us = 20
    if "--gap-us" in argv:
        i = argv.index("--gap-us")
        try:
            gap_us = float(argv[i + 1])
        except (IndexError, ValueError):
            sys.exit("bursts.py: --gap-us needs a number of microseconds, got " + repr(argv[i + 1:i + 2]))
        argv = argv[:i] + argv[i + 2:]
    if not argv:
        sys.exit(__doc__)
    for d in argv:
        if not os.path.isdir(d):
            sys.exit("bursts.py: " + d + " is not a directory (a mode's directory of tenant logs)")
        for name in sorted(os.listdir(d)):
            if not re.search(r"\.log(\.gz)?$", name):
                continue
            rows = read(os.path.join(d, name))
            if len(rows) < 2:
                continue
            b, g = bursts(rows, gap_us * 1000)
            span = (rows[-1][2] - rows[0][1]) / 1e9
            print(f"{d} {name.split('.')[0]}: marks {len(rows)}, bursts {len(b)} "
                  f"({len(b) / span:.0f}/s over {span:.1f} s), burst ms P10 {pct(b, .1) / 1e6:.2f} "
                  f"P50 {statistics.median(b) / 1e6:.2f} P90 {pct(b, .9) / 1e6:.2f}, "
                  f"idle between P50 {statistics.median(g) / 1e3 if g else 0:.0f} us")


if __name__ == "__main__":
    main(sys.argv[1:])
