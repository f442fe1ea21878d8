# Session 106, call 2: spells together (xq-alt: bestEffortBalanceTogether=true, each round ends with
# the best-effort processes sharing all of the device in time, as natively, and the cut aims at
# equal gains over that) against the default (xq: equal shares of the rates alone), native in the
# same run, traced (the balance lines say what each round measured together). Six mixes: the decoder mixes with Triton, training and GEMMs, the graph-served decoder
# beside training and a graph beside training and GEMMs (kinds not run since session 102).
export XQ_LOG=3 XQ_JAVA_OPTS="-XX:+UseParallelGC -Xmn1g -XX:PerMethodTrapLimit=0 -XX:PerBytecodeTrapLimit=0 -XX:-UseTypeSpeculation -Dxq.trace.wideBeats=true"
export SECS=10 PAUSE=1.5 RUNS=1 MODES=native,xq,xq-alt ALT="dev.xq.scheduler/bestEffortBalanceTogether:true"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
MIXES="custom=decode+trainbf16+triton;custom=decode+gemm+triton;custom=decode+trainbf16+gemm+triton;custom=decode+triton+train32;custom=decodeg+trainbf16;custom=graph+trainbf16+gemm" \
  TMO=560 timeout 575 sh bench/gpu/mix-run.sh /tmp/m > /tmp/m.log 2>&1; echo "mix rc=$?"
cp /tmp/m.log /tmp/m/ 2>/dev/null; tar czf $OUT/m.tgz -C /tmp m
rm -rf /tmp/r; mkdir -p /tmp/r; tar xzf /tmp/m/mix-results.tgz -C /tmp/r && grep -h "done (" /tmp/r/mix-*.txt | sed 's/P99\/standalone[^,]*,//' | cut -c1-1200
python3 bench/gpu/be-windows.py /tmp/r 2>&1 | grep -v "^  native" | cut -c1-200
grep -h "balance on" /tmp/r/mix-*.txt | grep -v "wide beats" | cut -c1-420
