#!/bin/sh
# GPU machine (issue 40): what MPS itself does to a latency-critical tenant alone, without XQ.
# Each KIND of the family runs alone ROUNDS times each way, alternated: bare (no MPS, no
# interposer) and as the only client of a plain MPS control daemon started for the run (its own
# pipe and log directories, no XQ, no active-thread limit). Set against the mix scenario's
# xq-alone/standalone pair, it says how much of a tenant's cost under ./xq run is MPS's and how
# much the interposer's and the node's. Per run: P50/P99 of the latency, the host's part (until
# the last launch) and the device's (the wait at the synchronize).
# Usage: [KINDS="graph decode"] [ROUNDS=3] [SECS=10] sh bench/gpu/mps-alone.sh OUTDIR
set -u
out=${1:?usage: mps-alone.sh OUTDIR}
mkdir -p "$out"
S=${SECS:-10}
pipe=$(mktemp -d /tmp/xq-mps-alone-pipe.XXXXXX)
logd=$(mktemp -d /tmp/xq-mps-alone-log.XXXXXX)
one() { # NAME KIND [env...]
  n=$1 k=$2; shift 2
  env "$@" python3 -u bench/torch/family/tenant.py --kind "$k" --seconds "$S" > "$out/$n.txt" 2> "$out/$n.err"
}
for r in $(seq "${ROUNDS:-3}"); do
  for k in ${KINDS:-graph decode}; do
    # alternate which way goes first, round by round (the host's speed drifts)
    for way in $( [ $((r % 2)) = 1 ] && echo "bare mps" || echo "mps bare"); do
      if [ "$way" = mps ]; then
        CUDA_MPS_PIPE_DIRECTORY=$pipe CUDA_MPS_LOG_DIRECTORY=$logd nvidia-cuda-mps-control -d || { echo "mps-alone: the MPS daemon did not start"; exit 1; }
        one "$k-mps-$r" "$k" CUDA_MPS_PIPE_DIRECTORY="$pipe"
        echo quit | CUDA_MPS_PIPE_DIRECTORY=$pipe nvidia-cuda-mps-control
        sleep 1
      else
        one "$k-bare-$r" "$k"
      fi
    done
  done
done
rm -rf "$pipe"
cp -r "$logd" "$out/mps-log" 2>/dev/null; rm -rf "$logd"
python3 - "$out" <<'PY'
import json, os, sys
d = sys.argv[1]
def pct(v, q):
    v = sorted(v)
    k = (len(v) - 1) * q / 100.0
    f = int(k); c = min(f + 1, len(v) - 1)
    return v[f] + (v[c] - v[f]) * (k - f)
rows = {}
for f in sorted(os.listdir(d)):
    if not f.endswith(".txt"):
        continue
    try:
        j = json.loads([l for l in open(os.path.join(d, f)).read().splitlines() if l.startswith("{")][-1])
        lat, host = j["lat_ms"], j["host_ms"]
    except Exception as e:
        print(f"{f}: no result ({e})")
        continue
    dev = [a - b for a, b in zip(lat, host)]
    k, way, r = f[:-4].rsplit("-", 2)
    rows.setdefault((k, way), []).append((pct(lat, 50), pct(lat, 99)))
    print(f"{k:8s} {way:4s} run {r}: n {len(lat)} lat P50/P99 {pct(lat, 50):7.3f}/{pct(lat, 99):7.3f} ms, host {pct(host, 50):7.3f}/{pct(host, 99):7.3f}, "
          f"device {pct(dev, 50):6.3f}/{pct(dev, 99):6.3f}")
for (k, way), v in sorted(rows.items()):
    if way != "mps" or (k, "bare") not in rows:
        continue
    b = rows[(k, "bare")]
    med = lambda xs: sorted(xs)[len(xs) // 2]
    print(f"{k}: MPS over bare, medians of the runs' P50 {med([x[0] for x in v]) / med([x[0] for x in b]):.4f}, "
          f"P99 {med([x[1] for x in v]) / med([x[1] for x in b]):.4f} ({len(v)} + {len(b)} runs)")
PY
