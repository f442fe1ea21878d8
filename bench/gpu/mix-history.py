#!/usr/bin/env python3
"""Every run of each family mix under the given directories, and whether its goals held run after run.

A goal counts as met when it holds run after run: one run of a mix says little on this host (a
best-effort rate of native's moves by +-16 % between runs, a decoder's P99 by 30 %). This reads the
mix scenario's JSON files (mix-*.json, plain or gzipped, as bench/gpu/mix-run.sh leaves them) under
each DIR, recursively, and prints per mix every run (its file), the scenario's verdict, each
latency-critical tenant's paired ratio (P99 with the company running over P99 with it stopped, in
the same mode of the same run; native's in brackets) and each best-effort tenant's rate over
native's (between the stops where the run paused, else over the whole run); then per mix how many
runs met every goal and each tenant's median over the runs. Runs without a paired reading (pause=0)
are listed with the figure the scenario judged by, marked so.

Usage: python3 bench/gpu/mix-history.py [--mode xq] [--mix NAME] DIR[@MODE]...
  DIR@MODE reads the files under DIR in MODE (an A/B call whose xq-alt became the default later:
  .../s81/call1@xq-alt); a mode the scenario gave no verdict for is judged here by its figures (the
  LC tenants' paired ratios within 1.10 and native's, the BE rates at 0.9 or more), approximately:
  the scenario also checks results, reports and each reading's range.
  e.g. python3 bench/gpu/mix-history.py docs/results/h200/2026-12-04-s8*
"""
import argparse
import gzip
import json
import os
import re
import statistics
import sys


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)


def files(dirs, mode):
    """[(path, mode)]: every mix-N.json under each DIR, read in mode, or in MODE for a DIR@MODE."""
    out = []
    for d in dirs:
        m = mode
        if "@" in d and not os.path.exists(d):
            d, m = d.rsplit("@", 1)
        if os.path.isfile(d):
            out.append((d, m))
            continue
        for root, _, names in os.walk(d):
            for n in names:
                if re.fullmatch(r"mix-\d+\.json(\.gz)?", n):
                    out.append((os.path.join(root, n), m))
    return sorted(set(out))


def lc_figure(t, mode):
    """(ratio, how) for an LC tenant in mode: the paired ratio, else P99 over standalone."""
    paired = (t.get("paired") or {}).get(mode) or {}
    r = paired.get("shared_over_alone_p99")
    if isinstance(r, (int, float)):
        return r, "paired"
    r = (t.get("p99_over_standalone") or {}).get(mode)
    if isinstance(r, (int, float)):
        return r, "standalone"
    return None, None


def be_figure(t, mode):
    """(ratio, how) for a BE tenant in mode: between the stops where there were stops, else the whole run."""
    r = (t.get("steady_rate_vs_native") or {}).get(mode)
    if isinstance(r, (int, float)) and t.get("goal_by") == "between_stops":
        return r, "between"
    if mode == "xq":
        r = t.get("xq_vs_native")
        if isinstance(r, (int, float)):
            return r, "whole"
    rates = t.get("it_per_s") or {}
    if isinstance(rates.get(mode), (int, float)) and rates.get("native"):
        return rates[mode] / rates["native"], "whole"
    return None, None


def runs_of(paths, only):
    """{mix name: [run]} where a run is (path, verdict, [(tenant, role, ratio, how, native ratio)])."""
    by_mix = {}
    for p, mode in paths:
        try:
            j = load(p)
        except (OSError, ValueError) as e:
            print(f"{p}: not read ({e})", file=sys.stderr)
            continue
        for m in j.get("mixes") or []:
            name = m.get("name")
            if not name or (only and name != only):
                continue
            tenants = m.get("tenants") or []
            if not any(mode in ((t.get("p99_ms") or {}) | (t.get("it_per_s") or {})) for t in tenants):
                continue  # the mode was not run in this file
            figs = []
            for t in tenants:
                if t.get("role") == "lc":
                    r, how = lc_figure(t, mode)
                    nat, _ = lc_figure(t, "native")
                    figs.append((t.get("name") or t.get("kind"), "lc", r, how, nat))
                else:
                    r, how = be_figure(t, mode)
                    figs.append((t.get("name") or t.get("kind"), "be", r, how, None))
            verdict = m.get("goals_met") if mode == "xq" else judge(figs) if mode.startswith("xq") else None
            src = (p if mode == "xq" else f"{p}@{mode}") + (f" run {m['run']}" if m.get("run") else "")
            by_mix.setdefault(name, []).append((src, verdict, figs))
    return by_mix


def judge(figs):
    """The scenario's goals from the figures, for a mode it gave no verdict for (xq-alt and the like): every
    LC ratio at most 1.10 and at most native's where native's is within that, every BE ratio at least 0.9;
    None where a figure is missing."""
    for _, role, r, _, nat in figs:
        if r is None:
            return None
        if role == "lc" and (r > 1.10 or (nat is not None and nat <= 1.10 and r > nat)):
            return False
        if role == "be" and r < 0.9:
            return False
    return True


def fmt(r):
    return "-" if r is None else f"{r:.2f}"


def report(by_mix, mode, out=sys.stdout):
    held_all, held_most, judged = [], [], 0
    for name in sorted(by_mix):
        runs = by_mix[name]
        print(f"{name}: {len(runs)} run{'s' if len(runs) != 1 else ''}", file=out)
        per_tenant = {}
        met = 0
        known = 0
        for p, verdict, figs in runs:
            parts = []
            for tn, role, r, how, nat in figs:
                mark = "" if how in ("paired", "between", None) else f" ({how})"
                if role == "lc":
                    parts.append(f"{tn} {fmt(r)} [{fmt(nat)}]{mark}")
                else:
                    parts.append(f"{tn} {fmt(r)}{mark}")
                if r is not None:
                    per_tenant.setdefault((tn, role), []).append(r)
            v = "met" if verdict is True else "missed" if verdict is False else "-"
            if verdict is not None:
                known += 1
                met += verdict is True
            print(f"  {v:6s} {', '.join(parts)}  ({p})", file=out)
        med = ", ".join(f"{tn} {statistics.median(v):.2f}" for (tn, role), v in per_tenant.items())
        if known:
            judged += 1
            print(f"  every goal met in {met} of {known} judged runs; medians over the runs: {med}", file=out)
            if met == known:
                held_all.append(name)
            elif met * 2 > known:
                held_most.append(name)
        else:
            print(f"  medians over the runs: {med}", file=out)
    if judged:
        print(f"\n{judged} mixes judged in mode {mode}: every goal met in every run in {len(held_all)}"
              f"{' (' + ', '.join(held_all) + ')' if held_all else ''}; in most runs in {len(held_most)}"
              f"{' (' + ', '.join(held_most) + ')' if held_most else ''}", file=out)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mode", default="xq", help="the mode to read (xq, xq-alt, mps, native); default xq")
    ap.add_argument("--mix", default=None, help="only this mix")
    ap.add_argument("dirs", nargs="+")
    a = ap.parse_args(argv)
    paths = files(a.dirs, a.mode)
    if not paths:
        print(f"no mix-N.json under {' '.join(a.dirs)}", file=sys.stderr)
        return 1
    by_mix = runs_of(paths, a.mix)
    if not by_mix:
        print(f"no mix with mode {a.mode} in {len(paths)} files", file=sys.stderr)
        return 1
    report(by_mix, a.mode)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
