#!/usr/bin/env python3
"""Where a latency-critical tenant's slow requests were made: on the host (its launches took long)
or on the device (the wait at its synchronize).

Each LC request of bench/torch/family/tenant.py records, besides its latency, when its last launch
was issued (host_ms: wall time from the request's start; host_cpu_ms: the thread's CPU time over
the same span). An eager decoder's request is nearly all host time (about 950 launches); a slow
core, or a thread descheduled, stretches host_ms with the GPU idle, and no scheduler of the GPU
can make that up. For each mix, tenant and mode this prints P50 and P99 of the latency, of host_ms,
of the device's part (latency - host_ms) and of the time off the CPU while launching
(host_ms - host_cpu_ms); then, of the mode's slowest 5 % of requests, how many were host-made
(host_ms over 1.5 x the tenant's median host_ms over every mode of the mix) and how many
device-made (the device's part over 1.5 x its median likewise; both can hold). Where the run paused
the best-effort tenants (the paired reading), also the host part's P50 and P99 with them running over
those with them stopped (requests from the scenario's settle time after each change on): above 1,
the company slowed the tenant's launching (its CPU, or launches that block behind the device).

    python3 bench/gpu/host-phases.py CALL_DIR...   (folders holding logs-N/MIX/MODE/KIND.json, as mix-run.sh brings them back)
"""
import glob
import gzip
import json
import os
import sys


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as fh:
        return json.load(fh)


def pct(vals, q):
    s = sorted(vals)
    return s[min(len(s) - 1, int(round(q / 100.0 * (len(s) - 1))))] if s else float("nan")


def median(vals):
    return pct(vals, 50)


def tenants_of(mix_dir):
    """{tenant: {mode: json}} for the LC tenants of one mix's logs that carry host_ms."""
    out = {}
    for mode_dir in sorted(glob.glob(os.path.join(mix_dir, "*"))):
        if not os.path.isdir(mode_dir):
            continue
        mode = os.path.basename(mode_dir)
        for f in sorted(glob.glob(os.path.join(mode_dir, "*.json")) + glob.glob(os.path.join(mode_dir, "*.json.gz"))):
            try:
                d = load(f)
            except (OSError, ValueError):
                continue
            if d.get("role") != "lc" or not d.get("host_ms") or not d.get("lat_ms"):
                continue
            name = os.path.basename(f).split(".json")[0]
            out.setdefault(name, {})[mode] = d
    return out


def stops_of(mix_dir, tenant, mode):
    """(stops [[from, to] epoch ms], settle ms) of the paired reading of tenant in mode, from the call's mix-K.json; None without."""
    k = os.path.basename(os.path.dirname(mix_dir))[len("logs-"):]
    call = os.path.dirname(os.path.dirname(mix_dir))
    for f in (os.path.join(call, "mix-%s.json" % k), os.path.join(call, "mix-%s.json.gz" % k)):
        if not os.path.exists(f):
            continue
        try:
            j = load(f)
        except (OSError, ValueError):
            return None
        for m in j.get("mixes") or []:
            if m.get("name") != os.path.basename(mix_dir):
                continue
            for t in m.get("tenants") or []:
                p = ((t.get("paired") or {}).get(mode) or {}) if t.get("name") == tenant else {}
                if p.get("stops_ms"):
                    return p["stops_ms"], p.get("alone_settle_ms", 350)
    return None


def shared_over_alone(d, paired):
    """(P50, P99) of host_ms while the company ran over while it was stopped; None with under 10 requests either way."""
    stops, settle = paired
    shared, alone = [], []
    for h, t in zip(d["host_ms"], d.get("t_ms") or []):
        if h < 0:
            continue
        if any(a + settle <= t <= b for a, b in stops):
            alone.append(h)
        elif not any(a <= t <= b + settle for a, b in stops):
            shared.append(h)
    if len(shared) < 10 or len(alone) < 10:
        return None
    return pct(shared, 50) / pct(alone, 50), pct(shared, 99) / pct(alone, 99)


# over every mix read: {kind: {mode: [device P99s, host-made, device-made, slowest]}}
TOTALS = {}


def report(mix_dir):
    lines = []
    for name, modes in tenants_of(mix_dir).items():
        host_all, dev_all = [], []
        for d in modes.values():
            for lat, h in zip(d["lat_ms"], d["host_ms"]):
                if h >= 0:
                    host_all.append(h)
                    dev_all.append(lat - h)
        if not host_all:
            continue
        ref_host, ref_dev = median(host_all), median(dev_all)
        lines.append("  %s: median over the modes host %.2f ms, device %.2f ms" % (name, ref_host, ref_dev))
        for mode, d in modes.items():
            rows = [(lat, h, c) for lat, h, c in zip(d["lat_ms"], d["host_ms"], d.get("host_cpu_ms") or [-1.0] * len(d["lat_ms"]))
                    if h >= 0]
            if not rows:
                continue
            lat = [r[0] for r in rows]
            host = [r[1] for r in rows]
            dev = [r[0] - r[1] for r in rows]
            off = [r[1] - r[2] for r in rows if r[2] >= 0]
            top = sorted(rows, key=lambda r: r[0], reverse=True)[:max(1, len(rows) // 20)]
            host_made = sum(1 for r in top if r[1] > 1.5 * ref_host)
            dev_made = sum(1 for r in top if r[0] - r[1] > 1.5 * ref_dev)
            tot = TOTALS.setdefault(d.get("kind", name), {}).setdefault(mode, [[], 0, 0, 0, []])
            tot[0].append(pct(dev, 99))
            tot[1] += host_made
            tot[2] += dev_made
            tot[3] += len(top)
            paired = stops_of(mix_dir, name, mode)
            split = shared_over_alone(d, paired) if paired else None
            if split:
                tot[4].append(split[0])
            lines.append("    %-7s n %3d  lat P50/P99 %6.2f/%6.2f  host %6.2f/%6.2f  device %6.2f/%6.2f  off-CPU %5.2f/%5.2f"
                         "  | slowest %d: host-made %d, device-made %d%s" % (
                             mode, len(rows), pct(lat, 50), pct(lat, 99), pct(host, 50), pct(host, 99), pct(dev, 50), pct(dev, 99),
                             pct(off, 50) if off else float("nan"), pct(off, 99) if off else float("nan"), len(top), host_made, dev_made,
                             " | host shared/alone P50 %.3f P99 %.3f" % split if split else ""))
    return lines


def main(dirs):
    if not dirs:
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    found = 0
    for d in dirs:
        for mix_dir in sorted(glob.glob(os.path.join(d, "logs-*", "*"))):
            lines = report(mix_dir)
            if lines:
                found += 1
                print("%s" % os.path.relpath(mix_dir))
                print("\n".join(lines))
    if found > 1:
        print("over the %d mixes, by kind and mode: the device's part at P99 (lowest-highest), and of the slowest "
              "requests how many were host-made and device-made" % found)
        for kind, modes in TOTALS.items():
            for mode, (dev99, hm, dm, n, split) in modes.items():
                print("  %-8s %-7s %2d readings: device P99 %.2f-%.2f ms; slowest %d: host-made %d, device-made %d%s" % (
                    kind, mode, len(dev99), min(dev99), max(dev99), n, hm, dm,
                    "; host P50 shared/alone %.3f-%.3f (median %.3f)" % (min(split), max(split), median(split)) if split else ""))
    if not found:
        print("no LC tenant logs with host_ms under %s (runs before session 83 do not record it)" % " ".join(dirs), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
