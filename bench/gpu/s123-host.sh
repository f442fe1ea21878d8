# Session 123's question for the GPU: where the eager latency-critical tenants' host time goes in
# their slow requests (docs/performance.md, "Session 123"). Under XQ nearly all of them are made on
# the host with the thread on the CPU all along. Now each request records the CPU's speed just
# before it (the release spin) and, under the interposer, the thread's time inside the driver's
# launch calls and its lean share (XQ_TIME_LAUNCHES=1, set by the tenant). Two bench calls:
#   1. MIXES in native sharing and under XQ (the paired reading), as the family runs them;
#   2. the same mixes in native sharing again and as plain MPS clients, no XQ (mode mps: best-effort at 50 % of the
#      multiprocessors), on an MPS daemon this script starts and stops: whether MPS beside busy
#      clients makes the host part slower without XQ's decisions or threads.
# The mixes: the large batch beside bf16 training and beside three GEMMs, where under XQ (not natively) its
# host part is slow far more often with the company running than stopped (20 % against 0 %, 11 % against 1 %,
# sessions 116-122); the decoder beside bf16 training and a GEMM, where it is not; chat beside bf16 training.
# Read: bench/gpu/host-speed.py's lines (printed below for both calls): the share of the host
# part's growth spent inside launch calls, the lean share, and the spin's rate in the slow
# requests against the rest.
#   usage (device): sh bench/gpu/s123-host.sh      (MIXES ';'-separated; TMO a bench call, 2 x TMO in all)
# Carry node/target, interpose/target, .jre.tar.xz. Results in $OUT/host/ and $OUT/host-mps/ (mix-results.tgz)
# and $OUT/host.log, $OUT/host-mps.log.
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
mixes="${MIXES:-bulk+trainbf16,bulk+gemm+gemm+gemm,decode+trainbf16+gemm,chat+trainbf16}"
SECS=${SECS:-8} PAUSE=${PAUSE:-1.5} RUNS=1 MODES=native,xq MIXES="$mixes" \
  TMO=${TMO:-240} timeout $(( ${TMO:-240} + 15 )) sh bench/gpu/mix-run.sh "$OUT/host" > "$OUT/host.log" 2>&1; echo "mix rc=$?"
grep -A12 "== the call's mixes" "$OUT/host.log" | head -12
grep -A30 "== latency-critical hosts" "$OUT/host.log" | cut -c1-420 | head -30
pipe=$(mktemp -d /tmp/xq-s123-pipe.XXXXXX)
logd=$(mktemp -d /tmp/xq-s123-log.XXXXXX)
if CUDA_MPS_PIPE_DIRECTORY=$pipe CUDA_MPS_LOG_DIRECTORY=$logd nvidia-cuda-mps-control -d; then
  SECS=${SECS:-8} PAUSE=${PAUSE:-1.5} RUNS=1 MODES=native,mps MPS_PIPE=$pipe MIXES="$mixes" \
    TMO=${TMO:-240} timeout $(( ${TMO:-240} + 15 )) sh bench/gpu/mix-run.sh "$OUT/host-mps" > "$OUT/host-mps.log" 2>&1; echo "mps rc=$?"
  echo quit | CUDA_MPS_PIPE_DIRECTORY=$pipe nvidia-cuda-mps-control
  grep -A30 "== latency-critical hosts" "$OUT/host-mps.log" | cut -c1-420 | head -30
else
  echo "s123-host: the MPS daemon did not start; no mps call"
fi
rm -rf "$pipe" "$logd"
