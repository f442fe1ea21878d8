#!/bin/sh
# GPU machine (issue 40): the interposer's overhead on a latency-critical tenant alone, measured
# request by request in one process: tenant.py --ab-interposer under ./xq run makes every other
# request with the launch path bypassed (the interposer's xq_bench_bypass: gated calls go straight
# to the driver, untracked), the order alternating pair by pair, so the host's drift (its CPU speed
# moves in phases of seconds on the H200 test host) cancels, as bench/gpu/probe/launchpair.cu does
# for one launch. Both halves run in the same process, context and MPS client: the difference is
# the launch path's cost (a bypassed call still pays the wrapper's first checks: a few ns).
# Per run: P50 and P99 of each half, their ratios, and the median of the pairs' ratios.
# LIBS="name=path ...": the runs per interposer build, in turn (copied over
# interpose/target/libxq-cuda.so; the carried one is put back). XQ_MPS as ./xq run takes it
# (default: the node's MPS server, as a user runs it).
# ENVS="name=VAR=v,VAR=v ...": each build also runs under each of these environments (named
# build+name; "name=" for none), e.g. to tell the launch path from the marks or the samples.
# Carry node/target, interpose/target, .jre.tar.xz. Usage: [ROUNDS=2] [SECS=30] [KIND=decode]
# [LIBS="a=.ab/x.so b=.ab/y.so"] [ENVS="base= batch=XQ_ESTIMATES=batch"] sh bench/gpu/ab-interposer.sh OUTDIR
set -u
out=${1:?usage: ab-interposer.sh OUTDIR}
mkdir -p "$out"
S=${SECS:-30}
K=${KIND:-decode}
so=interpose/target/libxq-cuda.so
cp "$so" "$out/xq.so"
libs=${LIBS:-xq=$out/xq.so}
./xq serve > "$out/node.txt" 2>&1 &
node=$!
sleep 6
envs=${ENVS:-=}
runs=""
for l in $libs; do
  for e in $envs; do
    en=${e%%=*}
    runs="$runs ${l%%=*}${en:++$en}"
  done
done
for round in $(seq "${ROUNDS:-2}"); do
  for l in $libs; do
    for e in $envs; do
      name=${l%%=*} path=${l#*=} en=${e%%=*} ev=${e#*=}
      cp "$path" "$so" && env $(echo "$ev" | tr ',' ' ') ./xq run --priority 2 --name "$K" -- python3 -u \
        bench/torch/family/tenant.py --kind "$K" --seconds "$S" --ab-interposer \
        > "$out/$name${en:++$en}-$round.txt" 2> "$out/$name${en:++$en}-$round.err"
    done
  done
done
kill $node; wait $node 2>/dev/null
cp "$out/xq.so" "$so" && rm -f "$out/xq.so"
python3 - "$out" "${ROUNDS:-2}" $runs <<'PY'
import json, os, statistics, sys
d, rounds = sys.argv[1], int(sys.argv[2])
names = sys.argv[3:]
def pct(v, q):
    v = sorted(v)
    return v[min(len(v) - 1, int(round(q / 100.0 * (len(v) - 1))))]
for n in names:
    for r in range(1, rounds + 1):
        f = os.path.join(d, f"{n}-{r}.txt")
        try:
            j = json.loads([l for l in open(f).read().splitlines() if l.startswith("{")][-1])
            lat, by = j["lat_ms"], j["bypassed"]
            lean = f"; lean launches {j['lean_launches'] / j['launches']:.3f} of {j['launches']}" if j.get("launches") else ""
        except Exception as e:
            print(f"{n} run {r}: no result ({e})")
            continue
        on = [x for x, b in zip(lat, by) if not b]
        off = [x for x, b in zip(lat, by) if b]
        pairs = [lat[i] / lat[i + 1] if by[i + 1] else lat[i + 1] / lat[i]
                 for i in range(0, len(lat) - 1, 2) if by[i] != by[i + 1]]
        if not on or not off:
            print(f"{n} run {r}: one half empty")
            continue
        print(f"{n} run {r}: {len(on)}+{len(off)} requests; interposed P50 {pct(on, 50):.3f} P99 {pct(on, 99):.3f} ms, "
              f"bypassed P50 {pct(off, 50):.3f} P99 {pct(off, 99):.3f} ms; ratio P50 {pct(on, 50) / pct(off, 50):.4f}, "
              f"P99 {pct(on, 99) / pct(off, 99):.4f}, mean {statistics.mean(on) / statistics.mean(off):.4f}; "
              f"pairs' ratio median {statistics.median(pairs):.4f}{lean}")
PY
