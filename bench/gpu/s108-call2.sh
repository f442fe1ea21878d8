# Session 108, call 2 (on the machine call 1 left warm): the family on the defaults (untraced),
# native sharing against XQ, six mixes call 1 did not run.
export SECS=10 PAUSE=1.5 RUNS=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
MODES=native,xq \
MIXES="custom=decode+trainbf16;custom=graph+train32;custom=decodeg+trainbf16;custom=decode+gemm+triton;custom=bulk+trainbf16;custom=graphp+gemm+triton" \
  TMO=${TMO:-300} timeout $((${TMO:-300} + 10)) sh bench/gpu/mix-run.sh /tmp/m2 > /tmp/m2.log 2>&1; echo "mix rc=$?"
cp /tmp/m2.log /tmp/m2/ 2>/dev/null; tar czf $OUT/m2.tgz -C /tmp m2
rm -rf /tmp/r; mkdir -p /tmp/r; tar xzf /tmp/m2/mix-results.tgz -C /tmp/r && grep -h "done (" /tmp/r/mix-*.txt | sed 's/P99\/standalone[^,]*,//' | cut -c1-600
grep -h "goals MET\|goals MISSED" /tmp/r/mix-*.txt | head -20
python3 bench/gpu/end-stall.py /tmp/r 2>&1 | grep -v native | cut -c1-200
