# Session 102, call 3: again, the measured cut's memory (bestEffortBalanceMemory, on by default) against the
# cut as before (xq-alt = off), on the mixes where call 1 found it stuck or misled, and two where it
# worked before; native sharing in the same run.
export XQ_LOG=3 XQ_JAVA_OPTS="-XX:+UseParallelGC -Xmn1g -XX:PerMethodTrapLimit=0 -XX:PerBytecodeTrapLimit=0 -XX:-UseTypeSpeculation -Dxq.trace.wideBeats=true"
export SECS=10 PAUSE=1.5 RUNS=1 MODES=native,xq,xq-alt ALT="dev.xq.scheduler/bestEffortBalanceMemory:false"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
MIXES="custom=decode+trainbf16+gemm+triton;custom=trainbf16+triton;custom=bulkp+train32+triton;custom=trainio+triton" \
  TMO=400 timeout 440 sh bench/gpu/mix-run.sh /tmp/m > /tmp/m.log 2>&1; echo "mix rc=$?"
cp /tmp/m.log /tmp/m/ 2>/dev/null; tar czf $OUT/m.tgz -C /tmp m
rm -rf /tmp/r; mkdir -p /tmp/r; tar xzf /tmp/m/mix-results.tgz -C /tmp/r && grep -h "done (" /tmp/r/mix-*.txt | cut -c1-900
