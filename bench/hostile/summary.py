#!/usr/bin/env python3
"""Summary of bench/hostile/victim-p99.sh's runs.tsv: every run's P50/P99, the median ratio of the
P99 under attack to the baseline just before it, the P99 of all tasks of a condition pooled (and the
ratios of the pooled P90, P95 and P99: a P99 of one run of 50-100 tasks is its second slowest), and
the operator commands' slowest times under attack."""
import json, statistics, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])][1:]
import os
TASKS = int(os.environ.get("TASKS", "50"))  # the victim's tasks a run (victim-p99.sh TASKS)
def pct(xs, q):
    xs = sorted(xs)
    return xs[int(q * (len(xs) - 1))]
by = {}
for atk, pair, cond, rc, js, ops, attacker in rows:
    try:
        j = json.loads(js)
    except Exception:
        j = {"tasks": 0, "p50_ms": float("nan"), "p99_ms": float("nan"), "lat_ms": []}
    by.setdefault(atk, []).append((int(pair), cond, int(rc), j, ops.split(" "), attacker))
print("| attack | pair | baseline P50 / P99 ms | under attack P50 / P99 ms | P99 ratio | victim tasks done (base, attack) | operator under attack: curl queues, curl policy, ./xq queues, ./xq policy (ms) | CPU during the victim's run under attack (ticks of 10 ms) |")
print("|---|---|---|---|---|---|---|---|")
for atk, rs in by.items():
    ratios, base_lat, atk_lat, lost, worst_ops = [], [], [], 0, [0, 0, 0, 0]
    pairs = sorted({r[0] for r in rs})
    for p in pairs:
        b = next(r for r in rs if r[0] == p and r[1] == "base")
        a = next(r for r in rs if r[0] == p and r[1] == "attack")
        ratio = a[3]["p99_ms"] / b[3]["p99_ms"]
        ratios.append(ratio)
        base_lat += b[3].get("lat_ms", []); atk_lat += a[3].get("lat_ms", [])
        for r in (a, b):
            lost += TASKS - r[3].get("tasks", 0) + (1 if r[2] != 0 else 0)
        o = [x.split("/")[0] for x in a[4][:4]]
        codes = [x.split("/")[1] for x in a[4][:4]]
        cpu = "base " + b[5] + "; attack " + a[5].split(" set_up")[0]
        print(f"| {atk} | {p} | {b[3]['p50_ms']:.3f} / {b[3]['p99_ms']:.3f} | {a[3]['p50_ms']:.3f} / {a[3]['p99_ms']:.3f} | {ratio:.2f} "
              f"| {b[3].get('tasks')} rc {b[2]}, {a[3].get('tasks')} rc {a[2]} | {', '.join(f'{t} ({c})' for t, c in zip(o, codes))} | {cpu} |")
    print(f"| **{atk}** | median | | | **{statistics.median(ratios):.2f}** | lost {lost} | pooled P99 base {pct(base_lat, .99):.3f}, attack {pct(atk_lat, .99):.3f} ms ({len(base_lat)}/{len(atk_lat)} tasks); P90 / P95 / P99 attack/base {' / '.join(f'{pct(atk_lat, q) / pct(base_lat, q):.2f}' for q in (.9, .95, .99))} | |")
print()
for atk, rs in by.items():
    for r in rs:
        if r[1] == "attack":
            print(atk, r[0], "policy:", r[4][4] if len(r[4]) > 4 else "?", "| attacker:", r[5])
# WAKE=1 runs: how late threads woke (bench/hostile/wake.c) after each victim run, medians over the pairs
import re
wk = {}
for atk, rs in by.items():
    for r in rs:
        m = re.search(r"wake=(\{.*\})", r[5])
        if m:
            w = json.loads(m.group(1))
            wk.setdefault((atk, r[1]), []).append(w)
if wk:
    print()
    print("| attack | cond | runs | sleep 1 ms overshoot P50 / P99 / max us (medians) | semaphore post to wake P50 / P99 / max us (medians) |")
    print("|---|---|---|---|---|")
    for (atk, cond), ws in wk.items():
        med = lambda k, i: statistics.median(w[k][i] for w in ws)
        print(f"| {atk} | {cond} | {len(ws)} | {med('sleep_us',0):.0f} / {med('sleep_us',1):.0f} / {med('sleep_us',2):.0f} "
              f"| {med('pingpong_us',0):.0f} / {med('pingpong_us',1):.0f} / {med('pingpong_us',2):.0f} |")
