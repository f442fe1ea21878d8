# Session 116's A/B on the GPU: the node holding best-effort work behind a latency-critical
# stream's current stretch of work (the default since session 116) against behind its widest of
# the last seconds (xq-alt: XQ_STRETCH=0 in every tenant, as before). A chat server's request is
# wide for its prefill, then tokens of small launches; held through them, bf16 training made no
# step while the server worked (0.69 of native sharing, H100, session 116 call 3).
#   usage (device): sh bench/gpu/s116-stretch.sh       (MIXES=chat+trainbf16, SECS=8, PAUSE=1.5, TMO=170,
#                   ALT=env/XQ_STRETCH:0; ALT=env/XQ_STRETCH:reserve tries the stretch as the reserve too)
# Carry node/target, interpose/target, .jre.tar.xz. Results in $OUT/stretch/ and $OUT/stretch.log.
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
SECS=${SECS:-8} PAUSE=${PAUSE:-1.5} RUNS=1 MODES=native,xq,xq-alt ALT="${ALT:-env/XQ_STRETCH:0}" MIXES="${MIXES:-chat+trainbf16}" \
  TMO=${TMO:-170} timeout $(( ${TMO:-170} + 15 )) sh bench/gpu/mix-run.sh "$OUT/stretch" > "$OUT/stretch.log" 2>&1; echo "mix rc=$?"
grep -A30 "== the call's mixes" "$OUT/stretch.log" | head -30
grep -A20 "== the call's A/B" "$OUT/stretch.log" | head -20
