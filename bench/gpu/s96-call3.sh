# session 96's fourth device call: the measured cut and no limits beside best-effort company only,
# against the default, beside a wide latency-critical tenant (where the cut by gaps decides)
export XQ_LOG=3 XQ_JAVA_OPTS="-XX:+UseParallelGC -Xmn1g -XX:PerMethodTrapLimit=0 -XX:PerBytecodeTrapLimit=0 -XX:-UseTypeSpeculation -Dxq.trace.wideBeats=true"; export SECS=12 PAUSE=1.5 RUNS=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
MIXES="custom=graph+triton+gemm;custom=graphp+trainbf16+triton" MODES=native,xq,xq-alt ALT="dev.xq.scheduler/bestEffortBalance:true;dev.xq.scheduler/bestEffortUnbounded:true" TMO=300 timeout 310 sh bench/gpu/mix-run.sh $OUT/call4 > $OUT/call4.log 2>&1; grep -A30 "the call's A/B$" $OUT/call4.log | head -24
mkdir -p /tmp/r4; tar xzf $OUT/call4/mix-results.tgz -C /tmp/r4; grep -h "balance on" /tmp/r4/mix-*.txt | cut -c1-160 | head -20
