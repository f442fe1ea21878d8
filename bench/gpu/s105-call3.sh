# Session 105, call 3: bestEffortBalanceEarly again (run after run): what the processes did on their
# parts before a round of spells weighed as soon as the round ends, against the weighing from the
# round's end (xq-alt: bestEffortBalanceEarly=false), native sharing in the same run. It repeats call 2
# on the mixes where the early weighing applies (every process completes 16 commands in the quarter
# second before the round) and adds three with trainio and decodep.
# Read: bench/gpu/be-windows.py (each stretch between the stops over native's) and the balance lines.
export XQ_LOG=3 XQ_JAVA_OPTS="-XX:+UseParallelGC -Xmn1g -XX:PerMethodTrapLimit=0 -XX:PerBytecodeTrapLimit=0 -XX:-UseTypeSpeculation -Dxq.trace.wideBeats=true"
export SECS=10 PAUSE=1.5 RUNS=1 MODES=native,xq,xq-alt ALT="dev.xq.scheduler/bestEffortBalanceEarly:false"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
MIXES="custom=decode+trainbf16+triton;custom=decode+triton+train32;custom=trainbf16+triton;custom=decodep+train32+triton;custom=trainio+triton;custom=decode+trainio+triton" \
  TMO=545 timeout 560 sh bench/gpu/mix-run.sh /tmp/m > /tmp/m.log 2>&1; echo "mix rc=$?"
cp /tmp/m.log /tmp/m/ 2>/dev/null; tar czf $OUT/m.tgz -C /tmp m
rm -rf /tmp/r; mkdir -p /tmp/r; tar xzf /tmp/m/mix-results.tgz -C /tmp/r && grep -h "done (" /tmp/r/mix-*.txt | sed 's/P99\/standalone[^,]*,//' | cut -c1-700
python3 bench/gpu/be-windows.py /tmp/r 2>&1 | grep -v "^  native" | cut -c1-200
