#!/bin/sh
# GPU machine (issue 40): green contexts inside an MPS server, measured with bench/gpu/probe/green.cu.
# Usage (one device call): sh bench/gpu/green-probe.sh "$OUT"
set -u
out=${1:?usage: green-probe.sh OUTDIR}
mkdir -p "$out"
b=/tmp/xq-green; mkdir -p $b
cat > $b/spin.cu <<'EOF'
extern "C" __global__ void spin(unsigned long long ns) {
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); } while (t - t0 < ns);
}
EOF
nvcc -O2 -o $b/green bench/gpu/probe/green.cu -lcuda && nvcc -ptx -o $b/spin.ptx $b/spin.cu || { echo "build failed"; exit 1; }
G=$b/green
S=${SECS:-3}
{
echo "== without MPS"; $G check $b/spin.ptx; $G overhead 50000
export CUDA_MPS_PIPE_DIRECTORY=$b/mps CUDA_MPS_LOG_DIRECTORY=$b/mpslog
mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY
nvidia-cuda-mps-control -d && echo "== MPS daemon started"
$G check $b/spin.ptx; $G overhead 50000
echo "== best-effort alone"
for m in full green:16 green:64 join:16 switch:16; do $G be $m $S; done
echo "== latency-critical alone"; $G lc $S 8; $G lc $S 264
for w in 8 264; do
  for m in full green:16 green:32 green:64 join:16; do
    echo "== lc width $w beside be $m"
    $G be $m $((S + 2)) & p=$!; sleep 1; $G lc $S $w; wait $p
  done
  echo "== lc width $w beside be full at 50 % active threads"
  CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=50 $G be full $((S + 2)) & p=$!; sleep 1; $G lc $S $w; wait $p
done
echo quit | nvidia-cuda-mps-control
} > "$out/green-probe.txt" 2>&1
cat "$out/green-probe.txt"
