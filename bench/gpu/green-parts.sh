#!/bin/sh
# GPU machine (issue 40): are the groups of one green-context split the same SMs in every process?
# Two best-effort loads on groups 0 and 1 of 2 inside an MPS server: apart, each runs at its group's
# rate; overlapping, each at half of it. Usage: sh bench/gpu/green-parts.sh "$OUT"
set -u
out=${1:?usage: green-parts.sh OUTDIR}
mkdir -p "$out"
b=/tmp/xq-green; mkdir -p $b
nvcc -O2 -o $b/green bench/gpu/probe/green.cu -lcuda || { echo "build failed"; exit 1; }
G=$b/green
{
export CUDA_MPS_PIPE_DIRECTORY=$b/mps2 CUDA_MPS_LOG_DIRECTORY=$b/mpslog2
mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY
nvidia-cuda-mps-control -d && echo "== MPS daemon started"
echo "== group 1 of 2 alone"; $G be part:1:2 3
echo "== groups 0 and 1 of 2 at once"; $G be part:0:2 3 & p=$!; $G be part:1:2 3; wait $p
echo "== group 0 of 2 twice at once (overlap, for reference)"; $G be part:0:2 3 & p=$!; $G be part:0:2 3; wait $p
echo quit | nvidia-cuda-mps-control
} > "$out/green-parts.txt" 2>&1
cat "$out/green-parts.txt"
