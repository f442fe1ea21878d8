#!/bin/sh
# GPU machine: the workload family (./xq bench mix --device cuda) and the node-kill check with MPS.
# Carry: node/target, interpose/target, .jre.tar.xz. Usage (one device call):
#   MIXES=all SECS=8 MODES=standalone,native,xq sh bench/gpu/mix-run.sh "$OUT"
# Every table, JSON file and tenant log comes back in $OUT/mix-results.tgz.
set -u
out=${1:?usage: mix-run.sh OUTDIR}
res=/tmp/xq-mix
mkdir -p "$out" "$res"
export PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
nvidia-smi --query-gpu=name,driver_version,compute_mode,mig.mode.current --format=csv > "$res/gpu.txt" 2>&1; cat "$res/gpu.txt"
pack() { tar -C "$res" -czf "$out/mix-results.tgz" . 2>/dev/null; }
i=0
for m in $(echo "${MIXES:-all}" | tr ';' ' '); do
  i=$((i+1))
  s=$(date +%s)
  timeout "${TMO:-560}" ./xq bench mix --device cuda seconds="${SECS:-8}" mixes="$m" modes="${MODES:-standalone,native,xq}" ${ALT:+alt="$ALT"} \
    --json "$res/mix-$i.json" > "$res/mix-$i.txt" 2>&1
  echo "== mix run $i ($m) rc=$? $(( $(date +%s) - s )) s"
  grep -v '^  \[' "$res/mix-$i.txt" | tail -40
  d=$(ls -dt /tmp/xq-mix-* 2>/dev/null | head -1)
  [ -n "$d" ] && mkdir -p "$res/logs-$i" && cp -r "$d"/. "$res/logs-$i/" 2>/dev/null
  pack
done
if [ "${KILLCHECK:-0}" = 1 ]; then
  # a node killed hard while an MPS client runs: the client finishes, the daemon is gone after it
  s=$(date +%s)
  ./xq serve > "$res/kill-node.txt" 2>&1 &
  node=$!
  sleep 6
  ./xq run --priority 1 --name killcheck -- python3 -u bench/torch/family/tenant.py --kind gemm --seconds 8 > "$res/kill-tenant.txt" 2>&1 &
  t=$!
  sleep 7
  echo "before kill: $(pgrep -f nvidia-cuda-mps | wc -l) mps processes"; ps -eo pid,args | grep -i "[m]ps" | cut -c1-150
  kill -9 $node
  wait $t; echo "tenant rc=$? after the node was killed: $(tail -c 300 "$res/kill-tenant.txt")"
  sleep 4
  echo "after the tenant: $(pgrep -f nvidia-cuda-mps-control | wc -l) mps control processes left ($(( $(date +%s) - s )) s)"
  ps -eo pid,args | grep -i "[m]ps" | cut -c1-150
  pack
fi
