# session 95's first device call: with holds that hold (off its turn means held), the best-effort
# processes without limits beside best-effort company only (bestEffortUnbounded), the node's
# measured cut again (bestEffortBalance), and both together
export XQ_LOG=3 XQ_JAVA_OPTS="-XX:+UseParallelGC -Xmn1g -XX:PerMethodTrapLimit=0 -XX:PerBytecodeTrapLimit=0 -XX:-UseTypeSpeculation -Dxq.trace.wideBeats=true"; export SECS=12 PAUSE=1.5 RUNS=1
rates() { mkdir -p /tmp/r$1; tar xzf $OUT/$1/mix-results.tgz -C /tmp/r$1; for f in /tmp/r$1/mix-*.json; do python3 -c "
import json,sys
d=json.load(open(sys.argv[1]))
for m in d['mixes']: print(m['name'], [(x['name'], x['it_per_s']) for x in m['tenants']], [x.get('p99_ms') for x in m['tenants']])" $f; done; grep -h "balance on" /tmp/r$1/mix-*.txt | head -24; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
MIXES="custom=trainbf16+triton;custom=train32+triton;custom=graphp+trainbf16+triton" MODES=native,xq,xq-alt ALT="dev.xq.scheduler/bestEffortUnbounded:true" TMO=300 timeout 310 sh bench/gpu/mix-run.sh $OUT/call1 > $OUT/call1.log 2>&1; grep -A30 "the call's A/B$" $OUT/call1.log
MIXES="custom=trainbf16+triton;custom=train32+triton" MODES=xq-alt ALT="dev.xq.scheduler/bestEffortBalance:true" TMO=110 timeout 115 sh bench/gpu/mix-run.sh $OUT/call1-bal > $OUT/call1-bal.log 2>&1; echo "== balance"; rates call1-bal
MIXES="custom=trainbf16+triton;custom=train32+triton" MODES=xq-alt ALT="dev.xq.scheduler/bestEffortBalance:true;dev.xq.scheduler/bestEffortUnbounded:true" TMO=110 timeout 115 sh bench/gpu/mix-run.sh $OUT/call1-balu > $OUT/call1-balu.log 2>&1; echo "== balance, unbounded"; rates call1-balu
