#!/usr/bin/env python3
"""The family's verdicts from mix JSON files (./xq bench mix --json), XQ beside plain MPS.

Usage: python3 bench/gpu/family-table.py [--mode MODE] FILE_OR_DIR...  (directories: every mix-*.json[.gz] under them)

--mode MODE: judge that mode in XQ's place (xq-alt, xq-free, xq-hold, ...: an A/B call's alternate);
the scenario's own markers (over native within the ranges, worse than native) are xq's, so for
another mode "worse than native" is judged from the figures as for older files.

Prints a Markdown table, one row per mix: each LC tenant's P99 / standalone P99 (native / xq / mps;
where the scenario judged it by the paired reading, pause=S, its shared / alone P99 in each mode
instead, marked "paired", and where a mode missed only by being over native's within the
readings' ranges, the scenario's over_native_within_range, that said; with xq's shared requests
split by when they began, within 0.75 s of a continue or later, where the file has them: "xq early /
late"),
each BE tenant's rate / native (xq / mps), and whether xq and plain MPS meet the family's goals
(LC <= 1.10 x standalone, and <= native where native is within that; BE >= 0.9 x native; for xq
also its outputs within 1e-3 of native's, as the scenario judges). A missed mix where XQ left an LC tenant worse
off than native sharing by more than the run tells apart (the scenario's lc_worse_than_native since
session 68; for older files the same test on their figures: paired with ranges, xq's range of the
ratio wholly above native's, otherwise xq over 1.10 x native) says "worse than native for NAME". The goals are judged again from
the figures, so that files written before the scenario judged mps (session 53) read the same.
Under the paired reading a BE tenant is judged by its rate between the stops (the mean interval
between two of its synchronizations with no stop between them, against native's; 5 such intervals
at least in both modes), as the scenario does since session 64: from the file's
steady_rate_vs_native, or, in files written before, from the tenants' own JSON beside the mix file
(logs-K/MIX/MODE/TENANT.json, their sync_ms) and the stops the file kept; the rate over the whole
run is printed first. A figure in bold meets its goal.

Beside a paired LC reading, where the file has both modes' medians with the company stopped, xq's over
native's in bold when it is 1.25 x or more: the cost of the other latency-critical tenants, which the
paired reading carries on both sides of its ratio (not a goal; counted after the table). Where xq's
paired P99 rests on fewer than 100 requests alone or shared, their counts and the scenario's 90 % range
of the ratio are printed beside it: such a P99 is the largest request or nearly.

After the table: the LC readings within the bound by tenant kind and mode (with their range), and
the BE readings at the floor over the whole run (median) and between the stops, as a closing note
counts them (the mixes the scenario did not judge left out)."""
import glob
import gzip
import json
import os
import sys

LC_BOUND, BE_FLOOR, TOL = 1.10, 0.9, 1e-3
# a paired P99 read from fewer requests than this (alone or shared) is flagged: it is the largest or nearly
FEW = 100
# an LC median (company stopped) this far over native's is flagged beside the paired reading
MEDIAN_FLAG = 1.25
XQ = "xq"  # the mode judged in XQ's place (--mode)
MIN_STEADY_GAPS = 5


def steady_mean(sync, stops):
    """The mean interval between two synchronizations with no stop between them, and how many."""
    d = sorted(sync)
    gaps = [b - a for a, b in zip(d, d[1:]) if not any(s < b and c > a for s, c in stops)]
    return (sum(gaps) / len(gaps) if len(gaps) >= 2 else None), len(gaps)


def between_stops(f, m, t):
    """A BE tenant's xq and mps rate between the paired reading's stops against native's (None: not paired)."""
    have = t.get("steady_rate_vs_native")
    if have is not None:
        return have
    stops = {}
    for u in m["tenants"]:
        for md, p in (u.get("paired") or {}).items():
            if "stops_ms" in p:
                stops[md] = p["stops_ms"]
    if "native" not in stops:
        return None
    k = os.path.basename(f).split(".")[0][len("mix-"):]
    pace = {}
    for md, sp in stops.items():
        j = os.path.join(os.path.dirname(f), "logs-%s" % k, run_name(m), md, t["name"] + ".json")
        for path, op in ((j, open), (j + ".gz", gzip.open)):
            if os.path.exists(path):
                with op(path, "rt") as fh:
                    sync = json.load(fh).get("sync_ms")
                if sync:
                    mean, n = steady_mean(sync, sp)
                    if mean and n >= MIN_STEADY_GAPS:
                        pace[md] = mean
                break
    if "native" not in pace:
        return None
    return {md: pace["native"] / v for md, v in pace.items() if md != "native"}


