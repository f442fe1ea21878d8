#!/bin/sh
# GPU machine (issue 40): where the graph tenant's latency floor goes beside a held trainer.
# 1. bench/gpu/probe/floor.py, no MPS: work done between requests (dirty L2, clean L2, a GEMM)
#    against nothing, in one process.
# 2. The same under an MPS server of its own: alone as a client, then beside an idle client (a
#    process that made its context and allocated 2 GiB, then sleeps: MPS's presence, no work).
# Usage (one device call, ~3 min): sh bench/gpu/floor-probe.sh "$OUT"
set -u
out=${1:?usage: floor-probe.sh OUTDIR}
mkdir -p "$out"
b=/tmp/xq-floor; mkdir -p $b
S=${SECS:-6}
{
nvidia-smi --query-gpu=name,driver_version,compute_mode,mig.mode.current --format=csv
echo "== 1. no MPS, variants alternated"
python3 bench/gpu/probe/floor.py --seconds "$S" --rounds "${ROUNDS:-3}"
export CUDA_MPS_PIPE_DIRECTORY=$b/mps CUDA_MPS_LOG_DIRECTORY=$b/mpslog
mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY
nvidia-cuda-mps-control -d && echo "== MPS daemon started"
echo "== 2a. MPS client, alone"
python3 bench/gpu/probe/floor.py --seconds "$S" --rounds 2 --variants none,dirty
echo "== 2b. MPS client, beside an idle MPS client"
python3 -c "
import sys, time, torch
x = torch.empty(2 << 30, dtype=torch.uint8, device='cuda'); x.fill_(1); torch.cuda.synchronize()
print('idle client ready', flush=True); time.sleep(600)" > $b/idle.txt 2>&1 &
idle=$!
for i in $(seq 300); do grep -q ready $b/idle.txt 2>/dev/null && break; sleep 0.1; done
cat $b/idle.txt
python3 bench/gpu/probe/floor.py --seconds "$S" --rounds 2 --variants none,dirty
kill $idle; wait $idle 2>/dev/null
echo "== 2c. MPS client, alone again"
python3 bench/gpu/probe/floor.py --seconds "$S" --rounds 1 --variants none,dirty
echo quit | nvidia-cuda-mps-control
sleep 1
pgrep -a nvidia-cuda-mps || echo "no MPS process left"
} > "$out/floor-probe.txt" 2>&1
cat "$out/floor-probe.txt"
