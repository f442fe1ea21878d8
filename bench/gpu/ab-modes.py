#!/usr/bin/env python3
"""Two modes of the same mix runs side by side (an A/B in one run: ./xq bench mix modes=native,xq-alt,xq
alt=... order=listed), with what the tenants' interposers said about the arrival guard.

Usage: python3 bench/gpu/ab-modes.py DIR [A [B]]   (A, B: modes, default xq and xq-alt)

For every mix-*.json[.gz] under DIR, per mix: each LC tenant's paired P99 (shared / alone) in A
and B (its P99 / standalone where the run was not paired), each BE tenant's rate / native in A
and B; then, from the tenants' logs beside the JSON (logs-K/MIX/MODE/NAME.log[.gz], as
bench/gpu/mix-run.sh keeps them), the interposer's XQ_LOG=2 lines about the guard: each stream's
pad at exit ("guard pad ...") and the work in flight at its gate's closes ("gate closed ...",
"drained after ..."), A's and B's. Runs without XQ_LOG=2 have no such lines: only the table.
Last, from the scenario's output beside the JSON (mix-K.txt[.gz]), the node's last "arrival
reaction" line within each mode's run (the node's trace; over its latest reactions, which may
reach back into the mode run before). A call without a native mode prints each BE tenant's
iterations a second and B's over A's; the end sums up: the LC readings within 1.10 in one mode
only, and the BE ratios' median and range.

  [ALT=... bench/gpu/mix-run.sh prints it for every A/B call, as "== the call's A/B".]"""
import glob
import gzip
import json
import os
import re
import sys

LC_BOUND = 1.10


def opener(path):
    return gzip.open(path, "rt") if path.endswith(".gz") else open(path)


def lc_figure(t, mode):
    p = (t.get("paired") or {}).get(mode)
    if p and p.get("shared_over_alone_p99") is not None:
        return "%.2f" % p["shared_over_alone_p99"]
    r = (t.get("p99_over_standalone") or {}).get(mode)
    return "-" if r is None else "%.2f (over standalone)" % r


def be_figure(t, mode):
    r = t.get(mode + "_vs_native")
    if r is not None:
        return "%.2f" % r
    # no native mode in the call (session 72's MODES=xq,xq-alt): iterations a second
    it = (t.get("it_per_s") or {}).get(mode)
    return "-" if it is None else "%.4g it/s" % it


def lc_value(t, mode):
    p = (t.get("paired") or {}).get(mode) or {}
    return p.get("shared_over_alone_p99")


GUARD = re.compile(r"^xq: stream (\S+): (guard pad .*|gate closed .*|drained after .*)$")


def guard_lines(run_dir, k, mix, mode):
    out = []
    for log in sorted(glob.glob(os.path.join(run_dir, "logs-%s" % k, mix, mode, "*.log*"))):
        name = os.path.basename(log).split(".")[0]
        with opener(log) as fh:
            for line in fh:
                m = GUARD.match(line.rstrip("\n"))
                if m:
                    out.append("%s %s: %s" % (name, m.group(1), m.group(2)))
    return out


def reaction_lines(run_dir, k, mix):
    """mode -> the node's last 'arrival reaction' line between that mode's start and end."""
    out = {}
    for path in (os.path.join(run_dir, "mix-%s.txt" % k), os.path.join(run_dir, "mix-%s.txt.gz" % k)):
        if not os.path.exists(path):
            continue
        mode = None
        start = re.compile(r"^mix %s: (\S+) started at " % re.escape(mix))
        end = re.compile(r"^mix %s: (\S+) ended at " % re.escape(mix))
        with opener(path) as fh:
            for line in fh:
                line = line.rstrip("\n")
                m = start.match(line)
                if m:
                    mode = m.group(1)
                    continue
                if end.match(line):
                    mode = None
                    continue
                if mode and line.startswith("xq: arrival reaction: "):
                    out[mode] = line[len("xq: arrival reaction: "):]
        break
    return out


def main(args):
    if not args:
        print(__doc__, file=sys.stderr)
        return 2
    root = args[0]
    a = args[1] if len(args) > 1 else "xq"
    b = args[2] if len(args) > 2 else "xq-alt"
    found, fixed, broke, ratios = 0, [], [], []
    for f in sorted(glob.glob(os.path.join(root, "**", "mix-*.json*"), recursive=True)):
        m = re.search(r"mix-(\d+)\.json", os.path.basename(f))
        if not m:
            continue
        with opener(f) as fh:
            d = json.load(fh)
        for mix in d.get("mixes", []):
            tenants = mix.get("tenants", [])
            modes = set()
            for t in tenants:
                modes |= set((t.get("p99_ms") or t.get("it_per_s") or {}).keys())
            if a not in modes or b not in modes:
                continue
            found += 1
            print("== %s (%s)" % (mix["name"], os.path.relpath(f, root)))
            for t in tenants:
                if t.get("role") == "lc":
                    print("  %-10s LC P99 shared/alone  %s %s   %s %s" % (t["name"], a, lc_figure(t, a), b, lc_figure(t, b)))
                    va, vb = lc_value(t, a), lc_value(t, b)
                    if va is not None and vb is not None and (va > LC_BOUND) != (vb > LC_BOUND):
                        (fixed if va > LC_BOUND else broke).append("%s %s" % (mix["name"], t["name"]))
                else:
                    its = t.get("it_per_s") or {}
                    q = its[b] / its[a] if its.get(a) and its.get(b) is not None else None
                    if q is not None:
                        ratios.append(q)
                    print("  %-10s BE rate / native     %s %s   %s %s%s" % (t["name"], a, be_figure(t, a), b, be_figure(t, b),
                                                                       "" if q is None else "   (%s / %s it/s %.2f)" % (b, a, q)))
            for mode in (a, b):
                for line in guard_lines(os.path.dirname(f), m.group(1), mix["name"], mode):
                    print("  [%s] %s" % (mode, line))
            reactions = reaction_lines(os.path.dirname(f), m.group(1), mix["name"])
            for mode in (a, b):
                if mode in reactions:
                    print("  [%s] node's arrival reaction: %s" % (mode, reactions[mode]))
    if not found:
        print("no mix under %s ran both %s and %s" % (root, a, b), file=sys.stderr)
        return 1
    print("== %d mixes: LC paired P99 within %.2f in %s only %d (%s); in %s only %d (%s)" % (
        found, LC_BOUND, b, len(fixed), ", ".join(fixed) or "-", a, len(broke), ", ".join(broke) or "-"))
    if ratios:
        r = sorted(ratios)
        print("== BE it/s %s / %s: median %.2f, range %.2f-%.2f, %d readings" % (b, a, r[len(r) // 2], r[0], r[-1], len(r)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
