#!/usr/bin/env python3
"""A latency-critical tenant and a best-effort one of the family side by side with no XQ: natively
(time-sliced, no MPS) or as clients of a plain MPS daemon with SM limits fixed by hand, both
started together (READY/GO of bench/torch/family/tenant.py). For each split: the LC tenant's P50
and P99 and the BE tenant's iterations a second while the LC one ran (its synchronizes inside the
LC run's first and last request), against the LC tenant alone bare. Says what a static spatial split
can give a mix before XQ decides anything (issue 40: can space give both goals on this mix?).

Usage: python3 bench/gpu/mps-split.py OUTDIR LC BE SPLITS SECS
  SPLITS: comma-separated, each `native`, `alone` (the LC tenant alone, bare) or `LC%/BE%`
  (`100/30`: the LC client unlimited, the BE client at 30 % of the multiprocessors).
"""
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TENANT = os.path.join(HERE, "..", "torch", "family", "tenant.py")


def pct(v, q):
    v = sorted(v)
    k = (len(v) - 1) * q / 100.0
    f = int(k)
    c = min(f + 1, len(v) - 1)
    return v[f] + (v[c] - v[f]) * (k - f)


def start(kind, secs, env, log):
    return subprocess.Popen([sys.executable, "-u", TENANT, "--kind", kind, "--seconds", str(secs), "--wait-go"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, env=env, text=True)


def run(out, lc, be, split, secs):
    base = dict(os.environ)
    pipe = logd = None
    if split not in ("native", "alone"):
        a, b = split.split("/")
        pipe, logd = tempfile.mkdtemp(prefix="xq-split-pipe."), tempfile.mkdtemp(prefix="xq-split-log.")
        base.update(CUDA_MPS_PIPE_DIRECTORY=pipe, CUDA_MPS_LOG_DIRECTORY=logd)
        subprocess.run(["nvidia-cuda-mps-control", "-d"], env=base, check=True)
    try:
        procs = []
        tag = split.replace("/", "-")
        for role, kind in (("lc", lc), ("be", be)):
            if split == "alone" and role == "be":
                continue
            env = dict(base)
            if pipe:
                env["CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"] = (a if role == "lc" else b)
            # the BE tenant runs past the LC one's end, so its synchronizes cover the whole LC run
            procs.append((role, kind, start(kind, secs + (3 if role == "be" else 0), env,
                                            open(os.path.join(out, "%s-%s-%s.err" % (tag, role, kind)), "w"))))
        for _, _, p in procs:
            line = p.stdout.readline().strip()
            if line != "READY":
                raise RuntimeError("%s: expected READY, got %r" % (split, line))
        for _, _, p in procs:
            p.stdin.write("GO\n")
            p.stdin.flush()
        res = {}
        for role, kind, p in procs:
            line = p.stdout.readline()
            p.wait(timeout=120)
            res[role] = json.loads(line)
        with open(os.path.join(out, "%s.json" % tag), "w") as f:
            json.dump(res, f)
        r = {"split": split, "lc_p50_ms": round(res["lc"]["p50_ms"], 3), "lc_p99_ms": round(res["lc"]["p99_ms"], 3),
             "lc_checksum": res["lc"]["checksum"]}
        if "be" in res:
            t = res["lc"]["t_ms"]
            lo, hi = t[0], t[-1] + res["lc"]["lat_ms"][-1]
            inside = [s for s in res["be"]["sync_ms"] if lo <= s <= hi]
            if len(inside) >= 2:
                r["be_it_per_s"] = round((len(inside) - 1) * res["be"]["sync_every"] / ((inside[-1] - inside[0]) / 1000.0), 3)
            r["be_checksum"] = res["be"]["checksum"]
        return r
    finally:
        if pipe:
            subprocess.run(["nvidia-cuda-mps-control"], input="quit\n", env=base, text=True)
            time.sleep(1)


def main():
    out, lc, be, splits, secs = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4].split(","), float(sys.argv[5])
    os.makedirs(out, exist_ok=True)
    rows = []
    for s in splits:
        try:
            r = run(out, lc, be, s, secs)
        except Exception as e:  # one split that fails is said and the others still run
            r = {"split": s, "error": str(e)}
        rows.append(r)
        print(json.dumps(r), flush=True)
    alone = next((r["lc_p99_ms"] for r in rows if r.get("split") == "alone" and "lc_p99_ms" in r), None)
    native = next((r.get("be_it_per_s") for r in rows if r.get("split") == "native"), None)
    print("%s + %s: split, LC P99 / alone bare, BE rate / native (in the LC run)" % (lc, be))
    for r in rows:
        if "error" in r:
            print("  %-8s error: %s" % (r["split"], r["error"]))
            continue
        lcr = r["lc_p99_ms"] / alone if alone else float("nan")
        ber = r["be_it_per_s"] / native if native and r.get("be_it_per_s") else float("nan")
        print("  %-8s LC %.3f ms (%.2f x), BE %s it/s (%.2f)" % (r["split"], r["lc_p99_ms"], lcr, r.get("be_it_per_s"), ber))


if __name__ == "__main__":
    main()
