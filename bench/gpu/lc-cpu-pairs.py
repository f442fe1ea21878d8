#!/usr/bin/env python3
"""The eager decoders' host CPU time, shared against alone, by mode, over every paired reading kept.

Usage: python3 bench/gpu/lc-cpu-pairs.py DIR [KIND ...]   (KIND: decode by default)

For each mix run under DIR (mix-N.json beside logs-N/, as bench/gpu/mix-run.sh leaves them) and
each latency-critical tenant of the KINDs, each mode's requests are split as the scenario's
paired reading splits them (shared: issued and finished while the best-effort processes ran, 250
ms after a continue; alone: while they were stopped, 250 ms after a stop), and the launching
thread's CPU time per request (`host_cpu_ms`) is read at P50 and P95 in each half. A ratio
shared/alone over 1 says the thread's own work ran slower while the others ran: a host that
slowed it (shared cores, caches, memory), or work of the interposer's that only company brings.
Native sharing has no interposer; where its ratios and the xq modes' are alike, what moves an
eager tenant's latency between the halves is the host, not XQ. Prints one line a reading, then
per mode the median of the ratios, and for runs that have native and an xq mode both, the median
of xq's ratio minus native's and how many runs it was above; last, over every run of those
tenants with native and xq both paired, their latency verdicts themselves (shared/alone P99): the
median of each mode's, how often xq's was above native's, and how often each was within 1.10.
"""
import glob
import json
import statistics as st
import sys

import mixlogs



def q(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p * len(xs)))] if xs else float("nan")


def split(d, stops):
    """The CPU times (host_cpu_ms, those marked) of the requests in the shared half and in the alone
    half, as the paired reading splits them (mixlogs.halves)."""
    sh, al = mixlogs.halves(d, stops)
    cpu = d["host_cpu_ms"]
    return [cpu[i] for i in sh if cpu[i] >= 0], [cpu[i] for i in al if cpu[i] >= 0]


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    kinds = set(sys.argv[2:]) or {"decode"}
    by_mode, diffs, verdicts = {}, {}, []
    for mf in sorted(glob.glob(sys.argv[1] + "/**/mix-*.json", recursive=True)):
        base, n = mf.rsplit("/", 1)[0], mf.rsplit("-", 1)[1].split(".")[0]
        try:
            m = json.load(open(mf))
        except (OSError, ValueError):
            continue
        for mix in m.get("mixes", []):
            for t in mix.get("tenants", []):
                if t.get("kind") not in kinds or "paired" not in t:
                    continue
                ratios = {}
                pn, px = t["paired"].get("native", {}), t["paired"].get("xq", {})
                if pn.get("shared_over_alone_p99") is not None and px.get("shared_over_alone_p99") is not None:
                    verdicts.append((pn["shared_over_alone_p99"], px["shared_over_alone_p99"]))
                for mode, p in t["paired"].items():
                    if "stops_ms" not in p:
                        continue
                    try:
                        d = json.load(open("%s/logs-%s/%s/%s/%s.json" % (base, n, mix["name"], mode, t["name"])))
                    except (OSError, ValueError):
                        continue
                    if "host_cpu_ms" not in d:
                        continue
                    sh, al = split(d, p["stops_ms"])
                    if len(sh) < 10 or len(al) < 10:
                        continue
                    r = (q(sh, .5) / q(al, .5), q(sh, .95) / q(al, .95))
                    ratios[mode] = r
                    by_mode.setdefault(mode if mode == "native" or mode.startswith("mps") else "xq*", []).append(r)
                    print("%-44s %-22s %-7s shared %3d P50 %5.1f P95 %5.1f | alone %3d P50 %5.1f P95 %5.1f | %.2f %.2f" % (
                        base[-44:], mix["name"][:22], mode, len(sh), q(sh, .5), q(sh, .95), len(al), q(al, .5), q(al, .95), *r))
                if "native" in ratios:
                    for mode, r in ratios.items():
                        if mode.startswith("xq"):
                            diffs.setdefault(mode, []).append((r[0] - ratios["native"][0], r[1] - ratios["native"][1]))
    for mode, rs in sorted(by_mode.items()):
        print("%-7s %3d readings: shared/alone CPU time, median of P50 ratios %.3f, of P95 ratios %.3f" % (
            mode, len(rs), st.median(a for a, _ in rs), st.median(b for _, b in rs)))
    for mode, ds in sorted(diffs.items()):
        print("%-7s minus native, same runs (%d): P50 %+.3f (above in %d), P95 %+.3f (above in %d)" % (
            mode, len(ds), st.median(a for a, _ in ds), sum(a > 0 for a, _ in ds), st.median(b for _, b in ds), sum(b > 0 for _, b in ds)))
    if verdicts:
        print("P99 shared/alone over %d runs with native and xq: median native %.3f, xq %.3f; xq above native in %d;"
              " within 1.10: native %d, xq %d" % (
                  len(verdicts), st.median(n for n, _ in verdicts), st.median(x for _, x in verdicts),
                  sum(x > n for n, x in verdicts), sum(n <= 1.1 for n, _ in verdicts), sum(x <= 1.1 for _, x in verdicts)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
