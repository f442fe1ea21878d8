# Session 107, call 3: call 2's part 1 again on the same warm machine (a second untraced reading of
# bestEffortBalanceLongCommands against it off), the random-arrival decoder beside GEMMs and Triton
# first: in call 2 it read 1.81 under the default and 1.00 with the rule off (native 1.70), its
# device part alike (1.36 and 1.31 ms at P99).
export SECS=10 PAUSE=1.5 RUNS=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
MODES=native,xq,xq-alt ALT="dev.xq.scheduler/bestEffortBalanceLongCommands:false" \
MIXES="custom=decodep+gemm+triton;custom=decode+gemm+triton;custom=decode+trainbf16+gemm+triton" \
  TMO=330 timeout 340 sh bench/gpu/mix-run.sh /tmp/m1 > /tmp/m1.log 2>&1; echo "rc=$?"
cp /tmp/m1.log /tmp/m1/ 2>/dev/null; tar czf $OUT/m1.tgz -C /tmp m1
rm -rf /tmp/r; mkdir -p /tmp/r; tar xzf /tmp/m1/mix-results.tgz -C /tmp/r && grep -h "done (" /tmp/r/mix-*.txt | sed 's/P99\/standalone[^,]*,//' | cut -c1-900
python3 bench/gpu/be-windows.py /tmp/r 2>&1 | grep -v "^  native" | cut -c1-200
python3 bench/gpu/end-stall.py /tmp/r 2>&1 | cut -c1-200
