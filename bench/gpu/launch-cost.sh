#!/bin/sh
# GPU machine (issue 40): what the interposer costs one kernel launch on the real driver, without
# a model around it: probe/launchcost.cu (the runtime API, the legacy default stream, an empty
# kernel, each launch timed alone) bare and under ./xq run, in rounds taken in turn (the host's
# speed moves in phases of seconds), with 0 and TOUCH KiB (default 1024) of the program's own
# memory touched between launches (the caches an eager framework leaves). Modes: bare; xq
# (./xq run with XQ_MPS=0: the interposer and the node, no MPS server: the same driver path as
# bare); a LIBS="name=path ..." list adds one xq mode per interposer build (copied over
# interpose/target/libxq-cuda.so for its runs; the carried one is put back at the end).
# XQ_LOG is unset in the timed runs (the production path); one extra run per build with XQ_LOG=2
# prints the interposer's own account (host time a call) into its .err file.
# Paired (probe/launchpair.cu, PAIRS pairs, default 50000): in one process, launches through the
# driver's own cuLaunchKernel and through the one cuGetProcAddress hands out (the interposer's
# under ./xq run) alternate, each timed alone: the pairs' difference is the interposer's cost with
# the host's drift cancelled (bare, the control: about 0). Run per round, per touch, per build.
# CODE_KB (default 0): that much code run before each paired launch too (launchpair's third
# argument: the instruction caches a framework leaves, so the interposer's code is fetched cold).
# Carry node/target, interpose/target, .jre.tar.xz. Usage: [ROUNDS=3] [N=100000] [PAIRS=50000] [TOUCH=1024] [CODE_KB=0]
# [LIBS="s49=.ab/libxq-cuda-s49.so"] sh bench/gpu/launch-cost.sh OUTDIR
set -u
out=${1:?usage: launch-cost.sh OUTDIR}
mkdir -p "$out"
N=${N:-100000}
T=${TOUCH:-1024}
nvcc -O2 -o "$out/launchcost" bench/gpu/probe/launchcost.cu > "$out/build.txt" 2>&1 || { cat "$out/build.txt"; exit 1; }
nvcc -O2 -o "$out/launchpair" bench/gpu/probe/launchpair.cu -lcuda > "$out/build-pair.txt" 2>&1 || { cat "$out/build-pair.txt"; exit 1; }
P=${PAIRS:-50000}
unset XQ_LOG
./xq serve > "$out/node.txt" 2>&1 &
node=$!
sleep 6
so=interpose/target/libxq-cuda.so
cp "$so" "$out/xq.so"
libs="xq=$out/xq.so ${LIBS:-}"
for round in $(seq "${ROUNDS:-3}"); do
  for kb in 0 "$T"; do
    "$out/launchcost" "$N" "$kb" > "$out/bare-$kb-$round.txt" 2>&1
    "$out/launchpair" "$P" "$kb" "${CODE_KB:-0}" > "$out/pair-bare-$kb-$round.txt" 2>&1
    for l in $libs; do
      name=${l%%=*} path=${l#*=}
      cp "$path" "$so" && XQ_MPS=0 ./xq run --priority 2 --name "lc-$name" -- "$out/launchcost" "$N" "$kb" \
        > "$out/$name-$kb-$round.txt" 2> "$out/$name-$kb-$round.err"
      XQ_MPS=0 ./xq run --priority 2 --name "lp-$name" -- "$out/launchpair" "$P" "$kb" "${CODE_KB:-0}" \
        > "$out/pair-$name-$kb-$round.txt" 2> "$out/pair-$name-$kb-$round.err"
    done
  done
done
for l in $libs; do
  name=${l%%=*} path=${l#*=}
  cp "$path" "$so" && XQ_LOG=2 XQ_MPS=0 ./xq run --priority 2 --name "lc-$name" -- "$out/launchcost" "$N" "$T" \
    > "$out/$name-log2.txt" 2> "$out/$name-log2.err"
  grep -h "host time in the interposer" "$out/$name-log2.err" | sed "s/^/$name (XQ_LOG=2, $T KiB): /"
done
kill $node; wait $node 2>/dev/null
cp "$out/xq.so" "$so" && rm -f "$out/xq.so"
python3 - "$out" "${ROUNDS:-3}" "$T" $libs <<'PY'
import json, os, statistics, sys
d, rounds, t = sys.argv[1], int(sys.argv[2]), sys.argv[3]
names = ["bare"] + [l.split("=", 1)[0] for l in sys.argv[4:]]
def get(name):
    try:
        return json.loads([l for l in open(os.path.join(d, name)).read().splitlines() if l.startswith("{")][-1])
    except Exception:
        return None
for kb in ("0", t):
    for n in names:
        rows = [get(f"{n}-{kb}-{r}.txt") for r in range(1, rounds + 1)]
        rows = [r for r in rows if r]
        if not rows:
            print(f"{n} touch {kb} KiB: no result"); continue
        line = f"{n:8s} touch {kb:>5s} KiB: P50 " + " ".join(str(r["p50_ns"]) for r in rows) + ", P99 " + \
               " ".join(str(r["p99_ns"]) for r in rows) + ", mean " + " ".join(str(round(r["mean_ns"])) for r in rows) + " ns"
        if n != "bare":
            diffs = []
            for r in range(1, rounds + 1):
                b, x = get(f"bare-{kb}-{r}.txt"), get(f"{n}-{kb}-{r}.txt")
                if b and x: diffs.append(x["p50_ns"] - b["p50_ns"])
            if diffs: line += f"; P50 over bare per round " + " ".join(str(v) for v in diffs) + f" (median {statistics.median(diffs):.0f} ns)"
        print(line)
print("paired (one process, the driver's own cuLaunchKernel and cuGetProcAddress's in turn; via - bare per pair):")
for kb in ("0", t):
    for n in names:
        rows = [get(f"pair-{n}-{kb}-{r}.txt") for r in range(1, rounds + 1)]
        rows = [r for r in rows if r]
        if not rows:
            print(f"  {n} touch {kb} KiB: no result"); continue
        print(f"  {n:8s} touch {kb:>5s} KiB: difference P50 " + " ".join(str(r["diff_p50_ns"]) for r in rows) +
              ", P90 " + " ".join(str(r["diff_p90_ns"]) for r in rows) + ", P99 " + " ".join(str(r["diff_p99_ns"]) for r in rows) +
              ", mean " + " ".join(str(round(r["diff_mean_ns"])) for r in rows) + " ns; bare P50 " +
              " ".join(str(r["bare_p50_ns"]) for r in rows) + f" ns (median difference {statistics.median(r['diff_p50_ns'] for r in rows):.0f} ns)")
PY
