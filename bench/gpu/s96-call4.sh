# session 96's last device call: the new defaults (bestEffortBalance, bestEffortUnbounded on) as
# built, on the eager decoder beside a bf16 trainer and Triton, a second reading of that mix
export XQ_LOG=3 XQ_JAVA_OPTS="-XX:+UseParallelGC -Xmn1g -XX:PerMethodTrapLimit=0 -XX:PerBytecodeTrapLimit=0 -XX:-UseTypeSpeculation -Dxq.trace.wideBeats=true"; export SECS=12 PAUSE=1.5 RUNS=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
MIXES="custom=decode+trainbf16+triton" MODES=native,xq TMO=150 timeout 155 sh bench/gpu/mix-run.sh $OUT/call5 > $OUT/call5.log 2>&1
mkdir -p /tmp/r5; tar xzf $OUT/call5/mix-results.tgz -C /tmp/r5; python3 -c "
import json
d=json.load(open('/tmp/r5/mix-1.json'))
for m in d['mixes']:
  for x in m['tenants']: print(x['name'], x.get('it_per_s'), {k:v.get('shared_over_alone_p99') for k,v in (x.get('paired') or {}).items()})"
grep -h "balance on" /tmp/r5/mix-*.txt | cut -c1-170 | head -12
