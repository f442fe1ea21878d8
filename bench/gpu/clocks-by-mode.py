#!/usr/bin/env python3
"""GPU clock samples of a `./xq bench mix` run, split by mix and mode.

Usage: clocks-by-mode.py [--tz-offset-s S] MIX_TXT CLOCKS_CSV
       clocks-by-mode.py --self-test

MIX_TXT is the run's text output (mix-N.txt): every mode prints
`mix MIX: MODE started at MS` and `mix MIX: MODE ended at MS`, MS in epoch
milliseconds (standalone and xq-alone once per LC kind they measure, as
`standalone KIND`, `xq-alone KIND`).  CLOCKS_CSV is what bench/gpu/mix-run.sh
samples meanwhile:

  nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,\
temperature.gpu,utilization.gpu,clocks_throttle_reasons.active \
--format=csv,noheader,nounits -lms 100

nvidia-smi's timestamp (`2026/11/29 01:23:45.678`) is the GPU machine's local
time without a zone: it is read as UTC less --tz-offset-s (the machine's offset
east of UTC in seconds, as `date +%z` says; 0 where it runs on UTC), which makes
it epoch milliseconds like the mode lines.

Prints per mix and mode: samples, median and P10 SM clock (MHz), median power
(W), median utilization (%), and the most common non-zero throttle reason
bitmask (with its share of the samples and the reasons' names).  Standard
library only.
"""

import argparse
import collections
import datetime
import os
import re
import statistics
import sys
import tempfile

# how long a mode without an 'ended at' line (the last one of a run cut short) is taken to last
UNENDED_MS = 600_000

SPAN = re.compile(r"mix (\S+): (.+?) (started|ended) at (\d{10,})\s*$")

# nvmlClocksEventReasons / clocks_throttle_reasons bits
REASONS = [
    (0x1, "gpu_idle"),
    (0x2, "applications_clocks_setting"),
    (0x4, "sw_power_cap"),
    (0x8, "hw_slowdown"),
    (0x10, "sync_boost"),
    (0x20, "sw_thermal_slowdown"),
    (0x40, "hw_thermal_slowdown"),
    (0x80, "hw_power_brake_slowdown"),
    (0x100, "display_clock_setting"),
]


def spans(lines):
    """[(mix, mode, start_ms, end_ms, ended)] in the order the modes started."""
    out = []
    open_ = {}
    for line in lines:
        m = SPAN.search(line)
        if not m:
            continue
        mix, mode, what, ms = m.group(1), m.group(2), m.group(3), int(m.group(4))
        if what == "started":
            open_[(mix, mode)] = len(out)
            out.append([mix, mode, ms, None])
        elif (mix, mode) in open_:
            out[open_.pop((mix, mode))][3] = ms
    # a mode without its end (the run cut short): to the next mode's start, the last one at most UNENDED_MS
    for i, s in enumerate(out):
        if s[3] is None:
            s.append(False)
            s[3] = out[i + 1][2] if i + 1 < len(out) else s[2] + UNENDED_MS
        else:
            s.append(True)
    return [tuple(s) for s in out]


def number(field):
    try:
        return float(field)
    except ValueError:
        return None


def samples(lines, tz_offset_s):
    """[(epoch_ms, sm_mhz, mem_mhz, power_w, temp_c, util_pct, reasons)] and how many lines were not samples."""
    out = []
    bad = 0
    for line in lines:
        f = [x.strip() for x in line.split(",")]
        if len(f) < 7:
            if line.strip():
                bad += 1
            continue
        try:
            t = datetime.datetime.strptime(f[0], "%Y/%m/%d %H:%M:%S.%f").replace(tzinfo=datetime.timezone.utc)
        except ValueError:
            bad += 1
            continue
        ms = t.timestamp() * 1000 - tz_offset_s * 1000
        try:
            reasons = int(f[6], 16)
        except ValueError:
            reasons = None
        out.append((ms, number(f[1]), number(f[2]), number(f[3]), number(f[4]), number(f[5]), reasons))
    return out, bad