def lc_ok(r, nat):
    return r is not None and r <= LC_BOUND and (nat is None or nat > LC_BOUND or r <= nat)


def ms(v):
    return "-" if v is None else "%.0f" % v


def fmt(v, ok=None):
    if v is None:
        return "-"
    s = "%.2f" % v
    return "**%s**" % s if ok else s


def files(args):
    for a in args:
        if os.path.isdir(a):
            yield from sorted(glob.glob(os.path.join(a, "**", "mix-*.json*"), recursive=True))
        else:
            yield a


def worse_than_native(t, r, tag):
    """XQ worse than native sharing for an LC tenant by more than the run tells apart, as the scenario's
    lc_worse_than_native (files since session 68) and, for older files, from their figures: paired with
    ranges, xq's range of the ratio wholly above native's; paired without, or unpaired, xq over 1.10 x native."""
    if XQ == "xq" and t.get("xq_worse_than_native"):
        return True
    nat, xq = r.get("native"), r.get(XQ)
    if nat is None or xq is None:
        return False
    if tag:
        pn, px = t.get("paired", {}).get("native", {}), t.get("paired", {}).get(XQ, {})
        rn, rx = pn.get("shared_over_alone_p99_range90"), px.get("shared_over_alone_p99_range90")
        if rn and rx:
            return rx[0] > rn[1]
    return xq > LC_BOUND * nat



def run_order(m):
    """The modes run together, in the order they ran: the JSON's modes_order (since session 76), else
    the first stop of each paired mode (older runs); empty where neither says."""
    order = m.get("modes_order")
    if order:
        return [mo for mo in order if mo not in ("standalone", "xq-alone")]
    first = {}
    for t in m.get("tenants", []):
        for mo, p in (t.get("paired") or {}).items():
            if isinstance(p, dict) and p.get("stops_ms"):
                first[mo] = min(first.get(mo, p["stops_ms"][0][0]), p["stops_ms"][0][0])
    return sorted(first, key=first.get)


def run_name(m):
    """The name a mix's run goes by: its own, or MIX#N for run N of several (./xq bench mix runs=N)."""
    return m["name"] + ("#%d" % m["run"] if m.get("run") else "")


def label(m):
    """A mix's name, with the mode that ran first where that was not native (cross-mode readings read the host's drift)."""
    order = run_order(m)
    return run_name(m) + (" (%s first)" % order[0] if len(order) > 1 and order[0] != "native" else "")

