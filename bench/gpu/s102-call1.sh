# Session 102, call 1 (H200 wanted): eight mixes of the family's kinds never run together before,
# defaults only, native sharing and XQ in one run each: how the build does on mixes it was not tuned on.
export XQ_LOG=3 XQ_JAVA_OPTS="-XX:+UseParallelGC -Xmn1g -XX:PerMethodTrapLimit=0 -XX:PerBytecodeTrapLimit=0 -XX:-UseTypeSpeculation -Dxq.trace.wideBeats=true"
export SECS=10 PAUSE=1.5 RUNS=1 MODES=native,xq
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
MIXES="custom=decodeg:3+decode:2;custom=trainio+gemm;custom=decodep+triton;custom=bulkp+train32+triton;custom=decode+trainbf16+gemm+triton;custom=decodep:3+graphp:2+trainbf16;custom=trainio+trainbf16;custom=decodeg+train32" \
  TMO=560 timeout 570 sh bench/gpu/mix-run.sh /tmp/m > /tmp/m.log 2>&1; echo "mix rc=$?"
cp /tmp/m.log /tmp/m/ 2>/dev/null; tar czf $OUT/m.tgz -C /tmp m
rm -rf /tmp/r; mkdir -p /tmp/r; tar xzf /tmp/m/mix-results.tgz -C /tmp/r && grep -h "done (" /tmp/r/mix-*.txt | cut -c1-700
