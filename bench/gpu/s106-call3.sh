# Session 106, call 3: the defaults as a user runs them (no XQ_LOG, no trace), native and xq in the
# same run, on the three GEMM mixes of calls 1-2 (two of which met every goal traced).
export SECS=10 PAUSE=1.5 RUNS=1 MODES=native,xq
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
MIXES="custom=decode+trainbf16+gemm+triton;custom=graph+trainbf16+gemm;custom=decode+gemm+triton" \
  TMO=230 timeout 240 sh bench/gpu/mix-run.sh /tmp/m > /tmp/m.log 2>&1; echo "mix rc=$?"
cp /tmp/m.log /tmp/m/ 2>/dev/null; tar czf $OUT/m.tgz -C /tmp m
rm -rf /tmp/r; mkdir -p /tmp/r; tar xzf /tmp/m/mix-results.tgz -C /tmp/r && grep -h "done (" /tmp/r/mix-*.txt | sed 's/P99\/standalone[^,]*,//' | sed 's/median interval[^;]*; //g; s/first done after a continue[^)]*)/)/g' | cut -c1-1100
python3 bench/gpu/be-windows.py /tmp/r 2>&1 | grep -v "^  native" | cut -c1-200
