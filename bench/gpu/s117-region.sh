# Session 117's A/B on the GPU: the measured cut among best-effort processes weighing each one's
# share kept by the region its rate alone was measured on (xq-alt: dev.xq.scheduler
# bestEffortBalanceRegion=true) against the default (xq: each share of the rate as measured). A
# GEMM process stays narrowed by a wide or random latency-critical tenant's reserve (half the
# device) while Triton runs on all of it between requests: the GEMMs kept 0.42-0.53 of native
# sharing there and Triton 1.3-1.6 (H100, session 116), 0.92 beside an eager decoder's small reserve.
# The bench's node-queues.tsv (every 50 ms, each queue's part of the device) shows the cut each mode took.
#   usage (device): sh bench/gpu/s117-region.sh   (MIXES=..., SECS=8, PAUSE=1.5, TMO=330)
# Carry node/target, interpose/target, .jre.tar.xz. Results in $OUT/region/ and $OUT/region.log.
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
SECS=${SECS:-8} PAUSE=${PAUSE:-1.5} RUNS=1 MODES=native,xq,xq-alt ALT="${ALT:-dev.xq.scheduler/bestEffortBalanceRegion:true}" \
  MIXES="${MIXES:-graphp+gemm+triton,chat+gemm+triton,decode+trainbf16+gemm+triton;custom=graphp:2+gemm:1+trainbf16:1}" \
  TMO=${TMO:-330} timeout $(( ${TMO:-330} * 2 + 15 )) sh bench/gpu/mix-run.sh "$OUT/region" > "$OUT/region.log" 2>&1; echo "mix rc=$?"
grep -A30 "== the call's mixes" "$OUT/region.log" | head -30
grep -A20 "== the call's A/B" "$OUT/region.log" | head -20
grep -A60 "== the node's decisions" "$OUT/region.log" | grep -v "^  queue" | head -60
