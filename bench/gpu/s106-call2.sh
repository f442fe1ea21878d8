# Session 106, call 2: the defaults as a user runs them (no XQ_LOG, no trace), native and xq in the
# same run, on seven mixes of the family: the GEMM mixes call 1 ran (carried counts), the fp32
# decoder mix, and kinds not run since session 102 (the graph-served decoder, a graph beside
# training and GEMMs, two latency-critical tenants at two priorities, a random-arrival batch).
export SECS=10 PAUSE=1.5 RUNS=1 MODES=native,xq
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
MIXES="custom=decode+trainbf16+gemm+triton;custom=decode+gemm+triton;custom=decode+triton+train32;custom=decodeg+trainbf16;custom=graph+trainbf16+gemm;custom=decode:3+graph:2+trainbf16;custom=bulkp+trainbf16" \
  TMO=545 timeout 560 sh bench/gpu/mix-run.sh /tmp/m > /tmp/m.log 2>&1; echo "mix rc=$?"
cp /tmp/m.log /tmp/m/ 2>/dev/null; tar czf $OUT/m.tgz -C /tmp m
rm -rf /tmp/r; mkdir -p /tmp/r; tar xzf /tmp/m/mix-results.tgz -C /tmp/r && grep -h "done (" /tmp/r/mix-*.txt | sed 's/P99\/standalone[^,]*,//' | cut -c1-900
python3 bench/gpu/be-windows.py /tmp/r 2>&1 | grep -v "^  native" | cut -c1-200
