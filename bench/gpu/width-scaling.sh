#!/bin/sh
# GPU machine (issue 40): how each best-effort kind of the family speeds up with the
# multiprocessors it may use. Each kind alone, as an MPS client limited by
# CUDA_MPS_ACTIVE_THREAD_PERCENTAGE to 25, 50, 75 and 100 % of the device, for SECS seconds; its
# iterations a second against its own at 100 %. A kind whose rate falls in proportion (a GEMM) needs
# its width; one whose rate hardly falls (memory-bound) does not: what a split of the device
# among best-effort processes weighted by speed would use (docs/performance.md, session 35).
# No XQ involved. Usage: [KINDS="gemm triton trainbf16 train32"] [SECS=6] sh bench/gpu/width-scaling.sh OUTDIR
set -u
out=${1:?usage: width-scaling.sh OUTDIR}
mkdir -p "$out"
b=/tmp/xq-width
rm -rf "$b"; mkdir -p "$b/pipe" "$b/log"
export CUDA_MPS_PIPE_DIRECTORY=$b/pipe CUDA_MPS_LOG_DIRECTORY=$b/log
nvidia-cuda-mps-control -d || { echo "width-scaling: the MPS control daemon did not start" >&2; exit 1; }
trap 'echo quit | nvidia-cuda-mps-control' EXIT
secs=${SECS:-6}
echo "kind,percent,it_per_s,checksum" > "$out/width-scaling.csv"
for k in ${KINDS:-gemm triton trainbf16 train32}; do
  for pct in 100 75 50 25; do
    line=$(CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=$pct python3 bench/torch/family/tenant.py --kind "$k" --seconds "$secs" 2> "$out/$k-$pct.err" | tail -1)
    rate=$(printf '%s' "$line" | python3 -c 'import json,sys
try:
    j = json.loads(sys.stdin.read()); print("%.1f,%s" % (j["it_per_s"], j.get("checksum")))
except Exception as e:
    print("nan,none")')
    echo "$k,$pct,$rate" | tee -a "$out/width-scaling.csv"
  done
done
# each kind's rate against its own at 100 %
python3 - "$out/width-scaling.csv" <<'EOF'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
full = {r["kind"]: float(r["it_per_s"]) for r in rows if r["percent"] == "100"}
print("kind: rate at 75 / 50 / 25 % of the device, against 100 %")
for k in dict.fromkeys(r["kind"] for r in rows):
    rel = {r["percent"]: float(r["it_per_s"]) / full[k] if full.get(k) else float("nan") for r in rows if r["kind"] == k}
    print("%-10s %.2f / %.2f / %.2f" % (k, rel.get("75", float("nan")), rel.get("50", float("nan")), rel.get("25", float("nan"))))
EOF
