# Session 104, call 4 (the last 400 s of device time): the measured cut's moves under the quick
# weighing (default), traced (-Dxq.trace.wideBeats=true prints "xq: balance on"), native in the
# same run; call 3 ran without the trace, so its cuts were not seen.
export XQ_LOG=3 XQ_JAVA_OPTS="-XX:+UseParallelGC -Xmn1g -XX:PerMethodTrapLimit=0 -XX:PerBytecodeTrapLimit=0 -XX:-UseTypeSpeculation -Dxq.trace.wideBeats=true"
export SECS=10 PAUSE=1.5 RUNS=1 MODES=native,xq
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
MIXES="custom=decode+trainbf16+triton;custom=decode+triton+train32;custom=decode+trainbf16+gemm+triton" \
  TMO=215 timeout 225 sh bench/gpu/mix-run.sh /tmp/m > /tmp/m.log 2>&1; echo "mix rc=$?"
cp /tmp/m.log /tmp/m/ 2>/dev/null; tar czf $OUT/m.tgz -C /tmp m
rm -rf /tmp/r; mkdir -p /tmp/r; tar xzf /tmp/m/mix-results.tgz -C /tmp/r && grep -h "done (" /tmp/r/mix-*.txt | sed 's/P99\/standalone[^,]*,//' | cut -c1-900
grep -h "balance on" /tmp/r/mix-*.txt | sed 's/xq: balance on cuda0: //' | cut -c1-230 | head -40
