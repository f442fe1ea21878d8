#!/usr/bin/env python3
"""How a latency-critical tenant's latency follows the width of what runs beside it (issue 40).

Plain MPS, no XQ: the LC kind (default decode) as an MPS client on the whole device, and beside it
one BE kind capped with CUDA_MPS_ACTIVE_THREAD_PERCENTAGE at each of --percents; also the LC kind
alone as a client. A --be entry KIND:P+KIND:P... is a group run once beside the LC, each member at
its own cap and all stopped together (how XQ's best-effort parts split the device: session 55). Each pair is started together (both READY, then GO to both, the family's
protocol, bench/torch/family/tenant.py) and runs --seconds. Prints one line per run: the LC's P50
and P99 against its own alone, the BE's rate against its own at 100 %, and the paired reading:
the BE process is stopped (SIGSTOP) for --pause seconds of every two and continued in between, and
the LC's requests with it running are set against those with it stopped in the same run (each
counted from 0.25 s after the change), so that the host's phases, which move an eager decoder by
more than the effect looked for between runs, fall on both halves alike. Whether a decoder's tail
grows with its company's width (memory bandwidth, not multiprocessors) says how much of the device
a best-effort tenant narrowed beside it should keep: XQ leaves it the device less the decoder's
widest launch, plain MPS's cap half (docs/performance.md, session 53).

Needs CUDA_MPS_PIPE_DIRECTORY of a running daemon (bench/gpu/beside.sh starts one).
Usage: python3 bench/gpu/probe/beside.py [--lc decode] [--be trainbf16,train32,gemm]
       [--percents 100,75,50,25] [--seconds 8] [--rounds 1] [--json OUT.jsonl]
       (--be gemm:56+triton:44: a group, each at its cap)"""
import argparse
import json
import os
import signal
import subprocess
import sys
import threading
import time

SETTLE_MS = 250.0

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


def rate(r):
    """A tenant's rate: a best-effort kind's iterations a second, a latency-critical kind's (a batch beside
    the decoder, session 80) requests a second."""
    if "it_per_s" in r:
        return r["it_per_s"]
    t = r.get("t_ms") or []
    return (len(t) - 1) * 1000.0 / (t[-1] - t[0]) if len(t) > 1 and t[-1] > t[0] else float("nan")


def signal_all(procs, sig):
    """Sends sig to every process still there; False when none was."""
    sent = False
    for proc in procs:
        try:
            os.kill(proc.pid, sig)
            sent = True
        except ProcessLookupError:
            pass
    return sent


def pauser(procs, pause, spans, done):
    """Stops procs for pause s of every 2 pause s (running first), recording (stop, cont) in epoch ms."""
    while not done.wait(pause):
        t0 = time.time() * 1000.0
        if not signal_all(procs, signal.SIGSTOP):
            return
        done.wait(pause)
        if not signal_all(procs, signal.SIGCONT):
            return
        spans.append((t0, time.time() * 1000.0))


def paired(lc, spans):
    """The LC's requests split by the spans: (shared P50, P99, alone P50, P99, n shared, n alone), or None."""
    t, lat = lc.get("t_ms") or [], lc.get("lat_ms") or []
    shared, alone = [], []
    for at, l in zip(t, lat):
        end = at + l
        inside = [sp for sp in spans if sp[0] + SETTLE_MS <= at and end <= sp[1]]
        touches = [sp for sp in spans if at < sp[1] + SETTLE_MS and end > sp[0]]
        if inside:
            alone.append(l)
        elif not touches:
            shared.append(l)
    if len(shared) < 5 or len(alone) < 5:
        return None
    def pct(v, q):
        v = sorted(v)
        return v[min(len(v) - 1, max(0, int(round(q / 100.0 * len(v) + 0.5)) - 1))]
    return pct(shared, 50), pct(shared, 99), pct(alone, 50), pct(alone, 99), len(shared), len(alone)


def together(specs, seconds, pause=0.0, spans=None):
    """specs: [(kind, pct or None)]; returns each one's JSON result (or {"error": ...}). With pause,
    every process but the first is stopped and continued together as pauser() does, the spans put in
    spans."""
    procs = [start(k, seconds, p) for k, p in specs]
    done = threading.Event()
    th = None
    try:
        for pr in procs:
            line = pr.stdout.readline().strip()
            if line != "READY":
                raise RuntimeError("a tenant said %r instead of READY" % line)
        for pr in procs:
            pr.stdin.write("GO\n")
            pr.stdin.flush()
        if pause > 0 and len(procs) > 1:
            th = threading.Thread(target=pauser, args=(procs[1:], pause, spans, done), daemon=True)
            th.start()
        out = []
        for pr in procs:
            last = None
            for line in pr.stdout:
                if line.strip():
                    last = line
            if pr is procs[0] and th is not None:
                done.set()  # the LC is done: the BE runs on to its end
                th.join()
                signal_all(procs[1:], signal.SIGCONT)
            pr.wait(timeout=seconds + 120)
            try:
                out.append(json.loads(last) if last else {"error": "no result (exit %s)" % pr.returncode})
            except ValueError:
                out.append({"error": "not JSON: %r" % last})
        return out
    finally:
        done.set()
        for pr in procs:
            if pr.poll() is None:
                try:
                    os.kill(pr.pid, signal.SIGCONT)
                except ProcessLookupError:
                    pass
                pr.kill()


