#!/bin/sh
# GPU machine (issue 40): where MPS's price on the `decodeg` tenant is paid (bench/gpu/decodeg-mps.py
# times its token step four ways). Each WAY runs as its own process, ROUNDS rounds, the order
# reversed every other round: `bare` (no MPS), `mps` (the only client of a plain MPS daemon started
# for the run, no XQ), `mpsNN` (the same at CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=NN), and any of them
# with `:spin` / `:block` (cudaSetDeviceFlags before the context). One JSON line a run in
# OUTDIR/WAY-ROUND.json, and a table of the medians of the rounds at the end.
# Usage: [WAYS="bare mps mps:spin bare:spin mps75 mps50"] [ROUNDS=2] [TOKENS=640] sh bench/gpu/decodeg-mps.sh OUTDIR
set -u
out=${1:?usage: decodeg-mps.sh OUTDIR}
mkdir -p "$out"
pipe=$(mktemp -d /tmp/xq-dgmps-pipe.XXXXXX)
logd=$(mktemp -d /tmp/xq-dgmps-log.XXXXXX)
ways=${WAYS:-bare mps}
for r in $(seq "${ROUNDS:-2}"); do
  list=$ways
  [ $((r % 2)) = 0 ] && list=$(printf '%s\n' $ways | tac | tr '\n' ' ')
  for w in $list; do
    base=${w%%:*}; sched=""; case $w in *:*) sched=${w#*:};; esac
    name=$(printf '%s' "$w" | tr ':' '-')-$r
    if [ "$base" = bare ]; then
      SCHED=$sched python3 -u bench/gpu/decodeg-mps.py > "$out/$name.json" 2> "$out/$name.err"
    else
      p=${base#mps}
      CUDA_MPS_PIPE_DIRECTORY=$pipe CUDA_MPS_LOG_DIRECTORY=$logd nvidia-cuda-mps-control -d || { echo "decodeg-mps: the MPS daemon did not start"; exit 1; }
      if [ -n "$p" ]; then
        CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=$p CUDA_MPS_PIPE_DIRECTORY=$pipe SCHED=$sched python3 -u bench/gpu/decodeg-mps.py > "$out/$name.json" 2> "$out/$name.err"
      else
        CUDA_MPS_PIPE_DIRECTORY=$pipe SCHED=$sched python3 -u bench/gpu/decodeg-mps.py > "$out/$name.json" 2> "$out/$name.err"
      fi
      echo quit | CUDA_MPS_PIPE_DIRECTORY=$pipe nvidia-cuda-mps-control; sleep 1
    fi
    echo "$name: $(tail -1 "$out/$name.json" 2>/dev/null | cut -c1-400)"
  done
done
rm -rf "$pipe" "$logd"
python3 - "$out" <<'PY'
import json, os, statistics, sys
d = sys.argv[1]
rows = {}
for f in sorted(os.listdir(d)):
    if f.endswith(".json"):
        try:
            j = json.loads(open(os.path.join(d, f)).read().splitlines()[-1])
        except Exception:
            continue
        rows.setdefault(f[:-5].rsplit("-", 1)[0], []).append(j)
keys = ["sync_wall_us", "sync_device_us", "launch_us", "batch_device_us", "eager_device_us"]
print("way (runs): P50 us, median of the runs: " + ", ".join(keys))
for w, v in rows.items():
    print("%-12s (%d) " % (w, len(v)) + ", ".join("%.1f" % statistics.median(x[k]["p50"] for x in v) for k in keys)
          + " | P99 sync wall %.1f" % statistics.median(x["sync_wall_us"]["p99"] for x in v))
PY
