# Session 117's A/B on the GPU: best-effort parts laid out in one frame of the device (the default
# since session 117) against each process's sixteenths of its own region (xq-alt: dev.xq.scheduler
# bestEffortOneFrame=false, as before). A GEMM process narrowed by a wide or random tenant's reserve
# (64 of an H100's 132) and Triton without one got halves of different regions: multiprocessors
# 0-31 and 64-127, 32-63 idle (node-queues.tsv, session 117: the GEMM at 24 % of the device, Triton
# at 48 %); the GEMMs kept 0.40-0.57 of native sharing there in four readings.
#   usage (device): sh bench/gpu/s117-frame.sh   (MIXES=..., SECS=8, PAUSE=1.5, TMO=300)
# Carry node/target, interpose/target, .jre.tar.xz. Results in $OUT/frame/ and $OUT/frame.log.
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
SECS=${SECS:-8} PAUSE=${PAUSE:-1.5} RUNS=1 MODES=native,xq,xq-alt ALT="${ALT:-dev.xq.scheduler/bestEffortOneFrame:false}" \
  MIXES="${MIXES:-graphp+gemm+triton,chat+gemm+triton,decode+trainbf16+gemm+triton}" \
  TMO=${TMO:-300} timeout $(( ${TMO:-300} + 15 )) sh bench/gpu/mix-run.sh "$OUT/frame" > "$OUT/frame.log" 2>&1; echo "mix rc=$?"
grep -A16 "== the call's A/B" "$OUT/frame.log" | head -16
grep -A40 "== the node's decisions" "$OUT/frame.log" | grep -v "^  queue" | tail -36
