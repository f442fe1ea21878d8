#!/bin/sh
# GPU machine (issue 40): a latency-critical tenant beside one best-effort tenant capped at 100, 75,
# 50 and 25 % of the device, under an MPS daemon of its own, no XQ (bench/gpu/probe/beside.py says
# what it measures and why; PAUSE: the paired reading's stops, 0 for none). Usage (one device call,
# about 18 s a run; 13 runs a round with the defaults, ~4 min):
#   [LC=decode] [BE=trainbf16,train32,gemm] [PERCENTS=100,75,50,25] [SECS=12] [PAUSE=1] [ROUNDS=1]
#   sh bench/gpu/beside.sh OUTDIR
# (a large batch beside the decoder: BE=bulk, its rate in requests a second; session 80's question:
#  LC=decode BE=bulk PERCENTS=100,85,75 PAUSE=0 ROUNDS=2)
set -u
out=${1:?usage: beside.sh OUTDIR}
mkdir -p "$out"
b=/tmp/xq-beside
rm -rf "$b"; mkdir -p "$b/pipe" "$b/log"
export CUDA_MPS_PIPE_DIRECTORY=$b/pipe CUDA_MPS_LOG_DIRECTORY=$b/log PYTHONUNBUFFERED=1
nvidia-cuda-mps-control -d || { echo "beside: the MPS control daemon did not start" >&2; exit 1; }
trap 'echo quit | nvidia-cuda-mps-control' EXIT
# where the tenants' threads ran on the host, every 500 ms (bench/gpu/proc-watch.py; per process and second
# in procs-report.txt): a latency step the device did not make shows there
python3 bench/gpu/proc-watch.py 500 > "$out/procs.txt" 2>/dev/null &
watcher=$!
python3 bench/gpu/probe/beside.py --lc "${LC:-decode}" --be "${BE:-trainbf16,train32,gemm}" \
  --percents "${PERCENTS:-100,75,50,25}" --seconds "${SECS:-12}" --pause "${PAUSE:-1}" --rounds "${ROUNDS:-1}" --json "$out/beside.jsonl" \
  | tee "$out/beside.txt"
kill "$watcher" 2>/dev/null; wait "$watcher" 2>/dev/null
python3 bench/gpu/proc-watch.py --report "$out/procs.txt" > "$out/procs-report.txt" 2>&1
gzip -f "$out/procs.txt"
