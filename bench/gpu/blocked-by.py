#!/usr/bin/env python3
"""Which latency-critical commands waited for a best-effort process's long kernel to end.

Reads the `XQ_LOG=3` timelines of one mode's run of a mix (a folder with TENANT.log or
TENANT.log.gz per tenant, as bench/gpu/mix-run.sh keeps them under logs-N/MIX/MODE) and, for each
latency-critical tenant, counts its commands (the timeline's groups of launches) that ran beside a
long kernel of the best-effort tenant named (default: gemm; one over 5 ms of estimate, or a single
command that took over 5 ms where its estimate says less), those of
them that were slow (over three times their estimate and over 2 ms), and of the slow ones those
that ended within 2 ms of one of those kernels' ends (and of those, how many with a narrowed one,
run in a green context of part of the device): commands that could not start until the
long kernel left the device, whatever multiprocessors were free beside it.

On the H200 (session 68's four-LC mix, graph:3+decode:2+bulk:2+gemm), all 43 of the large
batch's slow commands beside the GEMM's half-device kernels ended within 2 ms of a GEMM kernel's
end (the CUDA graph's 1 of 47, the eager decoder's 26 of 182).

Usage: python3 bench/gpu/blocked-by.py [--by gemm] MODE_DIR [MODE_DIR...]
       python3 bench/gpu/blocked-by.py --all ROOT   (every recorded xq folder under ROOT, summed by kind)
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


def narrowed(width):
    """A timeline's width field, PART/WHOLE in 1024ths of the device: under 1024/1024 when the
    command ran in a green context of part of it."""
    try:
        part, whole = (int(x) for x in width.split('/'))
        return part < whole
    except ValueError:
        return False


def logs(folder):
    """Tenant name -> its log's path, for the tenants of one mode's folder."""
    found = {}
    for name in sorted(os.listdir(folder)):
        for ext in ('.log.gz', '.log'):
            if name.endswith(ext):
                found.setdefault(name[:-len(ext)], os.path.join(folder, name))
    return found


def counts(folder, by):
    """None without BY's log; else (long kernels, {width: n}, {tenant: [beside, slow, ended with
    one, of those with a narrowed one, beside a narrowed one, slow of those]})."""
    tenants = logs(folder)
    if by not in tenants:
        return None
    # long: estimated over 5 ms, its span at most five estimates (not one that counts a stop), or a
    # single command that took over 5 ms where the estimate says less (not learnt yet). The span was
    # capped at 200 ms before, which left out every GEMM kernel of n=16384 (163-335 ms, session 71)
    longs = [t for t in timeline(tenants[by])
             if (t[4] > LONG_NS and t[3] - t[2] < 5 * t[4]) or (t[4] <= LONG_NS and t[5] == 1 and LONG_NS < t[3] - t[2] < 40 * LONG_NS)]
    widths = {}
    for t in longs:
        widths[t[6]] = widths.get(t[6], 0) + 1
    per = {}
    for name, path in tenants.items():
        if name == by:
            continue
        c = per[name] = [0, 0, 0, 0, 0, 0]
        for t in timeline(path):
            start, end, estimate = t[2], t[3], t[4]
            over = [k for k in longs if k[2] < end and k[3] > start]
            if not over:
                continue
            c[0] += 1
            beside_narrowed = any(narrowed(k[6]) for k in over)
            c[4] += beside_narrowed
            if end - start > 3 * estimate and end - start > NEAR_NS:
                c[1] += 1
                c[5] += beside_narrowed
                near = [k for k in over if abs(end - k[3]) < NEAR_NS]
                if near:
                    c[2] += 1
                    c[3] += any(narrowed(k[6]) for k in near)
    return len(longs), widths, per


def report(folder, by):
    got = counts(folder, by)
    if got is None:
        return '%s: no %s log' % (folder, by)
    n, widths, per = got
    parts = ['%s beside %d, slow %d, ended with one %d (a narrowed one %d)' % (name, c[0], c[1], c[2], c[3])
             for name, c in per.items()]
    return '%s: %s long kernels %d %s | %s' % (folder, by, n, widths, '; '.join(parts))


def kind(name):
    """A tenant's kind from its name in a mix: gemm-2 -> gemm."""
    return re.sub(r'-\d+$', '', name)


def every_run(root):
    """Every recorded mode folder under ROOT named xq (each session's default build; xq-alt folders
    hold alternatives such as XQ_NARROW=0 and are left out), with tenant logs, by each
    best-effort kind present (gemm, train32, trainbf16, triton and their -N copies): the table of
    latency-critical and best-effort kinds summed over all of them."""
    total = {}
    runs = 0
    for dirpath, _dirs, files in sorted(os.walk(root)):
        if os.path.basename(dirpath) != 'xq' or not any(f.endswith(('.log', '.log.gz')) for f in files):
            continue
        runs += 1
        for by in logs(dirpath):
            if kind(by) not in ('gemm', 'train32', 'trainbf16', 'triton'):
                continue
            got = counts(dirpath, by)
            if not got or not got[0]:
                continue
            for name, c in got[2].items():
                key = (kind(name), kind(by))
                acc = total.setdefault(key, [0] * 7)
                acc[0] += 1
                for i in range(6):
                    acc[i + 1] += c[i]
    print('%d mode folders under %s; per tenant kind beside a best-effort kind with long kernels (5 ms+):' % (runs, root))
    print('%-10s %-10s %5s %8s %6s %10s %10s %12s %10s' % ('tenant', 'beside', 'runs', 'beside', 'slow', 'ended with',
                                                          'a narrowed', 'by narrowed', 'slow of'))
    for (t, b), a in sorted(total.items()):
        print('%-10s %-10s %5d %8d %6d %10d %10d %12d %10d' % (t, b, a[0], a[1], a[2], a[3], a[4], a[5], a[6]))
    print('(beside: commands that overlapped a long kernel; slow: over 3 x their estimate and 2 ms; ended with: slow ones '
          'ending within 2 ms of a long kernel\'s end; a narrowed: of those, with a narrowed one; by narrowed: commands '
          'beside a narrowed long kernel; slow of: the slow ones among them)')


def main(argv):
    by = 'gemm'
    if len(argv) == 2 and argv[0] == '--all':
        every_run(argv[1])
        return 0
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
