# session 96's third device call: the measured cut (rates alone) with no limits beside best-effort
# company only, against the default, on mixes it was not yet run on: GEMMs beside a trainer, three
# best-effort processes, and an eager decoder (latency-critical) beside a trainer and Triton
export XQ_LOG=3 XQ_JAVA_OPTS="-XX:+UseParallelGC -Xmn1g -XX:PerMethodTrapLimit=0 -XX:PerBytecodeTrapLimit=0 -XX:-UseTypeSpeculation -Dxq.trace.wideBeats=true"; export SECS=12 PAUSE=1.5 RUNS=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
MIXES="custom=gemm+trainbf16;custom=gemm+triton+trainbf16;custom=decode+trainbf16+triton" MODES=native,xq,xq-alt ALT="dev.xq.scheduler/bestEffortBalance:true;dev.xq.scheduler/bestEffortUnbounded:true" TMO=380 timeout 390 sh bench/gpu/mix-run.sh $OUT/call3 > $OUT/call3.log 2>&1; grep -A30 "the call's A/B$" $OUT/call3.log
mkdir -p /tmp/r3; tar xzf $OUT/call3/mix-results.tgz -C /tmp/r3; grep -h "balance on" /tmp/r3/mix-*.txt | cut -c1-200 | head -50