def pct(values, p):
    """Nearest-rank percentile p (0-100) of values; None when there are none."""
    v = sorted(x for x in values if x is not None)
    if not v:
        return None
    k = max(0, min(len(v) - 1, int(-(-p * len(v) // 100)) - 1))
    return v[k]


def median(values):
    v = [x for x in values if x is not None]
    return statistics.median(v) if v else None


def reasons_name(mask):
    names = [n for bit, n in REASONS if mask & bit]
    rest = mask & ~sum(bit for bit, _ in REASONS)
    if rest:
        names.append("0x%x" % rest)
    return "+".join(names)


def fmt(v, digits=0):
    return "-" if v is None else ("%." + str(digits) + "f") % v


def report(text_lines, csv_lines, tz_offset_s, out):
    """Writes the table to out; returns the rows as dicts (for the self-test)."""
    sp = spans(text_lines)
    sm, bad = samples(csv_lines, tz_offset_s)
    rows = []
    used = set()
    for mix, mode, start, end, ended in sp:
        inside = [s for s in sm if start <= s[0] <= end]
        used.update(id(s) for s in inside)
        nz = collections.Counter(s[6] for s in inside if s[6])
        common = nz.most_common(1)[0] if nz else None
        rows.append({
            "mix": mix, "mode": mode + ("" if ended else " (no end)"),
            "seconds": (end - start) / 1000.0 if ended else None,
            "n": len(inside),
            "sm_p50": median(s[1] for s in inside), "sm_p10": pct([s[1] for s in inside], 10),
            "power_p50": median(s[3] for s in inside), "util_p50": median(s[5] for s in inside),
            "reasons": common[0] if common else None,
            "reasons_share": common[1] / len(inside) if common else None,
        })
    header = ["mix", "mode", "s", "samples", "SM MHz P50", "SM MHz P10", "power W P50", "util % P50", "throttle (most common non-zero)"]
    table = [header]
    for r in rows:
        thr = "-" if r["reasons"] is None else "0x%016x %s (%.0f %%)" % (r["reasons"], reasons_name(r["reasons"]), 100 * r["reasons_share"])
        table.append([r["mix"], r["mode"], fmt(r["seconds"], 1), str(r["n"]), fmt(r["sm_p50"]), fmt(r["sm_p10"]),
                      fmt(r["power_p50"], 1), fmt(r["util_p50"]), thr])
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    for j, row in enumerate(table):
        out.write("  ".join(c.ljust(widths[i]) for i, c in enumerate(row)).rstrip() + "\n")
        if j == 0:
            out.write("  ".join("-" * w for w in widths) + "\n")
    out.write("%d samples, %d in no mode, %d lines not samples; %d modes; tz offset %s s\n"
              % (len(sm), len(sm) - len(used), bad, len(sp), fmt(tz_offset_s)))
    if sp and sm and not used:
        # most likely the offset: the samples' clock against the mode lines'
        out.write("no sample falls in a mode: first sample at %d ms, first mode started at %d ms (%.0f s apart); "
                  "check --tz-offset-s\n" % (sm[0][0], sp[0][2], (sm[0][0] - sp[0][2]) / 1000.0))
    if not sp:
        out.write("no 'mix MIX: MODE started at MS' lines in the text\n")
    return rows


def self_test():
    base = 1795914795000  # epoch ms of the first mode
    text = [
        "mix: 1 mixes x [standalone, xq-alone, native], 1.0 s each, on PyTorch",
        "mix decode+gemm: standalone decode (1.0 s)",
        "mix decode+gemm: standalone decode started at %d" % base,
        "mix decode+gemm: standalone decode ended at %d" % (base + 1000),
        "mix decode+gemm: xq-alone decode started at %d" % (base + 1500),
        "mix decode+gemm: xq-alone decode ended at %d" % (base + 2500),
        "mix decode+gemm: native started at %d" % (base + 3000),
    ]
    tz = 3600  # the GPU machine one hour east of UTC: its local clock reads one hour ahead
    csv = []
    t = base - 500
    while t <= base + 4000:
        local = datetime.datetime.fromtimestamp((t + tz * 1000) / 1000.0, datetime.timezone.utc)
        ts = local.strftime("%Y/%m/%d %H:%M:%S.") + "%03d" % (t % 1000)
        if t < base + 1200:
            sm, power, util, thr = 1980, 300.5, 90, "0x0000000000000000"
        elif t < base + 2800:
            sm, power, util, thr = 1755 if t % 500 else 1500, 400.0, 95, "0x0000000000000004"
        else:
            sm, power, util, thr = 1410, "[N/A]", 100, "0x0000000000000044"
        csv.append("%s, %d, 2619, %s, 45, %d, %s" % (ts, sm, power, util, thr))
        t += 100
    csv.append("Unable to determine the device handle for GPU 0000:00:00.0: Unknown Error")
    out = _Out()
    rows = report(text, csv, tz, out)
    assert [r["mode"] for r in rows] == ["standalone decode", "xq-alone decode", "native (no end)"], rows
    assert rows[0]["n"] == 11 and rows[0]["sm_p50"] == 1980 and rows[0]["reasons"] is None, rows[0]
    assert rows[1]["n"] == 11 and rows[1]["sm_p50"] == 1755 and rows[1]["sm_p10"] == 1500, rows[1]
    assert rows[1]["reasons"] == 4 and rows[1]["reasons_share"] == 1.0 and rows[1]["power_p50"] == 400.0, rows[1]
    assert rows[2]["n"] == 11 and rows[2]["power_p50"] is None and rows[2]["reasons"] == 0x44, rows[2]
    assert rows[2]["util_p50"] == 100, rows[2]
    assert "sw_power_cap+hw_thermal_slowdown" in out.text and "1 lines not samples" in out.text, out.text
    # the wrong offset: nothing falls in a mode, and it says so
    out2 = _Out()
    rows = report(text, csv, 0, out2)
    assert all(r["n"] == 0 for r in rows) and "check --tz-offset-s" in out2.text, out2.text
    # through the files, as mix-run.sh calls it
    with tempfile.TemporaryDirectory() as d:
        tp, cp = os.path.join(d, "mix-1.txt"), os.path.join(d, "clocks-1.csv")
        with open(tp, "w") as f:
            f.write("\n".join(text) + "\n")
        with open(cp, "w") as f:
            f.write("\n".join(csv) + "\n")
        out3 = _Out()
        main(["--tz-offset-s", str(tz), tp, cp], out3)
        assert "xq-alone decode" in out3.text and "0x0000000000000004 sw_power_cap (100 %)" in out3.text, out3.text
    sys.stdout.write(out.text)
    print("self-test passed")


class _Out:
    def __init__(self):
        self.text = ""

    def write(self, s):
        self.text += s


def main(argv, out=sys.stdout):
    ap = argparse.ArgumentParser(description="GPU clock samples of a mix run, split by mix and mode")
    ap.add_argument("--tz-offset-s", type=float, default=0.0,
                    help="the GPU machine's offset east of UTC in seconds (nvidia-smi writes local time); default 0")
    ap.add_argument("--self-test", action="store_true", help="check the script on made-up samples and exit")
    ap.add_argument("text", nargs="?", help="the mix run's text output (mix-N.txt)")
    ap.add_argument("csv", nargs="?", help="the nvidia-smi samples (clocks-N.csv)")
    a = ap.parse_args(argv)
    if a.self_test:
        self_test()
        return 0
    if not a.text or not a.csv:
        ap.error("give MIX_TXT and CLOCKS_CSV (or --self-test)")
    with open(a.text, errors="replace") as f:
        text = f.read().splitlines()
    with open(a.csv, errors="replace") as f:
        csv = f.read().splitlines()
    out.write("%s, %s\n" % (a.text, a.csv))
    report(text, csv, a.tz_offset_s, out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
