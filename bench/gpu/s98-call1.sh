# ready for the next session: the measured cut that no longer goes back and forth (session 97, not
# yet on the GPU; session 98 added how busy each process keeps the device alone to the rounds' trace) on the mixes where it went between 11/5 and 12/4 on an H100, two runs each, native
# beside, and the three processes whose cut went between 7/4/5 and 8/3/5 on an H200; compare with docs/results/h*/2026-12-05-s97 on the same card only
export XQ_LOG=3 XQ_JAVA_OPTS="-XX:+UseParallelGC -Xmn1g -XX:PerMethodTrapLimit=0 -XX:PerBytecodeTrapLimit=0 -XX:-UseTypeSpeculation -Dxq.trace.wideBeats=true"; export SECS=12 PAUSE=1.5 RUNS=2
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
rm -rf /tmp/r
MIXES="custom=trainbf16+triton;custom=train32+triton;gemm+triton+trainbf16;custom=graphp+trainbf16+triton" MODES=native,xq TMO=200 timeout 560 sh bench/gpu/mix-run.sh $OUT/call > $OUT/call.log 2>&1
mkdir -p /tmp/r; tar xzf $OUT/call/mix-results.tgz -C /tmp/r; grep -h "done (" /tmp/r/mix-*.txt | cut -c1-300
grep -h "balance on" /tmp/r/mix-*.txt | grep -c " -> "; grep -h "stays:" /tmp/r/mix-*.txt | cut -c1-200 | head -5
grep -h "balance on" /tmp/r/mix-*.txt | grep "rates alone" | sed -n "1p;\$p" | cut -c1-300
