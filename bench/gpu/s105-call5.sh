# Session 105, call 5 (the budget's last 265 s): the defaults untraced on two mixes, and the mix
# scenario's new start / after-start figures on a GPU for the first time.
export SECS=10 PAUSE=1.5 RUNS=1 MODES=native,xq
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
MIXES="custom=decode+trainbf16+triton;custom=decode+trainbf16+gemm+triton" \
  TMO=150 timeout 155 sh bench/gpu/mix-run.sh /tmp/m > /tmp/m.log 2>&1; echo "mix rc=$?"
cp /tmp/m.log /tmp/m/ 2>/dev/null; tar czf $OUT/m.tgz -C /tmp m
rm -rf /tmp/r; mkdir -p /tmp/r; tar xzf /tmp/m/mix-results.tgz -C /tmp/r && grep -h "done (" /tmp/r/mix-*.txt | sed 's/P99\/standalone[^,]*,//' | cut -c1-900
