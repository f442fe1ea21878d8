# session 97's fourth device call: the eager decoder beside a bf16 trainer and GEMMs, and beside
# the trainer and Triton, on the defaults (xq) against bestEffortUnbounded off (xq-alt), two runs each
export XQ_LOG=3 XQ_JAVA_OPTS="-XX:+UseParallelGC -Xmn1g -XX:PerMethodTrapLimit=0 -XX:PerBytecodeTrapLimit=0 -XX:-UseTypeSpeculation -Dxq.trace.wideBeats=true"; export SECS=12 PAUSE=1.5 RUNS=2
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
MIXES="decode+trainbf16+gemm;custom=decode+trainbf16+triton" MODES=native,xq,xq-alt ALT="dev.xq.scheduler/bestEffortUnbounded:false" TMO=260 timeout 530 sh bench/gpu/mix-run.sh $OUT/call > $OUT/call.log 2>&1
mkdir -p /tmp/r; tar xzf $OUT/call/mix-results.tgz -C /tmp/r; python3 -c "
import json,glob
for f in sorted(glob.glob('/tmp/r/mix-*.json')):
  d=json.load(open(f))
  for m in d['mixes']:
    print(f, m['name'], 'goals_met', m.get('goals_met'))
    for x in m['tenants']: print('  ', x['name'], x.get('it_per_s'), x.get('xq_vs_native'), x.get('xq-alt_vs_native'), {k:v.get('shared_over_alone_p99') for k,v in (x.get('paired') or {}).items()})"
grep -h "done (" /tmp/r/mix-*.txt | cut -c1-330
