#!/usr/bin/env python3
"""The interposer's own account (XQ_LOG=2 or more) of every tenant log under the given folders, one
block per log: host time a call (before and after the driver call), waits to launch by cause, the
entry points, and our own system and driver calls (marks, timed samples, lines to the node, tracker
kicks, waits for a stream's lock) with their time in all.

Usage: host-account.py DIR [DIR ...]   (the logs: *.log, *.err, plain or gzipped, e.g. a mix-run.sh
result's logs-K/MIX/xq/TENANT.log.gz or an overhead-decode.sh run's xq-N.err)
"""
import gzip
import os
import re
import sys

HT = re.compile(r"host time in the interposer: (\d+) calls through the gate, ([\d.]+) ms in all, (\d+) ns a call "
                r"\((\d+) before the driver call, (\d+) after\); (\d+) deferred.*?not counted: waits to launch ([\d.]+) ms")
WHY = re.compile(r"waits to launch by what held the call first: the gate ([\d.]+) ms, a limit ([\d.]+) ms, a guard for an "
                 r"arrival ([\d.]+) ms, deferred launches ahead on its stream ([\d.]+) ms, a full deferral queue ([\d.]+) ms, "
                 r"the process's deferred launches \(a call that cannot be deferred\) ([\d.]+) ms")
ENTRY = re.compile(r"(\w+) (\d+), (\d+) \+ (\d+) ns \(over 50 us: (\d+)\)")
OWN = re.compile(r"([a-z' ()]+?) (\d+), (\d+) ns each, (\d+) over 50 us, longest ([\d.]+) us")


def read(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", errors="replace") as f:
        return f.read()


def account(text):
    m = HT.search(text)
    if not m:
        return None
    calls, total_ms, per, pre, post, deferred, waits = m.groups()
    out = [f"  {int(calls):,} calls, {per} ns a call ({pre} before, {post} after), {float(total_ms):.1f} ms in all; "
           f"{int(deferred):,} deferred; waits to launch {float(waits):.1f} ms"]
    w = WHY.search(text)
    if w:
        names = ("gate", "limit", "guard", "deferred ahead", "full queue", "non-deferrable call")
        parts = [f"{n} {float(v):.1f}" for n, v in zip(names, w.groups()) if float(v) > 0]
        out.append("  waits by cause (ms): " + (", ".join(parts) or "none"))
    line = next((l for l in text.splitlines() if "host time by entry point" in l), None)
    if line:
        rows = sorted(ENTRY.findall(line.split("):", 1)[-1]), key=lambda r: -int(r[1]))
        out.append("  by entry point: " + "; ".join(f"{n} {int(k):,} x {b}+{a} ns ({lg} over 50 us)" for n, k, b, a, lg in rows))
    line = next((l for l in text.splitlines() if "host time in our own system and driver calls" in l), None)
    if line:
        body = line.split("(on any thread):", 1)[-1]
        parts = []
        for name, k, each, lg, longest in OWN.findall(body):
            ms = int(k) * int(each) / 1e6
            parts.append(f"{name.strip()} {int(k):,} x {int(each) / 1e3:.1f} us = {ms:.1f} ms ({lg} over 50 us, "
                         f"longest {float(longest):.1f} us)")
        out.append("  our own calls, on any thread (the tracker's too): " + "; ".join(parts))
    return "\n".join(out)


def main(dirs):
    if not dirs:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    found = 0
    for d in dirs:
        if not os.path.isdir(d):
            print(f"host-account.py: {d} is not a folder", file=sys.stderr)
            return 2
        for root, _, files in sorted(os.walk(d)):
            for f in sorted(files):
                if not re.search(r"\.(log|err)(\.gz)?$", f):
                    continue
                path = os.path.join(root, f)
                a = account(read(path))
                if a:
                    found += 1
                    print(os.path.relpath(path, d))
                    print(a)
    if not found:
        print("host-account.py: no XQ_LOG=2 account in any *.log or *.err there", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
