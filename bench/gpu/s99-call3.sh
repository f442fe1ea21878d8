# ready for the next session (written in session 99, never run: its device time ran out).
# 1. Where decodeg's +14 % alone under ./xq run goes (H100, session 99): bare against the only client
#    of a plain MPS daemon, no XQ (bench/gpu/mps-alone.sh).
# 2. decodeg+trainbf16 on the default against latency-critical processes in contexts of their own
#    (xq-alt: mpsLatencyOwnContext=true: outside the MPS server, so not paying MPS's price), with
#    standalone, xq-alone and native in the same run.
# 3. decodeg+trainbf16 and decodeg+gemm against best-effort processes narrowed beside it and not
#    held (xq-alt: mpsHoldBestEffort=false): can they run through its requests at a cost it bears
#    (its P99 within 1.10 x alone)? Held, they kept 0.46-0.57 of native (session 99).
# 4. trainio's two mixes again (one run each in session 99).
export XQ_LOG=3 XQ_JAVA_OPTS="-XX:+UseParallelGC -Xmn1g -XX:PerMethodTrapLimit=0 -XX:PerBytecodeTrapLimit=0 -XX:-UseTypeSpeculation -Dxq.trace.wideBeats=true"; export SECS=12 PAUSE=1.5 RUNS=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
mkdir -p $OUT/call
KINDS=decodeg ROUNDS=2 SECS=6 timeout 100 sh bench/gpu/mps-alone.sh $OUT/call/mps-alone > $OUT/call/mps-alone.log 2>&1; echo "mps-alone rc=$?"
tail -8 $OUT/call/mps-alone.log
ALT="dev.xq.host/mpsLatencyOwnContext:true" MIXES="decodeg+trainbf16" MODES=standalone,xq-alone,native,xq,xq-alt TMO=170 timeout 175 sh bench/gpu/mix-run.sh $OUT/call/a > $OUT/call-a.log 2>&1
ALT="dev.xq.host/mpsHoldBestEffort:false" MIXES="decodeg+trainbf16;custom=decodeg+gemm" MODES=xq,xq-alt TMO=150 timeout 155 sh bench/gpu/mix-run.sh $OUT/call/b > $OUT/call-b.log 2>&1
MIXES="trainio+triton;decode+trainio+gemm" MODES=native,xq TMO=130 timeout 135 sh bench/gpu/mix-run.sh $OUT/call/c > $OUT/call-c.log 2>&1
rm -rf /tmp/r; for x in a b c; do mkdir -p /tmp/r/$x; tar xzf $OUT/call/$x/mix-results.tgz -C /tmp/r/$x; grep -h "done (" /tmp/r/$x/mix-*.txt | cut -c1-700; done
