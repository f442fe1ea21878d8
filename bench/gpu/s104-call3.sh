# Session 104, call 3: bestEffortBalanceQuick (default: a weighing jumps to where the shares kept
# would come out equal, over half a second) against the weighing before it (xq-alt:
# bestEffortBalanceQuick=false, a sixteenth to three a second), native sharing in the same run, on
# mixes with two or three best-effort processes beside an eager decoder (no wide tenant, so the
# measured cut decides their parts). Read each BE rate over native's and the balance lines
# ("balance on cuda0") in mix-N.txt.
export XQ_LOG=3 XQ_JAVA_OPTS="-XX:+UseParallelGC -Xmn1g -XX:PerMethodTrapLimit=0 -XX:PerBytecodeTrapLimit=0 -XX:-UseTypeSpeculation"
export SECS=10 PAUSE=1.5 RUNS=1 MODES=native,xq,xq-alt ALT="dev.xq.scheduler/bestEffortBalanceQuick:false"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
MIXES="custom=decode+triton+train32;custom=decode+trainbf16+gemm+triton;custom=decode+trainbf16+triton;custom=decode+gemm+triton;custom=decodep+train32+triton;custom=decode+trainbf16+gemm" \
  TMO=545 timeout 560 sh bench/gpu/mix-run.sh /tmp/m > /tmp/m.log 2>&1; echo "mix rc=$?"
cp /tmp/m.log /tmp/m/ 2>/dev/null; tar czf $OUT/m.tgz -C /tmp m
rm -rf /tmp/r; mkdir -p /tmp/r; tar xzf /tmp/m/mix-results.tgz -C /tmp/r && grep -h "done (" /tmp/r/mix-*.txt | sed 's/P99\/standalone[^,]*,//' | cut -c1-1200
grep -h "balance on" /tmp/r/mix-*.txt | grep -o "sixteenths.*" | head -40
