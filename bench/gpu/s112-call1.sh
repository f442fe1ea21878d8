# Session 112, call 1: as session 111 call 1 with the rule fixed (its start not counted, probes after 8 clean in a row,
# no process named the cause by elimination): the defaults (xq: holdBesideSlowed off) against the
# rule on (xq-alt) in the same runs, native sharing beside them, on session 111 call 1's five decoder mixes
# (four with Triton, one without, where the rule must stay quiet).
export SECS=10 PAUSE=1.5 RUNS=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
MODES=native,xq,xq-alt ALT="dev.xq.scheduler/holdBesideSlowed:true" \
MIXES="custom=decode+triton+train32;custom=decode+trainbf16+triton;custom=decode+gemm+triton;custom=decode+trainbf16+gemm+triton;custom=decode+trainbf16+gemm" \
  TMO=${TMO:-500} timeout $((${TMO:-500} + 10)) sh bench/gpu/mix-run.sh /tmp/m2 > /tmp/m2.log 2>&1; echo "mix rc=$?"
cp /tmp/m2.log /tmp/m2/ 2>/dev/null; tar czf $OUT/m2.tgz -C /tmp m2
rm -rf /tmp/r; mkdir -p /tmp/r; tar xzf /tmp/m2/mix-results.tgz -C /tmp/r
for f in /tmp/r/mix-*.txt; do echo "$f"; grep -h "holdBesideSlowed" "$f" | cut -c1-240; done
grep -h "done (" /tmp/r/mix-*.txt | sed 's/P99\/standalone[^,]*,//' | cut -c1-600
grep -h "goals MET\|goals MISSED" /tmp/r/mix-*.txt | head -20
python3 bench/gpu/lc-device-part.py /tmp/r 2>&1 | cut -c1-200
