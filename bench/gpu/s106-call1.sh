# Session 106, call 1: bestEffortBalanceCarry (default: a count on the parts that a stop cuts short
# goes on after it, on the same set and cut) against dropping it at each stop (xq-alt:
# bestEffortBalanceCarry=false), native sharing in the same run. Session 105 found the weighings
# beside a GEMM process one every 3 s, the first ending in the third stretch.
# Read: bench/gpu/be-windows.py (each stretch between the stops over native's) and the balance lines.
export XQ_LOG=3 XQ_JAVA_OPTS="-XX:+UseParallelGC -Xmn1g -XX:PerMethodTrapLimit=0 -XX:PerBytecodeTrapLimit=0 -XX:-UseTypeSpeculation -Dxq.trace.wideBeats=true"
export SECS=10 PAUSE=1.5 RUNS=1 MODES=native,xq,xq-alt ALT="dev.xq.scheduler/bestEffortBalanceCarry:false"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
MIXES="custom=decode+trainbf16+gemm+triton;custom=decode+gemm+triton;custom=decode+trainbf16+triton;custom=decodep+trainbf16+gemm" \
  TMO=545 timeout 560 sh bench/gpu/mix-run.sh /tmp/m > /tmp/m.log 2>&1; echo "mix rc=$?"
cp /tmp/m.log /tmp/m/ 2>/dev/null; tar czf $OUT/m.tgz -C /tmp m
rm -rf /tmp/r; mkdir -p /tmp/r; tar xzf /tmp/m/mix-results.tgz -C /tmp/r && grep -h "done (" /tmp/r/mix-*.txt | sed 's/P99\/standalone[^,]*,//' | cut -c1-700
python3 bench/gpu/be-windows.py /tmp/r 2>&1 | grep -v "^  native" | cut -c1-200
grep -h "balance on" /tmp/r/mix-*.txt | grep -v "wide beats" | cut -c1-330
