# session 95's second device call (if the first leaves time): turns on a wide tenant's gaps with the
# one off its turn held between the tenant's requests too (offTurnAlwaysHeld), against the default
export XQ_LOG=3 XQ_JAVA_OPTS="-XX:+UseParallelGC -Xmn1g -XX:PerMethodTrapLimit=0 -XX:PerBytecodeTrapLimit=0 -XX:-UseTypeSpeculation -Dxq.trace.wideBeats=true"; export SECS=12 PAUSE=1.5 RUNS=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
MIXES="custom=graph+triton+gemm;custom=graph+gemm+trainbf16;custom=graphp+trainbf16+triton" MODES=native,xq,xq-alt ALT="dev.xq.scheduler/offTurnAlwaysHeld:true" TMO=330 timeout 340 sh bench/gpu/mix-run.sh $OUT/call2 > $OUT/call2.log 2>&1; grep -A30 "the call's A/B$" $OUT/call2.log
