# session 96's second device call, on a build since dropped (docs/results/h100/2026-12-05-s96/README.md):
# the measured cut with each process's rate together as its reference (all of them on the whole device at
# once, none held) and no limits beside best-effort company only, against the default, best-effort mixes only
export XQ_LOG=3 XQ_JAVA_OPTS="-XX:+UseParallelGC -Xmn1g -XX:PerMethodTrapLimit=0 -XX:PerBytecodeTrapLimit=0 -XX:-UseTypeSpeculation -Dxq.trace.wideBeats=true"; export SECS=12 PAUSE=1.5 RUNS=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
MIXES="custom=trainbf16+triton;custom=train32+triton;custom=gemm+triton+trainbf16;custom=gemm+trainbf16" MODES=native,xq,xq-alt ALT="dev.xq.scheduler/bestEffortBalance:true;dev.xq.scheduler/bestEffortUnbounded:true" TMO=430 timeout 440 sh bench/gpu/mix-run.sh $OUT/call2 > $OUT/call2.log 2>&1; grep -A30 "the call's A/B$" $OUT/call2.log
mkdir -p /tmp/r2; tar xzf $OUT/call2/mix-results.tgz -C /tmp/r2; grep -h "balance on" /tmp/r2/mix-*.txt | cut -c1-230 | head -60
