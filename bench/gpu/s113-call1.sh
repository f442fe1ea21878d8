# Session 113, call 1 (for the next session with device time):
# 1. does native time slicing split the device by how often each process waits on it? No XQ:
#    bench/gpu/native-slice.py, the trainer, a GEMM process and Triton at three --sync-every
#    settings, alone, in pairs and in trios (about 11 runs of NS_SECS s plus start-ups).
# 2. the measured cut that reckons with the GPU's time slice (dev.xq.scheduler
#    bestEffortBalanceSliceMicros, off by default) against the defaults in the same runs (xq-alt:
#    SLICE us), native sharing beside them, on the mixes where best-effort misses are (a
#    latency-critical tenant and Triton together) and on a best-effort pair; the node traced
#    (-Dxq.trace.wideBeats=true: each round's "ms a wait, weight" per process).
#   usage (device): sh bench/gpu/s113-call1.sh        (OUT: where the files go back)
#   NS=0 leaves out part 1; SLICE: the slice in us (default: the median T part 1 implies, else 4000);
#   AB_MIXES, TMO (330) as below.
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
if [ "${NS:-1}" = 1 ]; then
  timeout ${NS_TMO:-200} python3 bench/gpu/native-slice.py /tmp/ns --seconds ${NS_SECS:-6} --syncs ${NS_SYNCS:-4,16,64} --three \
    > /tmp/ns.log 2>&1; echo "native-slice rc=$?"
  cat /tmp/ns.log; tar czf $OUT/ns.tgz -C /tmp ns ns.log
  # the slice the pairs imply, where it is one the node takes (else SLICE, or 4000)
  t=$(python3 -c "import json; v=json.load(open('/tmp/ns/slice.json'))['median_slice_ms']; print(int(round(v*1000)) if v and 0.1 <= v <= 100 else '')" 2>/dev/null)
  [ -n "$t" ] && [ -z "${SLICE:-}" ] && SLICE=$t && echo "slice from native-slice: $SLICE us"
fi
export SECS=10 PAUSE=1.5 RUNS=1
export XQ_JAVA_OPTS="-XX:+UseParallelGC -Xmn1g -XX:PerMethodTrapLimit=0 -XX:PerBytecodeTrapLimit=0 -XX:-UseTypeSpeculation -Dxq.trace.wideBeats=true"
MODES=native,xq,xq-alt ALT="dev.xq.scheduler/bestEffortBalanceSliceMicros:${SLICE:-4000}" \
MIXES="${AB_MIXES:-custom=decode+trainbf16+triton;custom=decode+gemm+triton;custom=trainbf16+triton}" \
  TMO=${TMO:-330} timeout $((${TMO:-330} + 10)) sh bench/gpu/mix-run.sh /tmp/m1 > /tmp/m1.log 2>&1; echo "mix rc=$?"
cp /tmp/m1.log /tmp/m1/ 2>/dev/null; tar czf $OUT/m1.tgz -C /tmp m1
rm -rf /tmp/r; mkdir -p /tmp/r; tar xzf /tmp/m1/mix-results.tgz -C /tmp/r
grep -h "done (" /tmp/r/mix-*.txt | sed 's/P99\/standalone[^,]*,//' | cut -c1-700
grep -h "goals MET\|goals MISSED" /tmp/r/mix-*.txt | head -20
python3 bench/gpu/balance-trace.py /tmp/r/mix-*.txt 2>&1 | grep -v "^ *$" | cut -c1-200 | head -60
