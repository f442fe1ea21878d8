# Session 111, call 1: the defaults (xq: holdBesideSlowed off) against the rule on with its lag
# read as a lower bound (xq-alt) in the same runs, native sharing beside them, on session 110's
# five decoder mixes (four with Triton's memory-bound loop, one without: the rule must stay quiet
# where the decoder's device part is not slowed).
export SECS=10 PAUSE=1.5 RUNS=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
MODES=native,xq,xq-alt ALT="dev.xq.scheduler/holdBesideSlowed:true" \
MIXES="custom=decode+triton+train32;custom=decode+trainbf16+triton;custom=decode+gemm+triton;custom=decode+trainbf16+gemm+triton;custom=decode+trainbf16+gemm" \
  TMO=${TMO:-500} timeout $((${TMO:-500} + 10)) sh bench/gpu/mix-run.sh /tmp/m1 > /tmp/m1.log 2>&1; echo "mix rc=$?"
cp /tmp/m1.log /tmp/m1/ 2>/dev/null; tar czf $OUT/m1.tgz -C /tmp m1
grep -h "holdBesideSlowed" /tmp/m1.log | cut -c1-300 | head -40
rm -rf /tmp/r; mkdir -p /tmp/r; tar xzf /tmp/m1/mix-results.tgz -C /tmp/r && grep -h "done (" /tmp/r/mix-*.txt | sed 's/P99\/standalone[^,]*,//' | cut -c1-600
grep -h "goals MET\|goals MISSED" /tmp/r/mix-*.txt | head -20
python3 bench/gpu/lc-device-part.py /tmp/r 2>&1 | cut -c1-200
