# session 97's second device call: the GEMM beside a batch and Triton, the defaults (xq) against the
# defaults before session 96 (xq-alt: bestEffortBalance and bestEffortUnbounded off), then the
# family's other mixes with two or more best-effort processes on the defaults, native beside
export XQ_LOG=3 XQ_JAVA_OPTS="-XX:+UseParallelGC -Xmn1g -XX:PerMethodTrapLimit=0 -XX:PerBytecodeTrapLimit=0 -XX:-UseTypeSpeculation -Dxq.trace.wideBeats=true"; export SECS=12 PAUSE=1.5 RUNS=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
MIXES="bulk+gemm+triton" MODES=native,xq,xq-alt ALT="dev.xq.scheduler/bestEffortBalance:false;dev.xq.scheduler/bestEffortUnbounded:false" TMO=160 timeout 170 sh bench/gpu/mix-run.sh $OUT/ab > $OUT/ab.log 2>&1
MIXES="bulk+gemm+gemm;decode+bulk+gemm+triton;bulk+gemm+gemm+gemm" MODES=native,xq TMO=160 timeout 400 sh bench/gpu/mix-run.sh $OUT/call > $OUT/call.log 2>&1
for d in ab call; do mkdir -p /tmp/r$d; tar xzf $OUT/$d/mix-results.tgz -C /tmp/r$d; done; python3 -c "
import json,glob
for f in sorted(glob.glob('/tmp/r*/mix-*.json')):
  d=json.load(open(f))
  for m in d['mixes']:
    print(f, m['name'], 'goals_met', m.get('goals_met'))
    for x in m['tenants']: print('  ', x['name'], x.get('it_per_s'), x.get('xq_vs_native'), x.get('xq-alt_vs_native'), {k:v.get('shared_over_alone_p99') for k,v in (x.get('paired') or {}).items()})"
grep -h "rate/native" /tmp/r*/mix-*.txt | grep done | cut -c1-400
