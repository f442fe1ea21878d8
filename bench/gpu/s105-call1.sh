# For the next session with a GPU (written in session 104): the measured cut's steady state.
# Session 104's 10 s runs spent their first ~1.5 s before the first spells and half their time
# stopped by the paired reading; "between the stops" the trainers beside Triton read 0.84-0.97 of
# native, the whole run 0.80-0.92. Twice as long a run tells how much of the miss is the start.
# Also the first run of the quick jump's floor (no part cut below half at once), traced.
export XQ_LOG=3 XQ_JAVA_OPTS="-XX:+UseParallelGC -Xmn1g -XX:PerMethodTrapLimit=0 -XX:PerBytecodeTrapLimit=0 -XX:-UseTypeSpeculation -Dxq.trace.wideBeats=true"
export SECS=20 PAUSE=1.5 RUNS=1 MODES=native,xq
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
MIXES="custom=decode+trainbf16+triton;custom=decode+triton+train32;custom=decode+trainbf16+gemm+triton;custom=decode+gemm+triton;custom=trainbf16+triton" \
  TMO=545 timeout 560 sh bench/gpu/mix-run.sh /tmp/m > /tmp/m.log 2>&1; echo "mix rc=$?"
cp /tmp/m.log /tmp/m/ 2>/dev/null; tar czf $OUT/m.tgz -C /tmp m
rm -rf /tmp/r; mkdir -p /tmp/r; tar xzf /tmp/m/mix-results.tgz -C /tmp/r && grep -h "done (" /tmp/r/mix-*.txt | sed 's/P99\/standalone[^,]*,//' | cut -c1-900
grep -h "balance on" /tmp/r/mix-*.txt | sed 's/xq: balance on cuda0: //' | cut -c1-230 | head -60
