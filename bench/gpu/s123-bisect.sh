# Session 123's follow-up for the GPU, after s123-host.sh: under XQ (not natively) the large batch's host
# part is slow far more often with its company running than stopped (beside bf16 training 20 % against 0 %,
# sessions 116-122; docs/performance.md, "Session 123"). Each of XQ's parts that runs only while the company
# does is turned off in turn, as xq-alt against xq in the same bench call (MODES=xq,xq-alt):
#   defer   XQ_DEFER=0 in every tenant: a held trainer's launches block its thread instead of being
#           queued and made later by its tracker thread (no burst of deferred launches, no draining)
#   watch   arrivalWatchMicros:0 for the node: no node thread reading the batch's slot line every 50 us
#   stretch XQ_STRETCH=0 in every tenant (as s122-bulk.sh)
# Read: host-speed.py's line per mode (slow host parts with the company running against stopped; the
# time inside launch calls) and the paired verdict.
#   usage (device): sh bench/gpu/s123-bisect.sh      (WAYS to choose, MIXES=bulk+trainbf16, TMO a bench call)
# Carry node/target, interpose/target, .jre.tar.xz. Results in $OUT/bisect-WAY/ and $OUT/bisect-WAY.log.
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for w in ${WAYS:-defer watch stretch}; do
  case $w in
    defer) alt="env/XQ_DEFER:0" ;;
    watch) alt="arrivalWatchMicros:0" ;;
    stretch) alt="env/XQ_STRETCH:0" ;;
    *) echo "s123-bisect: way '$w' is not one of defer, watch, stretch"; continue ;;
  esac
  SECS=${SECS:-8} PAUSE=${PAUSE:-1.5} RUNS=1 MODES=xq,xq-alt ALT="$alt" MIXES="${MIXES:-bulk+trainbf16}" \
    TMO=${TMO:-120} timeout $(( ${TMO:-120} + 15 )) sh bench/gpu/mix-run.sh "$OUT/bisect-$w" > "$OUT/bisect-$w.log" 2>&1
  echo "== $w ($alt): rc=$?"
  grep -A6 "== the call's mixes" "$OUT/bisect-$w.log" | head -6
  grep -A8 "== latency-critical hosts" "$OUT/bisect-$w.log" | cut -c1-420 | head -8
done
