#!/usr/bin/env python3
"""Lays the long commands of best-effort processes beside a latency-critical tenant's requests.

Usage: timeline.py MODE_DIR [LIMIT_MS]
  MODE_DIR: one mix's xq logs as mix-run.sh brings them back (logs-N/MIX/xq/, .log or .log.gz), run with XQ_LOG=3
            (each interposed process prints its streams' commands of 1 ms or more at exit, with
            its clocks read together: docs/guide.md)
  LIMIT_MS: a request slower than this is a hit (default: 1.1 x the standalone P99 found in
            MODE_DIR/../../standalone-KIND/KIND.json, else 1.5 x the tenant's own P50)

For each hit: the best-effort commands that ran during it (process, stream, when launched, began
and ended relative to the request's start, estimate, the arrival guard's horizon relative to the
request's start). Then, over all requests: of the best-effort commands running at a request's
start, how many had been launched under a guard whose horizon was at or after that start (the
guard foresaw the arrival late), under one before it (the command ran over its estimate) or under
none. And where the others run long commands: the device's idle time around the requests, as
medians over the first 16 requests and over the rest (before a request: since the last long
command ended; after it: until the next began) and the time long commands ran between one
request's end and the next one's start (the gaps the arrival guards fill).
"""
import glob
import gzip
import json
import os
import re
import sys

TL = re.compile(r"xq: timeline (\S+): launched (\d+), from (\d+), end (\d+), estimate (\d+), horizon (\d+), commands (\d+)")
CLOCK = re.compile(r"xq: timeline clock: monotonic (\d+) ns, realtime (\d+) ns")
GREEN = re.compile(r"xq: timeline green context: (\d+) multiprocessors at offset (-?\d+), made at (\d+) in (\d+) ns")


def be_commands(mode_dir, skip=()):
    out = []
    for log in sorted(glob.glob(os.path.join(mode_dir, "*.log")) + glob.glob(os.path.join(mode_dir, "*.log.gz"))):
        name = os.path.basename(log).split(".log")[0]
        if name in skip:
            continue  # the latency-critical tenant's own commands
        off = None
        rows = []
        opener = gzip.open if log.endswith(".gz") else open
        with opener(log, "rt", errors="replace") as f:
            for line in f:
                m = CLOCK.search(line)
                if m:
                    off = int(m.group(2)) - int(m.group(1))
                    continue
                m = TL.search(line)
                if m:
                    rows.append((m.group(1),) + tuple(int(x) for x in m.groups()[1:]))
                m = GREEN.search(line)
                if m:
                    # a green context made: a command of its own on the timeline (its making's span)
                    t, took = int(m.group(3)), int(m.group(4))
                    rows.append(("green:%s" % m.group(1), t, t, t + took, 0, 0, 0))
        if off is None or not rows:
            continue
        for st, l, fr, en, est, hz, n in rows:
            # to epoch ms, as the tenants' t_ms
            ms = lambda ns: (ns + off) / 1e6
            out.append({"proc": name, "stream": st, "launch": ms(l), "from": ms(fr), "end": ms(en),
                        "est": est / 1e6, "hz": ms(hz) if hz else None, "n": n})
    return out


def union_within(spans, lo, hi):
    """The time within [lo, hi] that at least one of the (start, end) spans covers."""
    t, cur = 0.0, lo
    for a, b in sorted(spans):
        a, b = max(a, cur), min(b, hi)
        if b > a:
            t += b - a
            cur = b
    return t


def median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2] if xs else float("nan")


