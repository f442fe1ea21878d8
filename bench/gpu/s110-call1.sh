# Session 110, call 1: holdBesideSlowed (on, the default: xq) against off (xq-alt) in the same runs,
# native sharing beside them: an eager decoder beside Triton's memory-bound loop (its kernels fell
# behind its launches, device part 0.2-4.9 ms at P99 in sessions 102-109) and one mix without
# Triton (its device part 0.1 ms: the rule must not act there).
export SECS=10 PAUSE=1.5 RUNS=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
MODES=native,xq,xq-alt ALT="dev.xq.scheduler/holdBesideSlowed:false" \
MIXES="custom=decode+triton+train32;custom=decode+trainbf16+triton;custom=decode+gemm+triton;custom=decode+trainbf16+gemm+triton;custom=decode+trainbf16+gemm" \
  TMO=${TMO:-500} timeout $((${TMO:-500} + 10)) sh bench/gpu/mix-run.sh /tmp/m1 > /tmp/m1.log 2>&1; echo "mix rc=$?"
cp /tmp/m1.log /tmp/m1/ 2>/dev/null; tar czf $OUT/m1.tgz -C /tmp m1
grep -h "holdBesideSlowed" /tmp/m1.log | cut -c1-300 | head -40
rm -rf /tmp/r; mkdir -p /tmp/r; tar xzf /tmp/m1/mix-results.tgz -C /tmp/r && grep -h "done (" /tmp/r/mix-*.txt | sed 's/P99\/standalone[^,]*,//' | cut -c1-600
grep -h "goals MET\|goals MISSED" /tmp/r/mix-*.txt | head -20
python3 bench/gpu/lc-device-part.py /tmp/r 2>&1 | cut -c1-200
