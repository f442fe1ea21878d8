# Session 107, call 2. Part 1: bestEffortBalanceLongCommands again, untraced (the default against
# xq-alt = off), on the GEMM mixes beside Triton and a random-arrival decoder beside them (a mix
# never run). Part 2: where best-effort processes beside a wide tenant stall at its exit (in 82 of
# 1,434 recorded xq runs a best-effort process ran 0.4 s or more past the run's end, bulk and graph
# mixes with GEMMs; never natively): the same two mixes natively, under XQ, and under the node's MPS
# daemon by hand (mode mps, no XQ). Read: the best-effort processes' last synchronizations against
# the latency-critical one's last request (python3 bench/gpu/end-stall.py DIR).
export SECS=10 PAUSE=1.5 RUNS=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
MODES=native,xq,xq-alt ALT="dev.xq.scheduler/bestEffortBalanceLongCommands:false" \
MIXES="custom=decode+gemm+triton;custom=decode+trainbf16+gemm+triton;custom=decodep+gemm+triton" \
  TMO=330 timeout 340 sh bench/gpu/mix-run.sh /tmp/m1 > /tmp/m1.log 2>&1; echo "part 1 rc=$?"
cp /tmp/m1.log /tmp/m1/ 2>/dev/null; tar czf $OUT/m1.tgz -C /tmp m1
MODES=native,xq,mps MIXES="custom=bulk+gemm+gemm;custom=graph+triton+gemm" \
  TMO=220 timeout 230 sh bench/gpu/mix-run.sh /tmp/m2 > /tmp/m2.log 2>&1; echo "part 2 rc=$?"
cp /tmp/m2.log /tmp/m2/ 2>/dev/null; tar czf $OUT/m2.tgz -C /tmp m2
for d in m1 m2; do
  rm -rf /tmp/r$d; mkdir -p /tmp/r$d; tar xzf /tmp/$d/mix-results.tgz -C /tmp/r$d && grep -h "done (" /tmp/r$d/mix-*.txt | sed 's/P99\/standalone[^,]*,//' | cut -c1-900
  python3 bench/gpu/be-windows.py /tmp/r$d 2>&1 | grep -v "^  native" | cut -c1-200
  python3 bench/gpu/end-stall.py /tmp/r$d 2>&1 | cut -c1-200
done
