# Session 102, call 4: the measured cut's memory (on, xq) against off (xq-alt) beside an eager decoder
# and two best-effort processes, the family's mixes where the cut applies; native sharing in the same run.
export XQ_LOG=3 XQ_JAVA_OPTS="-XX:+UseParallelGC -Xmn1g -XX:PerMethodTrapLimit=0 -XX:PerBytecodeTrapLimit=0 -XX:-UseTypeSpeculation -Dxq.trace.wideBeats=true"
export SECS=10 PAUSE=1.5 RUNS=1 MODES=native,xq,xq-alt ALT="dev.xq.scheduler/bestEffortBalanceMemory:false"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
MIXES="custom=decode+triton+train32;custom=decode+trainbf16+gemm" \
  TMO=170 timeout 185 sh bench/gpu/mix-run.sh /tmp/m > /tmp/m.log 2>&1; echo "mix rc=$?"
cp /tmp/m.log /tmp/m/ 2>/dev/null; tar czf $OUT/m.tgz -C /tmp m
rm -rf /tmp/r; mkdir -p /tmp/r; tar xzf /tmp/m/mix-results.tgz -C /tmp/r && grep -h "done (" /tmp/r/mix-*.txt | cut -c1-900
