# Session 118's A/B on the GPU: the cut among best-effort processes read in sixteenths of the whole
# device (xq-alt: dev.xq.scheduler bestEffortDeviceFrame=true, with bestEffortBalanceRegion=true so
# that the measured cut counts what a narrowed process's reserve costs it) against the default (xq:
# each part in sixteenths of its own region). Beside a wide or random-arrival tenant and Triton a
# GEMM process got half of its region, a quarter of the device, and kept 0.40-0.57 of native sharing
# (sessions 116-117), while a quarter of the device went to no one. The bench's node-queues.tsv
# shows the part each mode gave. Session 118's three calls ran it so (xq-alt the settings on); both
# are on by default since, so xq-alt is now the old way, both off (the figures' direction flips).
#   usage (device): sh bench/gpu/s118-frame.sh   (MIXES=..., RUNS=1, SECS=8, PAUSE=1.5, TMO=330)
# Carry node/target, interpose/target, .jre.tar.xz. Results in $OUT/frame/ and $OUT/frame.log.
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
SECS=${SECS:-8} PAUSE=${PAUSE:-1.5} RUNS=${RUNS:-1} MODES=native,xq,xq-alt \
  ALT="${ALT:-dev.xq.scheduler/bestEffortDeviceFrame:false;dev.xq.scheduler/bestEffortBalanceRegion:false}" \
  MIXES="${MIXES:-graphp+gemm+triton,chat+gemm+triton,graph+triton+gemm,bulk+gemm+triton,decode+trainbf16+gemm+triton}" \
  TMO=${TMO:-330} timeout $(( ${TMO:-330} * 2 + 15 )) sh bench/gpu/mix-run.sh "$OUT/frame" > "$OUT/frame.log" 2>&1; echo "mix rc=$?"
grep -A30 "== the call's mixes" "$OUT/frame.log" | head -30
grep -A20 "== the call's A/B" "$OUT/frame.log" | head -20
grep -A80 "== the node's decisions" "$OUT/frame.log" | grep -v "^  queue" | head -80
