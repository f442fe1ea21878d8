# Session 107, call 1: bestEffortBalanceLongCommands (default: a process whose rate on its part is
# timed between whole batches over two gaps or more counts as enough for a weighing, however few
# commands it completed) against sixteen commands for every process (xq-alt:
# bestEffortBalanceLongCommands=false), native sharing in the same run. Session 106 found the
# GEMMs beside Triton at 0.33 of their rate alone on the node's first cut (8/8) for 2.7-2.8 s after
# the first round, the weighing before the round never applying (about 4 GEMM commands in it).
# Read: bench/gpu/be-windows.py (each stretch between the stops over native's) and the balance lines.
export XQ_LOG=3 XQ_JAVA_OPTS="-XX:+UseParallelGC -Xmn1g -XX:PerMethodTrapLimit=0 -XX:PerBytecodeTrapLimit=0 -XX:-UseTypeSpeculation -Dxq.trace.wideBeats=true"
export SECS=10 PAUSE=1.5 RUNS=1 MODES=native,xq,xq-alt ALT="dev.xq.scheduler/bestEffortBalanceLongCommands:false"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
MIXES="custom=decode+gemm+triton;custom=decode+trainbf16+gemm+triton;custom=gemm+triton+trainbf16;custom=graph+triton+gemm;custom=decode+trainbf16+gemm;custom=bulk+gemm+gemm" \
  TMO=560 timeout 575 sh bench/gpu/mix-run.sh /tmp/m > /tmp/m.log 2>&1; echo "mix rc=$?"
cp /tmp/m.log /tmp/m/ 2>/dev/null; tar czf $OUT/m.tgz -C /tmp m
rm -rf /tmp/r; mkdir -p /tmp/r; tar xzf /tmp/m/mix-results.tgz -C /tmp/r && grep -h "done (" /tmp/r/mix-*.txt | sed 's/P99\/standalone[^,]*,//' | cut -c1-700
python3 bench/gpu/be-windows.py /tmp/r 2>&1 | grep -v "^  native" | cut -c1-200
grep -h "balance on" /tmp/r/mix-*.txt | grep -v "wide beats" | cut -c1-330
