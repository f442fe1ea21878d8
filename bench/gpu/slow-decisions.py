#!/usr/bin/env python3
"""The node's slow decisions beside its JVM's and the host's own account, run by run.

Reads every mix-N.txt under DIR (a mix-run.sh or jvm-ab.sh result, unpacked; .gz too) and, where
the run has them, the node's JVM log (jvm-PID.log: -Xlog:deoptimization=debug,safepoint=info
decorated with timemillis,timenanos, as bench/gpu/jvm-ab.sh writes it) and the host's CPU probe
(ticks-N.txt: "EPOCH_MS DURATION_MS" lines from cpu-tick.py). Per run it prints: the slow decisions
(-Dxq.trace.slowDecisions=true) in the xq mode and the stage that took most of each; the
deoptimisations of the node's own code (dev.xq) and of all code in the xq mode; the safepoints of
the whole JVM; the node's last arrival-reaction line's percentiles; and, for the slow decisions a
tick of the probe overlapped, how slow those ticks were against the run's median tick.
Usage: slow-decisions.py DIR"""
import glob
import gzip
import os
import re
import statistics
import sys

STAGES = ("views", "policy", "before the guards", "guards", "holds and lets-go", "reactions",
          "guards lifted and sleepers", "the source's", "top queues", "told")


def read(path):
    with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
        return f.read()


def sibling(mix, stem):
    d = os.path.dirname(mix)
    n = re.search(r"mix-(\d+)\.txt", mix).group(1)
    for name in (stem + "-" + n + ".txt", stem + "-" + n + ".txt.gz"):
        p = os.path.join(d, name)
        if os.path.exists(p):
            return p
    return None


def jvm_log(mix, xq_ms):
    """The JVM log of the node that ran the mix's xq mode (the latest to start before it), with its
    nanoTime offset to epoch ms."""
    best = None
    for p in sorted(glob.glob(os.path.join(os.path.dirname(mix), "jvm-*.log*"))):
        lines = [l for l in read(p).splitlines() if l.startswith("[")]
        stamps = [m for m in (re.match(r"\[(\d+)ms\]\[(\d+)ns\]", l) for l in lines) if m]
        if stamps and int(stamps[0].group(1)) <= xq_ms and (best is None or int(stamps[0].group(1)) > best[0]):
            best = (int(stamps[0].group(1)), lines, int(stamps[0].group(1)) - int(stamps[0].group(2)) / 1e6)
    return (best[1], best[2]) if best else (None, None)


def main(root):
    mixes = sorted(glob.glob(os.path.join(root, "**", "mix-*.txt*"), recursive=True))
    if not mixes:
        sys.exit("no mix-N.txt under " + root)
    for mix in mixes:
        txt = read(mix)
        starts = dict(re.findall(r"mix \S+: (native|xq) started at (\d+)", txt))
        if "xq" not in starts:
            continue
        xq_ms = int(starts["xq"])
        name = re.search(r"mix (\S+): xq started", txt).group(1)
        slows = []
        for line in txt.splitlines():
            m = re.search(r"slow decision: (\d+) us \((.*)\), \d+ queues.* at (\d+) ns", line)
            if not m:
                continue
            parts = dict((s, int(v)) for s, v in re.findall(r"(views|policy '[^']*'|before the guards|guards lifted and sleepers|guards|"
                                                             r"holds and lets-go|reactions|the source's|top queues|told) (\d+)", m.group(2)))
            parts = {("policy" if k.startswith("policy") else k): v for k, v in parts.items()}
            top = max(parts.items(), key=lambda kv: kv[1]) if parts else ("?", 0)
            slows.append((int(m.group(3)), int(m.group(1)), top))
        print("== %s (%s): %d slow decisions" % (os.path.relpath(mix, root), name, len(slows)))
        lines, off = jvm_log(mix, xq_ms)
        at = (lambda ns: off + ns / 1e6) if off is not None else None
        if lines is not None:
            deopt_own = deopt_all = 0
            safepoints = []
            for l in lines:
                m = re.match(r"\[(\d+)ms\]", l)
                if "Safepoint" in l:
                    safepoints.append(re.search(r'Safepoint "([^"]+)".*Total: (\d+) ns', l).groups())
                elif "trap_bci" in l and m and int(m.group(1)) >= xq_ms:
                    deopt_all += 1
                    deopt_own += "dev.xq" in l and "dev.xq.bench" not in l
            print("   deoptimisations in the xq mode: %d of the node's code, %d in all; safepoints (whole JVM): %s" % (
                deopt_own, deopt_all, ", ".join("%s %.1f ms" % (k, int(v) / 1e6) for k, v in safepoints) or "none"))
        react = [l for l in txt.splitlines() if "xq: arrival reaction:" in l]
        if react:
            m = re.search(r"\((the latest [^:]*): (P50 \d+ us, P90 \d+ us, P99 \d+ us)", react[-1])
            if m:
                print("   arrival reaction (%s): %s" % m.groups())
        if not slows:
            continue
        print("   longest stage of each: " + ", ".join("%d us (%s %d)" % (us, k, v) for _, us, (k, v) in slows))
        ticks_p = sibling(mix, "ticks")
        if ticks_p and at:
            ticks = [tuple(map(float, l.split())) for l in read(ticks_p).splitlines() if len(l.split()) == 2]
            if ticks:
                med = statistics.median(t[1] for t in ticks)
                hit = set()
                for ns, us, _ in slows:
                    end = at(ns)
                    hit |= {t for t in ticks if t[0] <= end and t[0] + t[1] >= end - us / 1000}
                over = [t[1] / med for t in sorted(hit)]
                slow_share = sum(1 for t in ticks if t[1] > 1.5 * med) / len(ticks)
                print("   host CPU probe: %d of its ticks overlapped slow decisions, %d of them over 1.5 x the median tick "
                      "(%s); over 1.5 x among all ticks: %.1f %%" % (len(over), sum(1 for r in over if r > 1.5),
                                                                   ", ".join("%.2f" % r for r in over), 100 * slow_share))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
