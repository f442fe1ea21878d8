#!/bin/sh
# GPU machine: an A/B of runtime bundles on one machine, runs taken in turn (machines differ from
# call to call by as much as the effects sought: the host's CPU ticked 4.95 to 9.85 ms in session 39).
# Usage: AB="wait old wait old" sh bench/gpu/ab-run.sh OUT
#   each name V is .ab/runtime-V.jar (a dev.xq.runtime bundle, git-ignored: carry .ab), copied over
#   node/target/bundles' runtime before its run; the first run has every mode (standalone, native,
#   xq), the others xq only (their ratios: against the first's). AB_MIX: the mix (default
#   bulk+gemm+gemm; custom=... as mix-run.sh). Every run's results in OUT/ab-results.tgz; each
#   run's xq figures (LC P50/P99/max, BE iterations per second) printed as it ends.
set -u
out=${1:?usage: ab-run.sh OUTDIR}
res=/tmp/xq-ab
rm -rf "$res"; mkdir -p "$res" "$out"
b=node/target/bundles/dev.xq.runtime-0.1.0-SNAPSHOT.jar
cp "$b" "$res/runtime-as-carried.jar"
k=0
for v in ${AB:?AB names the bundles in order}; do
  k=$((k+1))
  cp ".ab/runtime-$v.jar" "$b" || exit 1
  m=xq; [ "$k" = 1 ] && m=standalone,native,xq
  MIXES="${AB_MIX:-bulk+gemm+gemm}" SECS="${SECS:-12}" MODES=$m TMO="${TMO:-110}" sh bench/gpu/mix-run.sh "$res/$k-$v" > "$res/$k-$v.txt" 2>&1
  (cd "$res/$k-$v" && tar xzf mix-results.tgz && rm -f mix-results.tgz clocks-*.csv)
  echo "== run $k: $v"
  grep -E "done \(|^trace:" "$res/$k-$v.txt"
  for j in "$res/$k-$v"/logs-1/*/xq/*.json; do
    python3 - "$j" <<'PY'
import json, os, sys
d = json.load(open(sys.argv[1]))
n = os.path.basename(sys.argv[1])[:-5]
if "lat_ms" in d:
    s = sorted(d["lat_ms"])
    print("  %s P50 %.1f P99 %.1f max %.1f ms" % (n, s[len(s) // 2], s[int(0.99 * (len(s) - 1))], s[-1]))
else:
    print("  %s %.2f it/s" % (n, d.get("it_per_s", 0.0)))
PY
  done
done
cp "$res/runtime-as-carried.jar" "$b"
tar -C "$res" -czf "$out/ab-results.tgz" .
