#!/usr/bin/env python3
"""The measured cut's moves in recorded mix runs, one line per weighing or round.

Usage: python3 bench/gpu/balance-trace.py MIX_TXT...   (mix-N.txt or mix-N.txt.gz files as bench/gpu/mix-run.sh keeps
        them, from a run with -Dxq.trace.wideBeats=true in XQ_JAVA_OPTS)

For each mode of each mix (split by the 'MODE started at MS' lines): seconds since the mode's first
balance line (the node's clock, not the mode's start),
then either the round's rates alone or the weighing's shares kept and the cut before and after
(or why it stayed). Says so where a mode has no balance line (a run without the trace, or no two
best-effort processes without a gap).
"""
import gzip
import re
import sys

STARTED = re.compile(r'^mix (\S+): (\S+) started at (\d+)')
ENDED = re.compile(r'^mix (\S+): (\S+) ended at (\d+)')
LINE = re.compile(r'xq: balance on (\S+): pids (\[[^\]]*\]), (.*), at (\d+) ns$')
KEPT = re.compile(r'rates kept alone (\[[^\]]*\]).*?sixteenths (\[[^\]]*\])( -> (\[[^\]]*\]))?(, stays: (.*))?')
ALONE = re.compile(r'rates alone \(commands a second\) (.*?), next in (\S+ s)')


def main(paths):
    if not paths:
        print(__doc__.strip())
        return 2
    for path in paths:
        mode = None
        first = None
        seen = {}
        opener = (lambda p: gzip.open(p, 'rt', errors='replace')) if path.endswith('.gz') else (lambda p: open(p, errors='replace'))
        with opener(path) as f:
            for raw in f:
                line = raw.rstrip('\n')
                m = STARTED.match(line)
                if m:
                    mode = '%s %s' % (m.group(1), m.group(2))
                    first = None
                    seen.setdefault(mode, 0)
                    print('%s: %s' % (path, mode))
                    continue
                if ENDED.match(line):
                    if mode is not None and seen.get(mode, 0) == 0:
                        print('    no balance line (no trace, or no two best-effort processes without a gap)')
                    mode = None
                    continue
                b = LINE.search(line)
                if not b or mode is None:
                    continue
                now = int(b.group(4))
                first = now if first is None else first
                at = (now - first) / 1e9
                seen[mode] += 1
                body = b.group(3)
                k = KEPT.search(body)
                a = ALONE.search(body)
                if k:
                    cut = k.group(2) + (' -> ' + k.group(4) if k.group(4) else '')
                    why = (' (stays: %s)' % k.group(6)) if k.group(6) else ''
                    print('  %6.2f s  kept %-18s cut %s%s' % (at, k.group(1), cut, why))
                elif a:
                    print('  %6.2f s  round: %s (next in %s)' % (at, a.group(1), a.group(2)))
                else:
                    print('  %6.2f s  %s' % (at, body))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
