# Session 103, call 1 (for the next session with a GPU; no device could be had in session 103):
# holdBesideNarrow=triton (xq-alt: Triton held in time through an eager decoder's requests) against
# the default (xq), native sharing in the same run, on the mixes where the decoder's device part was
# 2.8-4.9 ms at P99 beside Triton on an H100 (session 102) and one without Triton as a control.
# Read: each decoder's paired P99 and its device part (host_device_parts), and Triton's and the
# trainers' rates over native's (bench/gpu/lc-device-part.py, bench/gpu/mix-history.py --mode xq-alt).
export XQ_LOG=3 XQ_JAVA_OPTS="-XX:+UseParallelGC -Xmn1g -XX:PerMethodTrapLimit=0 -XX:PerBytecodeTrapLimit=0 -XX:-UseTypeSpeculation -Dxq.trace.wideBeats=true"
export SECS=10 PAUSE=1.5 RUNS=1 MODES=native,xq,xq-alt ALT="dev.xq.scheduler/holdBesideNarrow:triton"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
MIXES="custom=decode+triton+train32;custom=decode+trainbf16+gemm+triton;custom=decodep+triton;custom=decode+trainbf16+gemm" \
  TMO=560 timeout 575 sh bench/gpu/mix-run.sh /tmp/m > /tmp/m.log 2>&1; echo "mix rc=$?"
cp /tmp/m.log /tmp/m/ 2>/dev/null; tar czf $OUT/m.tgz -C /tmp m
rm -rf /tmp/r; mkdir -p /tmp/r; tar xzf /tmp/m/mix-results.tgz -C /tmp/r && grep -h "done (" /tmp/r/mix-*.txt | cut -c1-900
