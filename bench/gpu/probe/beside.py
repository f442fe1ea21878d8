#!/usr/bin/env python3
"""How a latency-critical tenant's latency follows the width of what runs beside it (issue 40).

Plain MPS, no XQ: the LC kind (default decode) as an MPS client on the whole device, and beside it
one BE kind capped with CUDA_MPS_ACTIVE_THREAD_PERCENTAGE at each of --percents; also the LC kind
alone as a client. Each pair is started together (both READY, then GO to both, the family's
protocol, bench/torch/family/tenant.py) and runs --seconds. Prints one line per run: the LC's P50
and P99 against its own alone, the BE's rate against its own at 100 %. Whether a decoder's tail
grows with its company's width (memory bandwidth, not multiprocessors) says how much of the device
a best-effort tenant narrowed beside it should keep: XQ leaves it the device less the decoder's
widest launch, plain MPS's cap half (docs/performance.md, session 53).

Needs CUDA_MPS_PIPE_DIRECTORY of a running daemon (bench/gpu/beside.sh starts one).
Usage: python3 bench/gpu/probe/beside.py [--lc decode] [--be trainbf16,train32,gemm]
       [--percents 100,75,50,25] [--seconds 8] [--rounds 1] [--json OUT.jsonl]"""
import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
# XQ_BESIDE_TENANT: another script with the same protocol (a check of this driver without a GPU)
TENANT = os.environ.get("XQ_BESIDE_TENANT") or os.path.join(HERE, "..", "..", "torch", "family", "tenant.py")


def start(kind, seconds, pct):
    env = dict(os.environ)
    env.pop("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", None)
    if pct is not None:
        env["CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"] = str(pct)
    return subprocess.Popen([sys.executable, "-u", TENANT, "--kind", kind, "--seconds", str(seconds), "--wait-go"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)


def together(specs, seconds):
    """specs: [(kind, pct or None)]; returns each one's JSON result (or {"error": ...})."""
    procs = [start(k, seconds, p) for k, p in specs]
    try:
        for pr in procs:
            line = pr.stdout.readline().strip()
            if line != "READY":
                raise RuntimeError("a tenant said %r instead of READY" % line)
        for pr in procs:
            pr.stdin.write("GO\n")
            pr.stdin.flush()
        out = []
        for pr in procs:
            last = None
            for line in pr.stdout:
                if line.strip():
                    last = line
            pr.wait(timeout=seconds + 120)
            try:
                out.append(json.loads(last) if last else {"error": "no result (exit %s)" % pr.returncode})
            except ValueError:
                out.append({"error": "not JSON: %r" % last})
        return out
    finally:
        for pr in procs:
            if pr.poll() is None:
                pr.kill()


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--lc", default="decode")
    p.add_argument("--be", default="trainbf16,train32,gemm")
    p.add_argument("--percents", default="100,75,50,25")
    p.add_argument("--seconds", type=float, default=8.0)
    p.add_argument("--rounds", type=int, default=1)
    p.add_argument("--json", default=None, help="append every run's results here, one JSON line each")
    a = p.parse_args()
    if not os.environ.get("CUDA_MPS_PIPE_DIRECTORY"):
        p.error("CUDA_MPS_PIPE_DIRECTORY is not set: start an MPS control daemon first (bench/gpu/beside.sh does)")
    pcts = [int(x) for x in a.percents.split(",") if x]
    for x in pcts:
        if not 1 <= x <= 100:
            p.error("--percents %d is out of range [1, 100]" % x)
    bes = [x for x in a.be.split(",") if x]
    sink = open(a.json, "a") if a.json else None
    for rnd in range(1, a.rounds + 1):
        alone = together([(a.lc, None)], a.seconds)[0]
        if "error" in alone:
            print("round %d: %s alone failed: %s" % (rnd, a.lc, alone["error"]))
            continue
        print("round %d: %s alone P50 %.2f ms, P99 %.2f ms" % (rnd, a.lc, alone["p50_ms"], alone["p99_ms"]), flush=True)
        if sink:
            sink.write(json.dumps({"round": rnd, "be": None, "percent": None, "lc": alone}) + "\n")
        full = {}
        for be in bes:
            for pct in pcts:
                lc, bg = together([(a.lc, None), (be, pct)], a.seconds)
                if "error" in lc or "error" in bg:
                    print("round %d: %s beside %s at %d %%: failed: %s %s" % (rnd, a.lc, be, pct, lc.get("error", ""),
                                                                            bg.get("error", "")), flush=True)
                    continue
                if pct == 100:
                    full[be] = bg["it_per_s"]
                rel = bg["it_per_s"] / full[be] if be in full else float("nan")
                print("round %d: %s beside %-9s at %3d %%: P50 %6.2f ms (%.2f x alone), P99 %6.2f ms (%.2f x); "
                      "%s %.1f it/s (%.2f of its rate at 100 %%)" % (
                          rnd, a.lc, be, pct, lc["p50_ms"], lc["p50_ms"] / alone["p50_ms"], lc["p99_ms"],
                          lc["p99_ms"] / alone["p99_ms"], be, bg["it_per_s"], rel), flush=True)
                if sink:
                    sink.write(json.dumps({"round": rnd, "be": be, "percent": pct, "lc": lc, "be_result": bg}) + "\n")
    if sink:
        sink.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
