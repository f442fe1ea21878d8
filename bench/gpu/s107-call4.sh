# Session 107, call 4: four mixes never run before, the defaults against native sharing (untraced):
# an fp32 trainer with GEMMs and Triton under an eager decoder, the same with bf16 training under a
# random-arrival decoder, a random-arrival CUDA graph above GEMMs and Triton, and an eager decoder
# above two GEMM processes (both weighed by the gaps between their long commands).
export SECS=10 PAUSE=1.5 RUNS=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
MODES=native,xq \
MIXES="custom=decode+train32+gemm+triton;custom=decodep+trainbf16+gemm+triton;custom=graphp+gemm+triton;custom=decode+gemm+gemm" \
  TMO=300 timeout 310 sh bench/gpu/mix-run.sh /tmp/m1 > /tmp/m1.log 2>&1; echo "rc=$?"
cp /tmp/m1.log /tmp/m1/ 2>/dev/null; tar czf $OUT/m1.tgz -C /tmp m1
rm -rf /tmp/r; mkdir -p /tmp/r; tar xzf /tmp/m1/mix-results.tgz -C /tmp/r && grep -h "done (" /tmp/r/mix-*.txt | sed 's/P99\/standalone[^,]*,//' | cut -c1-900
grep -h "goals [MA-Z]*$\|goals MET\|goals MISSED" /tmp/r/mix-*.txt | head
python3 bench/gpu/be-windows.py /tmp/r 2>&1 | grep -v "^  native" | cut -c1-200
python3 bench/gpu/end-stall.py /tmp/r 2>&1 | grep -v native | cut -c1-200
