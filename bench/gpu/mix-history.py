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

Usage: python3 bench/gpu/mix-history.py [--mode xq] [--mix NAME] [--markdown [--family "MIX MIX..."]] DIR[@MODE]...
  --markdown prints one table row per mix instead (docs/performance.md's "Where the goals stand, mix
  by mix"): every run's figure per tenant, tagged with its session (the -sNN in its path), how many
  runs met every goal, and which tenants missed their own goal in how many runs; --family lists the
  mixes to show (whitespace-separated), those without a run among them marked "not run".
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
    """[(path, mode)]: every mix-N.json under each DIR, read in mode, or in MODE for a DIR@MODE; where a run left
    no JSON (a call cut by its time limit before session 119's bench wrote one after each mix), its mix-N.txt."""
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
                t = re.fullmatch(r"(mix-\d+)\.txt(\.gz)?", n)
                if t and not any(os.path.exists(os.path.join(root, t.group(1) + e)) for e in (".json", ".json.gz")):
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


MODE = r"(?:native|xq-alt|xq-alone|xq|mps|standalone)"


def from_text(path, mode):
    """The mix scenario's progress lines ("mix NAME done (K/N): ...; goals MET") as {"mixes": [...]}, with the
    fields lc_figure and be_figure read: each LC tenant's paired ratio per mode, each BE tenant's rate over
    native's (between the stops where given). Only the figures those lines carry."""
    opener = gzip.open if path.endswith(".gz") else open
    mixes = []
    with opener(path, "rt") as f:
        for line in f:
            m = re.match(r"mix (\S+) done \(\d+/\d+\): (.*?)(?:; goals (MET|MISSED))?\s*$", line)
            if not m:
                continue
            body = m.group(2)
            heads = list(re.finditer(r"(?:^|; )([\w@=.-]+) (P99/standalone|rate/native) ", body))
            tenants = []
            for i, h in enumerate(heads):
                seg = body[h.end():heads[i + 1].start() if i + 1 < len(heads) else len(body)]
                if h.group(2) == "P99/standalone":
                    pr = re.search(r"P99 shared/alone \(requests\) (.*?)(?:, shared P99|$)", seg)
                    ratios = {k: float(v) for k, v in re.findall(r"\b(" + MODE + r") ([\d.]+) \(", pr.group(1))} if pr else {}
                    tenants.append({"name": h.group(1), "role": "lc", "p99_ms": dict.fromkeys(ratios, 0),
                                    "paired": {k: {"shared_over_alone_p99": v} for k, v in ratios.items()}})
                else:
                    whole = re.match(r"(" + MODE + r") ([\d.]+)", seg)
                    between = re.search(r"between the stops (" + MODE + r") ([\d.]+)", seg)
                    t = {"name": h.group(1), "role": "be", "it_per_s": {}}
                    if whole:
                        t["it_per_s"] = {whole.group(1): 0, "native": 0}
                        if whole.group(1) == "xq":
                            t["xq_vs_native"] = float(whole.group(2))
                    if between:
                        t["steady_rate_vs_native"] = {between.group(1): float(between.group(2))}
                        t["goal_by"] = "between_stops"
                    tenants.append(t)
            verdict = {"MET": True, "MISSED": False}.get(m.group(3))
            mixes.append({"name": m.group(1), "tenants": tenants, "goals_met": verdict, "from_text": True})
    return {"mixes": mixes}


def runs_of(paths, only):
    """{mix name: [run]} where a run is (path, verdict, [(tenant, role, ratio, how, native ratio)])."""
    by_mix = {}
    for p, mode in paths:
        try:
            j = from_text(p, mode) if re.search(r"\.txt(\.gz)?$", p) else load(p)
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


def session_of(src):
    m = re.search(r"-s(\d+)/", src)
    return f"s{m.group(1)}" if m else "?"


def tenant_missed(role, r, nat):
    """Whether one tenant's figure missed its own goal (None: no figure)."""
    if r is None:
        return None
    if role == "lc":
        return r > 1.10 or (nat is not None and nat <= 1.10 and r > nat)
    return r < 0.9


def markdown(by_mix, family, out=sys.stdout):
    """One row per mix: every run's figures by tenant with their sessions, verdicts, and who missed."""
    print("| mix | runs: met every goal | latency-critical: P99 with the company over without, per run [native's] "
          "| best-effort: rate over native sharing's, per run | who missed, in how many runs |", file=out)
    print("|---|---|---|---|---|", file=out)
    names = list(family) + sorted(n for n in by_mix if n not in family)
    totals = {"every": 0, "some": 0, "none": 0, "unjudged": 0, "not run": 0}
    for name in names:
        runs = by_mix.get(name)
        if not runs:
            totals["not run"] += 1
            print(f"| `{name}` | not run | - | - | - |", file=out)
            continue
        lc, be, missed, order = {}, {}, {}, []
        met = known = 0
        for src, verdict, figs in runs:
            tag = session_of(src)
            if verdict is not None:
                known += 1
                met += verdict is True
            for tn, role, r, how, nat in figs:
                if tn not in order:
                    order.append(tn)
                mark = "" if how in ("paired", "between", None) else "*"
                if role == "lc":
                    lc.setdefault(tn, []).append(f"{fmt(r)}{mark} [{fmt(nat)}] {tag}")
                else:
                    be.setdefault(tn, []).append(f"{fmt(r)}{mark} {tag}")
                if verdict is not None and tenant_missed(role, r, nat):
                    missed[tn] = missed.get(tn, 0) + 1
        if not known:
            totals["unjudged"] += 1
        elif met == known:
            totals["every"] += 1
        elif met:
            totals["some"] += 1
        else:
            totals["none"] += 1
        cell = lambda d: "<br>".join(f"{tn}: {' · '.join(d[tn])}" for tn in order if tn in d) or "-"
        who = ", ".join(f"{tn} {missed[tn]} of {known}" for tn in order if tn in missed) or "-"
        print(f"| `{name}` | {len(runs)}: {met if known else '-'} | {cell(lc)} | {cell(be)} | {who} |", file=out)
    print(f"\n{len(names)} mixes: every goal met in every judged run {totals['every']}, in some {totals['some']}, "
          f"in none {totals['none']}; runs not judged {totals['unjudged']}; not run {totals['not run']}. "
          "`*`: over the whole run (no stops).", file=out)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mode", default="xq", help="the mode to read (xq, xq-alt, mps, native); default xq")
    ap.add_argument("--mix", default=None, help="only this mix")
    ap.add_argument("--markdown", action="store_true", help="one table row per mix (docs/performance.md)")
    ap.add_argument("--family", default="", help="with --markdown: the mixes to list, whitespace-separated")
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
    if a.markdown:
        markdown(by_mix, a.family.split())
    else:
        report(by_mix, a.mode)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
