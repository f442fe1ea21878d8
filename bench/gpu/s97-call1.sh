# session 97's first device call (and, with S97_MIXES, its third and fifth): the defaults as built
# (bestEffortBalance and bestEffortUnbounded on since session 96) on mixes with two or more
# best-effort processes, native beside
export XQ_LOG=3 XQ_JAVA_OPTS="-XX:+UseParallelGC -Xmn1g -XX:PerMethodTrapLimit=0 -XX:PerBytecodeTrapLimit=0 -XX:-UseTypeSpeculation -Dxq.trace.wideBeats=true"; export SECS=12 PAUSE=1.5 RUNS=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
MIXES="${S97_MIXES:-custom=decode+trainbf16+triton;decode+trainbf16+gemm;bulk+gemm+triton;decode+graph+trainbf16+gemm}" MODES=native,xq TMO=160 timeout 540 sh bench/gpu/mix-run.sh $OUT/call > $OUT/call.log 2>&1
mkdir -p /tmp/r; tar xzf $OUT/call/mix-results.tgz -C /tmp/r; python3 -c "
import json,glob
for f in sorted(glob.glob('/tmp/r/mix-*.json')):
  d=json.load(open(f))
  for m in d['mixes']:
    print(m['name'], 'goals_met', m.get('goals_met'))
    for x in m['tenants']: print('  ', x['name'], x.get('it_per_s'), x.get('xq_vs_native'), {k:v.get('shared_over_alone_p99') for k,v in (x.get('paired') or {}).items()})"
grep -h "balance on" /tmp/r/mix-*.txt | cut -c1-170 | head -30
