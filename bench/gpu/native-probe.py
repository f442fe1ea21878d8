#!/usr/bin/env python3
"""What native time slicing gives each of two best-effort processes, measured directly: no node, no
MPS, no interposer; each process alone and the two together, bare, on one GPU.

Why: the measured cut (bestEffortBalance) gives best-effort processes equal shares of their rates
alone, and on the H100 the trainers beside Triton's row softmax stay under 0.9 of what native
sharing gives them, because native sharing gives a trainer about 0.61-0.71 of its rate alone and
Triton 0.17-0.43. Those figures were estimated (bench/gpu/native-split.py: a rate alone read by
the node, under MPS, in its spells; native's from another mode of the run), never measured as one
experiment. This measures the split bare, and tests the one mechanism left in view: a context
that synchronizes goes idle, and the GPU's time slices pass to the other context until its slice
ends, so a process that synchronizes often (Triton: every 16 steps, 2-3 ms) would keep less. If
that holds, Triton synchronizing every 256 steps keeps much more of its rate alone beside the same
trainer, and a trainer synchronizing every 8 steps keeps about what it kept.

Configurations, per trainer (default trainbf16 and train32), each SECS seconds of steady work:
  alone:   TRAINER, TRAINER at --sync-every 8, triton (16), triton at --sync-every 256
  together: TRAINER + triton, TRAINER + triton/256, TRAINER/8 + triton
Processes are started with --wait-go and told GO together once each is ready (model built, warm).
ROUNDS rounds, the order of the configurations reversed every other round (the host drifts).

Prints per run each process's rate (iterations a second) and its synchronize interval (P10 / P50 /
P90 ms), then per trainer what each process kept of its rate alone (together / alone, the same
sync setting, medians over rounds). JSON of every run to OUT/native-probe.json.

MPS=1 adds, per trainer, the same processes as clients of a plain MPS daemon (no XQ), started for
each such run: each alone on the whole device (against its bare rate alone: what MPS itself costs
or gives), together on the whole device, together at 50 % each (CUDA_MPS_ACTIVE_THREAD_PERCENTAGE,
about the node's 8/8 cut) and at 75 % / 25 % (about 12/4); their kept figures are over the bare
rates alone, as native's are, so that each reads against native sharing directly.

Usage (GPU machine, repository root): [SECS=8] [ROUNDS=1] [TRAINERS=trainbf16,train32] [MPS=0|1]
  python3 bench/gpu/native-probe.py OUT
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

TENANT = os.environ.get("NATIVE_PROBE_TENANT") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "torch", "family", "tenant.py")


def pct(xs, q):
    s = sorted(xs)
    return s[min(len(s) - 1, int(round(q / 100.0 * (len(s) - 1))))] if s else float("nan")


def intervals(sync_ms):
    return [b - a for a, b in zip(sync_ms, sync_ms[1:])]


def start(kind, secs, sync_every, log, env):
    cmd = [sys.executable, "-u", TENANT, "--kind", kind, "--seconds", str(secs), "--wait-go"]
    if sync_every:
        cmd += ["--sync-every", str(sync_every)]
    return subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, text=True, env=env)


class Mps:
    """A plain MPS control daemon of this run's own (pipe and log directories of its own)."""

    def __init__(self, out):
        # short paths under /tmp: the pipe directory holds a Unix socket, whose path has a length limit
        self.env = dict(os.environ, CUDA_MPS_PIPE_DIRECTORY=tempfile.mkdtemp(prefix="np-pipe-", dir="/tmp"),
                        CUDA_MPS_LOG_DIRECTORY=tempfile.mkdtemp(prefix="np-log-", dir="/tmp"))

    def __enter__(self):
        subprocess.run(["nvidia-cuda-mps-control", "-d"], env=self.env, check=True)
        return self

    def __exit__(self, *exc):
        subprocess.run(["nvidia-cuda-mps-control"], input="quit\n", text=True, env=self.env)
        time.sleep(1)

    def client(self, percent):
        return dict(self.env, CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=str(percent))


def run(procs, secs, out, name):
    """procs: [(label, kind, sync_every[, MPS percentage])]; returns {label: result} once every process ended."""
    if any(len(p) > 3 for p in procs):
        with Mps(out) as mps:
            return run_in(procs, secs, out, name, mps)
    return run_in(procs, secs, out, name, None)


def run_in(procs, secs, out, name, mps):
    logs, ps = [], []
    for label, kind, sync, *share in procs:
        f = open(os.path.join(out, "%s-%s.err" % (name, label)), "w")
        logs.append(f)
        ps.append((label, start(kind, secs, sync, f, mps.client(share[0]) if mps and share else None)))
    try:
        for label, p in ps:  # each says READY once built and warm
            while True:
                line = p.stdout.readline()
                if not line:
                    raise RuntimeError("%s: %s ended before READY (see %s-%s.err)" % (name, label, name, label))
                if line.strip() == "READY":
                    break
        for _, p in ps:  # GO to each at once
            p.stdin.write("GO\n")
            p.stdin.flush()
        res = {}
        for label, p in ps:
            last = None
            for line in p.stdout:
                if line.startswith("{"):
                    last = json.loads(line)
            p.wait(timeout=secs + 120)
            if last is None or "error" in last:
                raise RuntimeError("%s: %s gave no result: %r" % (name, label, last))
            res[label] = last
        return res
    finally:
        for _, p in ps:
            if p.poll() is None:
                p.kill()
        for f in logs:
            f.close()