def around(cmds, at, lat):
    """Medians, over requests 1-16 and 17 on, of the long commands' idle before and after each request and their busy time between requests."""
    spans = [(c["from"], c["end"]) for c in cmds if not c["stream"].startswith("green")]
    if not spans:
        return None
    ends = sorted(b for _, b in spans)
    starts = sorted(a for a, _ in spans)
    rows = []
    for i in range(len(at) - 1):
        a, e, nxt = at[i], at[i] + lat[i], at[i + 1]
        if any(s0 < a < s1 for s0, s1 in spans):
            before = 0.0
        else:
            prev = [x for x in ends if x <= a]
            before = a - prev[-1] if prev else None
        if any(s0 < e < s1 for s0, s1 in spans):
            after = 0.0
        else:
            later = [x for x in starts if x >= e]
            after = later[0] - e if later and later[0] < nxt else None
        rows.append((before, after, union_within(spans, e, nxt), nxt - e))
    out = []
    for part in (rows[:16], rows[16:]):
        b = [r[0] for r in part if r[0] is not None]
        f = [r[1] for r in part if r[1] is not None]
        out.append((median(b), median(f), median([r[2] for r in part]), median([r[3] for r in part]), len(part)))
    return out


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    mode_dir = sys.argv[1]
    lc = set()
    for j in glob.glob(os.path.join(mode_dir, "*.json")):
        try:
            if json.load(open(j)).get("role") == "lc":
                lc.add(os.path.basename(j)[:-5])
        except ValueError:
            pass
    cmds = be_commands(mode_dir, lc)
    if not cmds:
        print("no timeline in %s (run with XQ_LOG=3)" % mode_dir)
        return 1
    for j in sorted(glob.glob(os.path.join(mode_dir, "*.json"))):
        d = json.load(open(j))
        if d.get("role") != "lc" or "lat_ms" not in d:
            continue
        kind = d["kind"]
        lat, at = d["lat_ms"], d["t_ms"]
        limit = float(sys.argv[2]) if len(sys.argv) > 2 else None
        if limit is None:
            sa = os.path.join(mode_dir, "..", "..", "standalone-" + kind, kind + ".json")
            if os.path.exists(sa):
                s = sorted(json.load(open(sa))["lat_ms"])
                limit = 1.1 * s[int(0.99 * (len(s) - 1))]
            else:
                s = sorted(lat)
                limit = 1.5 * s[len(s) // 2]
        hits = [i for i, x in enumerate(lat) if x > limit]
        print("%s: %d requests, %d over %.1f ms; best-effort commands on the timeline: %d" % (
            os.path.basename(j), len(lat), len(hits), limit, len(cmds)))
        late = over = none = clear = 0
        for i, a in enumerate(at):
            running = [c for c in cmds if c["from"] < a < c["end"]]
            if not running:
                clear += 1
            for c in running:
                if c["hz"] is None:
                    none += 1
                elif c["hz"] >= a:
                    late += 1
                else:
                    over += 1
        print("  at a request's start: nothing long running %d of %d; running: under a guard foreseeing it late %d, "
              "over its estimate past the horizon %d, under no guard %d" % (clear, len(at), late, over, none))
        ar = around(cmds, at, lat)
        if ar:
            (b1, f1, u1, g1, n1), (b2, f2, u2, g2, n2) = ar
            print("  long commands around the requests (medians; requests 1-%d / the %d after): idle before a request "
                  "%.1f / %.1f ms, after its end %.1f / %.1f ms; running between requests %.1f of %.1f / %.1f of %.1f ms" % (
                      n1, n2, b1, b2, f1, f2, u1, g1, u2, g2))
        for i in hits:
            a, e = at[i], at[i] + lat[i]
            print("  request %d at %+.1f ms: %.1f ms" % (i, a - at[0], lat[i]))
            for c in cmds:
                if c["end"] > a - 1 and c["from"] < e:
                    print("    %-8s %-8s launched %+7.1f began %+7.1f ended %+7.1f (ran %.1f, estimate %.1f%s) horizon %s" % (
                        c["proc"], c["stream"], c["launch"] - a, c["from"] - a, c["end"] - a, c["end"] - c["from"],
                        c["est"], ", %d commands" % c["n"] if c["n"] > 1 else "",
                        "%+.1f" % (c["hz"] - a) if c["hz"] else "none"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
