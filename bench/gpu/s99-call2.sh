# session 99: trainio (training that waits for its host's input step every step; session 98, never
# yet on a GPU) bare, then its two mixes; then session 97's rule (no going back and forth between
# neighbouring cuts) on the two three-process mixes whose cut moved on the H200 (one run each).
export XQ_LOG=3 XQ_JAVA_OPTS="-XX:+UseParallelGC -Xmn1g -XX:PerMethodTrapLimit=0 -XX:PerBytecodeTrapLimit=0 -XX:-UseTypeSpeculation -Dxq.trace.wideBeats=true"; export SECS=12 PAUSE=1.5
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
mkdir -p $OUT/call
timeout 100 python3 bench/torch/family/tenant.py --kind trainio --seconds 5 > $OUT/call/bare.json 2> $OUT/call/bare.log; echo "bare rc=$?"
tail -2 $OUT/call/bare.log | cut -c1-200; python3 -c "import json,sys; d=json.loads(open(sys.argv[1]).read().splitlines()[-1]); print({k: d.get(k) for k in ('iterations','it_per_s','checksum','error')})" $OUT/call/bare.json
rm -rf /tmp/r
RUNS=1 MIXES="trainio+triton;decode+trainio+gemm" MODES=standalone,native,xq TMO=200 timeout 230 sh bench/gpu/mix-run.sh $OUT/call/a > $OUT/call-a.log 2>&1
RUNS=1 MIXES="gemm+triton+trainbf16;custom=graphp+trainbf16+triton" MODES=native,xq TMO=200 timeout 200 sh bench/gpu/mix-run.sh $OUT/call/b > $OUT/call-b.log 2>&1
for x in a b; do mkdir -p /tmp/r/$x; tar xzf $OUT/call/$x/mix-results.tgz -C /tmp/r/$x; grep -h "done (" /tmp/r/$x/mix-*.txt | cut -c1-400; done
grep -h "balance on" /tmp/r/*/mix-*.txt | grep -c " -> "; grep -h "stays:" /tmp/r/*/mix-*.txt | cut -c1-200 | head -5
grep -h "balance on" /tmp/r/*/mix-*.txt | grep "rates alone" | sed -n "1p;\$p" | cut -c1-300
