#!/usr/bin/env python3
"""The host's CPU speed during each mode of a `./xq bench mix` run.

Usage: ticks-by-mode.py MIX_TXT TICKS_TXT

TICKS_TXT is what bench/gpu/cpu-tick.py writes with SECONDS 0 beside the run (mix-run.sh starts
it): a line "EPOCH_MS DURATION_MS" per tick, the same small pure-Python work each time, so the
duration moves only with the host (a neighbour on the physical core, a frequency step), never with
the GPU. MIX_TXT gives each mode's span ('mix MIX: MODE started at MS' / 'ended at MS').
Prints per mix and mode: ticks, P50, P90, max duration (ms), and slow% (the share of ticks over
1.4 x the whole run's P50): an eager tenant's latency, made on the host CPU, moves with these.
Standard library only."""
import re
import sys

SPAN = re.compile(r"mix (\S+): (.+?) (started|ended) at (\d{10,})\s*$")


def pct(v, q):
    v = sorted(v)
    return v[min(len(v) - 1, int(q * len(v)))]


def main(mix_txt, ticks_txt):
    spans, open_ = [], {}
    for line in open(mix_txt, errors="replace"):
        m = SPAN.search(line.strip())
        if not m:
            continue
        key = (m.group(1), m.group(2))
        if m.group(3) == "started":
            open_[key] = int(m.group(4))
        elif key in open_:
            spans.append((key, open_.pop(key), int(m.group(4))))
    ticks = []
    for line in open(ticks_txt, errors="replace"):
        p = line.split()
        if len(p) == 2:
            try:
                ticks.append((int(p[0]), float(p[1])))
            except ValueError:
                pass
    if not ticks:
        print("no ticks")
        return
    base = pct([d for _, d in ticks], 0.5)
    print(f"host CPU tick (the same work each time): whole run P50 {base:.2f} ms over {len(ticks)} ticks")
    print(f"{'mix':24s} {'mode':20s} {'ticks':>5s} {'P50':>6s} {'P90':>6s} {'max':>6s} {'slow%':>6s}")
    for (mix, mode), a, b in spans:
        d = [x for t, x in ticks if a <= t <= b]
        if not d:
            continue
        slow = 100.0 * sum(1 for x in d if x > 1.4 * base) / len(d)
        print(f"{mix:24s} {mode:20s} {len(d):5d} {pct(d, .5):6.2f} {pct(d, .9):6.2f} {max(d):6.2f} {slow:6.1f}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
