#!/bin/sh
# GPU machine: the A/A test behind the mix scenario's LC verdicts. The same tenant, alone, run N
# times back to back as the scenario runs its modes (SECS s each, a fresh process each time): how far
# apart are its P50 and P99 with nothing changed? An LC verdict (P99 / standalone <= 1.10) means
# something only where this spread is well under 10 %.
# Usage: KINDS="decode:6 graph:3" SECS=6 sh bench/gpu/null-runs.sh OUTDIR
set -u
out=${1:?usage: null-runs.sh OUTDIR}/null-runs
mkdir -p "$out"
for kn in ${KINDS:-decode:6 graph:3}; do
  k=${kn%%:*}; n=${kn##*:}
  i=0
  while [ "$i" -lt "$n" ]; do
    i=$((i+1))
    python3 -u bench/torch/family/tenant.py --kind "$k" --seconds "${SECS:-6}" > "$out/$k-$i.json" 2> "$out/$k-$i.log"
  done
done
python3 - "$out" ${KINDS:-decode:6 graph:3} <<'PY'
import json, os, sys
d = sys.argv[1]
def pct(v, q):
    v = sorted(v); return v[min(len(v) - 1, int(q * len(v)))]
for kn in sys.argv[2:]:
    k, n = kn.split(":")
    p50, p99 = [], []
    for i in range(1, int(n) + 1):
        lines = [l for l in open(os.path.join(d, f"{k}-{i}.json")).read().splitlines() if l.startswith("{")]
        if not lines:
            print(k, i, "no result"); continue
        lat = json.loads(lines[-1])["lat_ms"]
        p50.append(pct(lat, .5)); p99.append(pct(lat, .99))
        print(f"{k} run {i}: n {len(lat)} P50 {p50[-1]:.2f} P99 {p99[-1]:.2f} ms")
    if len(p99) > 1:
        r = [b / a for a in p99 for b in p99 if a is not b]
        print(f"{k}: P99 of run j / run i over all pairs: min {min(r):.2f} max {max(r):.2f}; "
              f"P99 range {min(p99):.2f}-{max(p99):.2f} ms, P50 range {min(p50):.2f}-{max(p50):.2f} ms")
PY
