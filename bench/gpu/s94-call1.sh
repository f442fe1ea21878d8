# session 94's first device call: operator's shares (3:1, then 5:3) and the node's measured cut (bestEffortBalance)
export XQ_LOG=3 XQ_JAVA_OPTS="-XX:+UseParallelGC -Xmn1g -XX:PerMethodTrapLimit=0 -XX:PerBytecodeTrapLimit=0 -XX:-UseTypeSpeculation -Dxq.trace.wideBeats=true"; export SECS=12 PAUSE=1.5 RUNS=1 TMO=200
MIXES="custom=trainbf16+triton;custom=train32+triton;custom=graphp+trainbf16+triton" MODES=native,xq,xq-alt ALT="dev.xq.scheduler/bestEffortShares:trainbf16=3,train32=3,triton=1" timeout 330 sh bench/gpu/mix-run.sh $OUT/call1 > $OUT/call1.log 2>&1; grep -A30 "the call's A/B$" $OUT/call1.log
rates() { mkdir -p /tmp/r$1; tar xzf $OUT/$1/mix-results.tgz -C /tmp/r$1; for f in /tmp/r$1/mix-*.json; do python3 -c "
import json,sys
d=json.load(open(sys.argv[1]))
for m in d['mixes']: print(m['name'], [(x['name'], x['it_per_s']) for x in m['tenants']], [x.get('p99_ms') for x in m['tenants']])" $f; done; grep -h "balance on" /tmp/r$1/mix-*.txt | head -30; }
MIXES="custom=trainbf16+triton;custom=train32+triton;custom=graphp+trainbf16+triton" MODES=xq-alt ALT="dev.xq.scheduler/bestEffortBalance:true" timeout 150 sh bench/gpu/mix-run.sh $OUT/call1-bal > $OUT/call1-bal.log 2>&1; echo "== balance"; rates call1-bal
MIXES="custom=trainbf16+triton;custom=train32+triton" MODES=xq-alt ALT="dev.xq.scheduler/bestEffortShares:trainbf16=5,train32=5,triton=3" timeout 100 sh bench/gpu/mix-run.sh $OUT/call1-5-3 > $OUT/call1-5-3.log 2>&1; echo "== 5:3"; rates call1-5-3