def main(argv):
    if len(argv) != 2:
        sys.exit(__doc__)
    out = argv[1]
    os.makedirs(out, exist_ok=True)
    secs = float(os.environ.get("SECS", "8"))
    rounds = int(os.environ.get("ROUNDS", "1"))
    trainers = [t for t in os.environ.get("TRAINERS", "trainbf16,train32").split(",") if t]
    mps = os.environ.get("MPS", "0") == "1"
    allowed = ("train32", "trainbf16", "trainio")
    for t in trainers:
        if t not in allowed:
            sys.exit("native-probe: trainer %r is not allowed; allowed: %s" % (t, ", ".join(allowed)))
    configs = []
    for t in trainers:
        configs += [
            ("%s-alone" % t, [(t, t, None)]),
            ("%ss8-alone" % t, [(t, t, 8)]),
            ("triton-alone", [("triton", "triton", None)]),
            ("tritons256-alone", [("triton", "triton", 256)]),
            ("%s+triton" % t, [(t, t, None), ("triton", "triton", None)]),
            ("%s+tritons256" % t, [(t, t, None), ("triton", "triton", 256)]),
            ("%ss8+triton" % t, [(t, t, 8), ("triton", "triton", None)]),
        ]
        if mps:
            configs += [
                ("%s-alone-mps" % t, [(t, t, None, 100)]),
                ("triton-alone-mps", [("triton", "triton", None, 100)]),
                ("%s+triton-mps" % t, [(t, t, None, 100), ("triton", "triton", None, 100)]),
                ("%s+triton-mps50" % t, [(t, t, None, 50), ("triton", "triton", None, 50)]),
                ("%s+triton-mps75" % t, [(t, t, None, 75), ("triton", "triton", None, 25)]),
            ]
    seen, uniq = set(), []
    for c in configs:  # triton's alone runs once a round, whatever the trainers
        if c[0] not in seen:
            seen.add(c[0])
            uniq.append(c)
    runs = []
    for r in range(1, rounds + 1):
        order = uniq if r % 2 else list(reversed(uniq))
        for name, procs in order:
            t0 = time.time()
            try:
                res = run(procs, secs, out, "%s-%d" % (name, r))
            except Exception as e:  # a run that failed is said and left out, the others go on
                print("round %d %s: FAILED: %s" % (r, name, e), flush=True)
                runs.append({"round": r, "config": name, "error": str(e)})
                continue
            line = []
            for label, v in res.items():
                iv = intervals(v.get("sync_ms", []))
                line.append("%s %.1f it/s (sync every %d, interval P10/P50/P90 %.2f/%.2f/%.2f ms)"
                            % (label, v["it_per_s"], v["sync_every"], pct(iv, 10), pct(iv, 50), pct(iv, 90)))
            print("round %d %-22s %s  [%.0f s]" % (r, name, "; ".join(line), time.time() - t0), flush=True)
            runs.append({"round": r, "config": name, "results": res})
    with open(os.path.join(out, "native-probe.json"), "w") as f:
        json.dump({"secs": secs, "rounds": rounds, "trainers": trainers, "runs": runs}, f)

    def rate(config, label):
        xs = [x["results"][label]["it_per_s"] for x in runs if x["config"] == config and "results" in x]
        return statistics.median(xs) if xs else float("nan")

    print("\nkept of the rate alone under native time slicing (together / alone, medians over %d round(s)):" % rounds)
    for t in trainers:
        rows = [("%s+triton" % t, t, "%s-alone" % t, "triton", "triton-alone"),
                ("%s+tritons256" % t, t, "%s-alone" % t, "triton", "tritons256-alone"),
                ("%ss8+triton" % t, t, "%ss8-alone" % t, "triton", "triton-alone")]
        if mps:
            # under MPS: over the bare rates alone (native's denominators), and the MPS rates alone over the bare
            rows += [("%s-alone-mps" % t, t, "%s-alone" % t, "triton", None),
                     ("triton-alone-mps", None, None, "triton", "triton-alone")]
            rows += [("%s+triton-mps%s" % (t, w), t, "%s-alone" % t, "triton", "triton-alone") for w in ("", "50", "75")]
        for together, tl, ta, xl, xa in rows:
            if tl is None or xa is None:
                lone = (together, tl, ta) if xa is None else (together, xl, xa)
                print("  %-22s %s %.2f of its bare rate alone" % (lone[0], lone[1], rate(lone[0], lone[1]) / rate(lone[2], lone[1])))
                continue
            kt = rate(together, tl) / rate(ta, tl)
            kx = rate(together, xl) / rate(xa, "triton")
            print("  %-22s %s %.2f, triton %.2f, sum %.2f" % (together, t, kt, kx, kt + kx))
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
