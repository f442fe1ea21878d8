#!/usr/bin/env python3
"""The eager decoder's device part under XQ across every recorded mix run, by its company.

A request's device part is the wait at its one synchronize after its last launch (the mix
scenario's host_device_parts, since session 83): under XQ the decoder's was 0.06-0.16 ms at P99 in
every recorded mix without Triton's memory-bound row softmax beside it, and up to 4.9 ms with it
where its host launched fast (host P50 about 15.5 ms, H100, session 102), its kernels then the
slower side. Prints one line per (LC tenant of KIND, run): whether Triton ran beside it, the mix,
the session directory, the host part's P50 and the device part's P99 under xq and native.

Usage (repository root): python3 bench/gpu/lc-device-part.py [--kind decode] [DIR...]
  (default DIR: docs/results; files mix-*.json[.gz] under each, recursively)
"""
import glob
import gzip
import json
import os
import sys


def main(argv):
    kind = "decode"
    if "--kind" in argv:
        i = argv.index("--kind")
        if i + 1 >= len(argv):
            sys.exit("lc-device-part.py: --kind needs a tenant kind (decode, decodep, graph, ...)")
        kind = argv[i + 1]
        argv = argv[:i] + argv[i + 2:]
    dirs = argv or ["docs/results"]
    rows = []
    for d in dirs:
        if not os.path.isdir(d):
            sys.exit("lc-device-part.py: %r is not a directory" % d)
        for f in sorted(glob.glob(os.path.join(d, "**", "mix-*.json*"), recursive=True)):
            try:
                with (gzip.open(f, "rt") if f.endswith(".gz") else open(f)) as fh:
                    data = json.load(fh)
            except (OSError, ValueError):
                continue
            for m in data.get("mixes", []):
                for t in m.get("tenants", []):
                    parts = t.get("host_device_parts", {})
                    if t.get("kind") != kind or "xq" not in parts:
                        continue
                    x, n = parts["xq"], parts.get("native", {})
                    rows.append(("triton" in m["name"].split("+"), m["name"], os.path.dirname(os.path.relpath(f, d)),
                                 x.get("host_p50_ms", float("nan")), x.get("device_p99_ms", float("nan")),
                                 n.get("device_p99_ms", float("nan"))))
    if not rows:
        print("no %s tenant with host_device_parts under %s" % (kind, ", ".join(dirs)))
        return 0
    print("%-7s %-32s %-48s %8s %12s %12s" % ("triton", "mix", "run", "host P50", "device P99", "native's"))
    for r in sorted(rows):
        print("%-7s %-32s %-48s %8.1f %12.2f %12.2f" % ((("beside" if r[0] else "-"),) + r[1:]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
