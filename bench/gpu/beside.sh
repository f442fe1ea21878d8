#!/bin/sh
# GPU machine (issue 40): a latency-critical tenant beside one best-effort tenant capped at 100, 75,
# 50 and 25 % of the device, under an MPS daemon of its own, no XQ (bench/gpu/probe/beside.py says
# what it measures and why; PAUSE: the paired reading's stops, 0 for none). Usage (one device call,
# about 18 s a run; 13 runs a round with the defaults, ~4 min):
#   [LC=decode] [BE=trainbf16,train32,gemm] [PERCENTS=100,75,50,25] [SECS=12] [PAUSE=1] [ROUNDS=1]
#   sh bench/gpu/beside.sh OUTDIR
set -u
out=${1:?usage: beside.sh OUTDIR}
mkdir -p "$out"
b=/tmp/xq-beside
rm -rf "$b"; mkdir -p "$b/pipe" "$b/log"
export CUDA_MPS_PIPE_DIRECTORY=$b/pipe CUDA_MPS_LOG_DIRECTORY=$b/log PYTHONUNBUFFERED=1
nvidia-cuda-mps-control -d || { echo "beside: the MPS control daemon did not start" >&2; exit 1; }
trap 'echo quit | nvidia-cuda-mps-control' EXIT
python3 bench/gpu/probe/beside.py --lc "${LC:-decode}" --be "${BE:-trainbf16,train32,gemm}" \
  --percents "${PERCENTS:-100,75,50,25}" --seconds "${SECS:-12}" --pause "${PAUSE:-1}" --rounds "${ROUNDS:-1}" --json "$out/beside.jsonl" \
  | tee "$out/beside.txt"
