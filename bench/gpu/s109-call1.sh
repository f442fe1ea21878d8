# Session 109, call 1: the family on the defaults (untraced) on the machine the goals name (an
# H200 where one comes; nothing ran on one since session 97), native sharing against XQ, the
# mixes that missed in sessions 105-108 (graph+triton+gemm's GEMMs 0.87-0.88 in three H100 runs,
# the eager decoders' host-made readings, the known conflicts of decodeg and graphp) and one mix
# never run: two decoders at two priorities, one at random, beside a graph-less GEMM of n=6144.
export SECS=10 PAUSE=1.5 RUNS=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
MODES=native,xq \
MIXES="custom=graph+triton+gemm;custom=decode+gemm+gemm;custom=decodeg+trainbf16;custom=graphp+gemm+triton;custom=decode+trainbf16+triton;custom=decodep+train32+triton;custom=bulk+gemm+gemm;custom=decode:3+decodep:2@layers=12+gemm@size=6144" \
  TMO=${TMO:-450} timeout $((${TMO:-450} + 10)) sh bench/gpu/mix-run.sh /tmp/m1 > /tmp/m1.log 2>&1; echo "mix rc=$?"
cp /tmp/m1.log /tmp/m1/ 2>/dev/null; tar czf $OUT/m1.tgz -C /tmp m1
rm -rf /tmp/r; mkdir -p /tmp/r; tar xzf /tmp/m1/mix-results.tgz -C /tmp/r && grep -h "done (" /tmp/r/mix-*.txt | sed 's/P99\/standalone[^,]*,//' | cut -c1-600
grep -h "goals MET\|goals MISSED" /tmp/r/mix-*.txt | head -20
python3 bench/gpu/end-stall.py /tmp/r 2>&1 | grep -v native | cut -c1-200
