# Session 110, call 2: the defaults (xq: holdBesideSlowed off since call 1) and the experiment with
# the lag read as a lower bound (xq-alt: holdBesideSlowed on), native sharing beside them, on
# a decoder mix with Triton whose device part read 2-5 ms at P99 on H100s (sessions 102-108)
# (the budget left one mix).
export SECS=10 PAUSE=1.5 RUNS=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
MODES=native,xq,xq-alt ALT="dev.xq.scheduler/holdBesideSlowed:true" \
MIXES="custom=decode+trainbf16+triton" \
  TMO=${TMO:-120} timeout $((${TMO:-120} + 10)) sh bench/gpu/mix-run.sh /tmp/m2 > /tmp/m2.log 2>&1; echo "mix rc=$?"
cp /tmp/m2.log /tmp/m2/ 2>/dev/null; tar czf $OUT/m2.tgz -C /tmp m2
rm -rf /tmp/r; mkdir -p /tmp/r; tar xzf /tmp/m2/mix-results.tgz -C /tmp/r && grep -h "holdBesideSlowed" /tmp/r/mix-*.txt | cut -c1-250
python3 - <<'PY'
import json,glob
for f in sorted(glob.glob('/tmp/r/mix-*.json')):
    for m in json.load(open(f)).get('mixes',[]):
        print(f.split('/')[-1], m.get('name'), 'met' if m.get('goals_met') else 'MISSED')
        for t in m.get('tenants',[]):
            print('   ', {k:v for k,v in t.items() if not isinstance(v,(list,dict)) and k not in ('kind','results_identical')})
PY
grep -h "done (" /tmp/r/mix-*.txt | sed "s/P99\/standalone[^,]*,//" | cut -c1-420
python3 bench/gpu/lc-device-part.py /tmp/r 2>&1 | cut -c1-200