def parse_group(text):
    """'gemm:56+triton:44' -> [("gemm", 56), ("triton", 44)]; ValueError naming the part when bad."""
    out = []
    for part in text.split("+"):
        kind, _, pct = part.partition(":")
        if not kind or not pct.isdigit() or not 1 <= int(pct) <= 100:
            raise ValueError("--be group part %r: want KIND:PERCENT with PERCENT in [1, 100]" % part)
        out.append((kind, int(pct)))
    return out


def group(a, rnd, be, alone, sink):
    """One run of the LC beside a group of BE processes, each at its own cap, all stopped together."""
    members = parse_group(be)
    spans = []
    res = together([(a.lc, None)] + members, a.seconds, a.pause, spans)
    lc, bgs = res[0], res[1:]
    bad = [r.get("error") for r in res if "error" in r]
    if bad:
        print("round %d: %s beside %s: failed: %s" % (rnd, a.lc, be, "; ".join(bad)), flush=True)
        return
    rates = ", ".join("%s %.1f it/s" % (k, rate(r)) for (k, _), r in zip(members, bgs))
    print("round %d: %s beside %s: P50 %6.2f ms (%.2f x alone), P99 %6.2f ms (%.2f x); %s" % (
        rnd, a.lc, be, lc["p50_ms"], lc["p50_ms"] / alone["p50_ms"], lc["p99_ms"], lc["p99_ms"] / alone["p99_ms"],
        rates), flush=True)
    pr = paired(lc, spans) if spans else None
    if pr:
        print("round %d:   paired (group running / stopped, %d / %d requests): P50 %.2f / %.2f ms = %.3f, "
              "P99 %.2f / %.2f ms = %.3f" % (rnd, pr[4], pr[5], pr[0], pr[2], pr[0] / pr[2], pr[1], pr[3],
                                             pr[1] / pr[3]), flush=True)
    if sink:
        sink.write(json.dumps({"round": rnd, "be": be, "percent": None, "lc": lc, "be_results": bgs, "stops_ms": spans,
                               "paired": None if not pr else {"shared_p50_ms": pr[0], "shared_p99_ms": pr[1],
                                                              "alone_p50_ms": pr[2], "alone_p99_ms": pr[3],
                                                              "shared": pr[4], "alone": pr[5]}}) + "\n")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--lc", default="decode")
    p.add_argument("--be", default="trainbf16,train32,gemm")
    p.add_argument("--percents", default="100,75,50,25")
    p.add_argument("--seconds", type=float, default=8.0)
    p.add_argument("--rounds", type=int, default=1)
    p.add_argument("--pause", type=float, default=1.0,
                   help="the paired reading: the BE stopped this many seconds of every two (0: never)")
    p.add_argument("--json", default=None, help="append every run's results here, one JSON line each")
    a = p.parse_args()
    if not os.environ.get("CUDA_MPS_PIPE_DIRECTORY"):
        p.error("CUDA_MPS_PIPE_DIRECTORY is not set: start an MPS control daemon first (bench/gpu/beside.sh does)")
    pcts = [int(x) for x in a.percents.split(",") if x]
    for x in pcts:
        if not 1 <= x <= 100:
            p.error("--percents %d is out of range [1, 100]" % x)
    bes = [x for x in a.be.split(",") if x]
    for x in bes:
        if ":" in x:
            try:
                parse_group(x)
            except ValueError as e:
                p.error(str(e))
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
        for be in [x for x in bes if ":" in x]:
            group(a, rnd, be, alone, sink)
        for be in [x for x in bes if ":" not in x]:
            for pct in pcts:
                spans = []
                lc, bg = together([(a.lc, None), (be, pct)], a.seconds, a.pause, spans)
                if "error" in lc or "error" in bg:
                    print("round %d: %s beside %s at %d %%: failed: %s %s" % (rnd, a.lc, be, pct, lc.get("error", ""),
                                                                            bg.get("error", "")), flush=True)
                    continue
                if pct == 100:
                    full[be] = rate(bg)
                rel = rate(bg) / full[be] if be in full and full[be] else float("nan")
                print("round %d: %s beside %-9s at %3d %%: P50 %6.2f ms (%.2f x alone), P99 %6.2f ms (%.2f x); "
                      "%s %.1f it/s (%.2f of its rate at 100 %%)" % (
                          rnd, a.lc, be, pct, lc["p50_ms"], lc["p50_ms"] / alone["p50_ms"], lc["p99_ms"],
                          lc["p99_ms"] / alone["p99_ms"], be, rate(bg), rel), flush=True)
                pr = paired(lc, spans) if spans else None
                if pr:
                    print("round %d:   paired (%s running / stopped, %d / %d requests): P50 %.2f / %.2f ms = %.3f, "
                          "P99 %.2f / %.2f ms = %.3f" % (rnd, be, pr[4], pr[5], pr[0], pr[2], pr[0] / pr[2], pr[1], pr[3],
                                                         pr[1] / pr[3]), flush=True)
                elif a.pause > 0:
                    print("round %d:   paired: too few requests in a half (a longer --seconds)" % rnd, flush=True)
                if sink:
                    sink.write(json.dumps({"round": rnd, "be": be, "percent": pct, "lc": lc, "be_result": bg,
                                           "stops_ms": spans,
                                           "paired": None if not pr else {"shared_p50_ms": pr[0], "shared_p99_ms": pr[1],
                                                                          "alone_p50_ms": pr[2], "alone_p99_ms": pr[3],
                                                                          "shared": pr[4], "alone": pr[5]}}) + "\n")
    if sink:
        sink.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
