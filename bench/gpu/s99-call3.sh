# session 99, third call: where decodeg's +14 % alone under ./xq run goes (bare against a plain MPS
# client, no XQ); decodeg+trainbf16 on the default against latency-critical processes in contexts
# of their own (xq-alt: mpsLatencyOwnContext=true), then against best-effort processes narrowed
# beside it, not held (xq-alt: mpsHoldBestEffort=false); trimmed to the device time
# left (native is in call 1; the launch path's own A/B, xq-ab, GEMMs and a second trainio run were dropped).
export XQ_LOG=3 XQ_JAVA_OPTS="-XX:+UseParallelGC -Xmn1g -XX:PerMethodTrapLimit=0 -XX:PerBytecodeTrapLimit=0 -XX:-UseTypeSpeculation -Dxq.trace.wideBeats=true"; export SECS=12 PAUSE=1.5 RUNS=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
mkdir -p $OUT/call
KINDS=decodeg ROUNDS=2 SECS=5 timeout 80 sh bench/gpu/mps-alone.sh $OUT/call/mps-alone > $OUT/call/mps-alone.log 2>&1; echo "mps-alone rc=$?"
tail -8 $OUT/call/mps-alone.log
ALT="dev.xq.host/mpsLatencyOwnContext:true" MIXES="decodeg+trainbf16" MODES=standalone,xq,xq-alt TMO=110 timeout 115 sh bench/gpu/mix-run.sh $OUT/call/a > $OUT/call-a.log 2>&1
ALT="dev.xq.host/mpsHoldBestEffort:false" MIXES="decodeg+trainbf16" MODES=xq,xq-alt TMO=85 timeout 90 sh bench/gpu/mix-run.sh $OUT/call/b > $OUT/call-b.log 2>&1
rm -rf /tmp/r; for x in a b; do mkdir -p /tmp/r/$x; tar xzf $OUT/call/$x/mix-results.tgz -C /tmp/r/$x; grep -h "done (" /tmp/r/$x/mix-*.txt | cut -c1-700; done