def main(args):
    global XQ
    if len(args) >= 2 and args[0] == "--mode":
        XQ, args = args[1], args[2:]
    if not args:
        print(__doc__, file=sys.stderr)
        return 2
    rows, met, mps_runs, judged = [], {"xq": 0, "mps": 0}, 0, 0
    # the readings by kind, for the summary: LC {kind: {mode: [ratios]}}, BE [(whole run, between the stops)]
    lc_kinds, be_all, medians = {}, [], []
    for f in files(args):
        with (gzip.open if f.endswith(".gz") else open)(f, "rt") as fh:
            d = json.load(fh)
        for m in d.get("mixes", []):
            if XQ != "xq" and not any(XQ in (t.get("p99_over_standalone") or {}) or XQ in (t.get("paired") or {})
                                      or XQ + "_vs_native" in t for t in m["tenants"]):
                continue  # the mode judged was not run on this mix
            lc, be, ok, worse = [], [], {"xq": True, "mps": True}, []
            has_mps = False
            for t in m["tenants"]:
                if t["role"] == "lc":
                    r = t.get("p99_over_standalone", {})
                    tag = ""
                    if t.get("goal_by") == "paired":
                        r = {md: v.get("shared_over_alone_p99") for md, v in t.get("paired", {}).items()}
                        tag = " (paired)"
                    nat = r.get("native")
                    has_mps |= "mps" in r
                    if m.get("goals_met", False) is not None:
                        for md in ("native", XQ, "mps"):
                            if r.get(md) is not None:
                                lc_kinds.setdefault(t.get("kind", t["name"]), {}).setdefault(md, []).append(r[md])
                    close = [md for md, key in (("xq", "over_native_within_range"), ("mps", "mps_over_native_within_range"))
                             if t.get(key) and (md != "xq" or XQ == "xq")]
                    # xq's shared requests within 0.75 s of a continue and after (files since session 57)
                    px = t.get("paired", {}).get(XQ, {}) if tag else {}
                    phase = (" (%s early / late %s / %s)" % (XQ, fmt(px.get("early_over_alone_p99")), fmt(px.get("late_over_alone_p99")))
                             if "early_over_alone_p99" in px else "")
                    # absolute: xq's shared P99 over native's alone P99, same run (what the other LC tenants
                    # cost it too, which the pairs have on both sides; bench/gpu/lc-absolute.py prints them all)
                    pn = t.get("paired", {}).get("native", {}) if tag else {}
                    if px.get("shared_p99_ms") and pn.get("alone_p99_ms"):
                        phase += " (%s shared over native alone %s)" % (XQ, fmt(px["shared_p99_ms"] / pn["alone_p99_ms"]))
                    # the median with the best-effort company stopped, against native's: what the other
                    # latency-critical tenants cost it under XQ, which the paired reading has on both sides
                    # of its ratio and so never sees (session 80: an eager decoder beside a large batch at
                    # 1.82-1.91 x native's median, its paired P99 within 1.01-1.03)
                    # a P99 of fewer than FEW requests is its largest or nearly: say so, with the
                    # scenario's 90 % range of the ratio (a large batch on a 100 ms beat: 44 alone and 51
                    # shared, its verdict turned on one or two requests in session 81)
                    nreq = [px.get(k) for k in ("alone_requests", "shared_requests") if px.get(k)]
                    if nreq and min(nreq) < FEW:
                        rng = px.get("shared_over_alone_p99_range90")
                        phase += " (%s's P99 of %s alone / %s shared requests%s)" % (
                            XQ, px.get("alone_requests", "?"), px.get("shared_requests", "?"),
                            ", 90 %% range %s-%s" % (fmt(rng[0]), fmt(rng[1])) if rng and len(rng) == 2 else "")
                    if px.get("alone_p50_ms") and pn.get("alone_p50_ms"):
                        r50 = px["alone_p50_ms"] / pn["alone_p50_ms"]
                        medians.append(r50)
                        if r50 >= MEDIAN_FLAG:
                            phase += " (**%s's median with the company stopped %s x native's**)" % (XQ, fmt(r50))
                    # where its requests' time went (the scenario's host_device_parts, since session 83): the
                    # device's part at P99 and how many of the mode's slowest were made on its host
                    hp = (t.get("host_device_parts") or {}).get(XQ)
                    if hp:
                        phase += " (%s: device's part P99 %s ms, slowest %d: host-made %d, device-made %d)" % (
                            XQ, fmt(hp.get("device_p99_ms")), hp.get("slowest", 0), hp.get("slowest_host_made", 0),
                            hp.get("slowest_device_made", 0))
                    lc.append("%s%s %s / %s / %s%s%s" % (t["name"], tag, fmt(nat), fmt(r.get(XQ), lc_ok(r.get(XQ), nat)),
                                                         fmt(r.get("mps"), lc_ok(r.get("mps"), nat)), phase,
                                                         " (%s over native within the readings' ranges)" % " and ".join(close)
                                                         if close else ""))
                    for md in ok:
                        ok[md] &= lc_ok(r.get(XQ if md == "xq" else md), nat)
                    if worse_than_native(t, r, tag):
                        worse.append(t["name"])
                else:
                    x, p = t.get(XQ + "_vs_native"), t.get("mps_vs_native")
                    has_mps |= p is not None
                    # paired: judged by its rate between the stops; its median interval and its first
                    # finish after a continue (files since session 58) printed beside
                    bs = between_stops(f, m, t) or {}
                    jx, jp = bs.get(XQ, x), bs.get("mps", p)
                    st, pb = t.get("steady_vs_native", {}), t.get("paired_pace", {})
                    pace = ""
                    if XQ in bs or XQ in st:
                        pace = " (between the stops %s%s; median interval %s; first done after a continue %s / %s ms)" % (
                            fmt(bs.get(XQ), bs.get(XQ) is not None and bs[XQ] >= BE_FLOOR),
                            " / " + fmt(bs["mps"], bs["mps"] >= BE_FLOOR) if "mps" in bs else "",
                            fmt(st.get(XQ)), ms(pb.get("native", {}).get("first_done_after_continue_median_ms")),
                            ms(pb.get(XQ, {}).get("first_done_after_continue_median_ms")))
                    be.append("%s %s / %s%s" % (t["name"], fmt(x, XQ not in bs and x is not None and x >= BE_FLOOR),
                                                fmt(p, "mps" not in bs and p is not None and p >= BE_FLOOR), pace))
                    if x is not None:
                        be_all.append((x, bs.get(XQ)))
                    ok["xq"] &= jx is not None and jx >= BE_FLOOR
                    ok["mps"] &= jp is not None and jp >= BE_FLOOR
                cs = t.get("checksum", {})
                ref = cs.get("standalone" if t["role"] == "lc" and "standalone" in cs else "native")
                x = cs.get(XQ)
                if ref is not None and x is not None and abs(x - ref) > TOL * max(abs(x), abs(ref)):
                    ok["xq"] = False
            if "goals_met" in m and m["goals_met"] is None:
                # the scenario judged nothing (a mode it needs left out: e.g. no standalone, no pause to pair)
                rows.append("| %s | %s | %s | not judged | not judged |" % (label(m), "; ".join(lc) or "-", "; ".join(be) or "-"))
                continue
            if not has_mps:
                ok["mps"] = None
            else:
                mps_runs += 1
            judged += 1
            for md in met:
                met[md] += 1 if ok[md] else 0
            rows.append("| %s | %s | %s | %s | %s |" % (label(m), "; ".join(lc) or "-", "; ".join(be) or "-",
                                                        "**met**" if ok["xq"] else "missed" + (
                                                            ": **worse than native for %s**" % ", ".join(worse) if worse else ""),
                                                        "-" if ok["mps"] is None else "met" if ok["mps"] else "missed"))
    print("| mix | LC P99 / standalone: native / %s / mps | BE rate / native: %s / mps | %s | mps |" % (XQ, XQ, XQ))
    print("|---|---|---|---|---|")
    print("\n".join(rows))
    print("\nmixes: %d (judged %d); goals met: %s %d%s" % (len(rows), judged, XQ, met["xq"], ", plain MPS %d of %d" % (met["mps"], mps_runs)
                                                  if mps_runs else " (plain MPS not run)"))
    summary(lc_kinds, be_all)
    if medians:
        print("LC medians with the company stopped, %s over native: %d of %d at %.2f x or more (%.2f-%.2f)" % (
            XQ, sum(1 for r in medians if r >= MEDIAN_FLAG), len(medians), MEDIAN_FLAG, min(medians), max(medians)))
    return 0


def summary(lc_kinds, be_all):
    """LC readings within the bound by kind and mode, BE readings at the floor, as the closing note counts them."""
    if not lc_kinds and not be_all:
        return
    modes = [md for md in ("native", XQ, "mps") if any(md in v for v in lc_kinds.values())]
    tot = {md: [0, 0] for md in modes}
    lines = []
    for kind in sorted(lc_kinds):
        cells = []
        for md in modes:
            v = lc_kinds[kind].get(md, [])
            n_ok = sum(1 for x in v if x <= LC_BOUND)
            tot[md][0] += n_ok
            tot[md][1] += len(v)
            cells.append("%s %d of %d%s" % (md, n_ok, len(v), " (%.2f-%.2f)" % (min(v), max(v)) if v else ""))
        lines.append("  %s: %s" % (kind, ", ".join(cells)))
    print("LC readings within %.2f x: %s" % (LC_BOUND, ", ".join("%s %d of %d" % (md, tot[md][0], tot[md][1]) for md in modes)))
    print("\n".join(lines))
    if be_all:
        whole = sorted(x for x, _ in be_all)
        steady = [b for _, b in be_all if b is not None]
        print("BE readings (%s over native) at %.2f or more: %d of %d over the whole run (median %.2f); between the stops %d of %d" % (
            XQ, BE_FLOOR, sum(1 for x in whole if x >= BE_FLOOR), len(whole), whole[len(whole) // 2] if len(whole) % 2
            else (whole[len(whole) // 2 - 1] + whole[len(whole) // 2]) / 2, sum(1 for b in steady if b >= BE_FLOOR), len(steady)))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
