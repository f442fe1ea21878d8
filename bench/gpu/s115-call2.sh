# Session 115, call 2: the interposer that wraps cuCtxSynchronize at version 13000 too (what
# torch.cuda.synchronize() reaches under CUDA 13). First Triton alone under the node (XQ_LOG=2: its
# synchronizes now counted, "host waits"), then three mixes, native / xq (defaults) / xq-alt (the
# slice, bestEffortBalanceSliceMicros, now fed by the waits), traced.
#   usage (device): sh bench/gpu/s115-call2.sh     (SLICE=2157, TMO=150 a mix, MIXES=...)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
./xq serve > /tmp/c2-node.txt 2>&1 &
node=$!
sleep 8
XQ_LOG=2 timeout 60 ./xq run --priority 1 --name triton -- python3 -u bench/torch/family/tenant.py --kind triton --seconds 3 \
  > /tmp/c2-triton.txt 2> /tmp/c2-triton.err
echo "== triton alone"; tail -1 /tmp/c2-triton.txt | cut -c1-120; grep -h "host waits\|unwrapped" /tmp/c2-triton.err | cut -c1-260
kill $node; wait $node 2>/dev/null
export SECS=10 PAUSE=1.5 RUNS=1
export XQ_JAVA_OPTS="-XX:+UseParallelGC -Xmn1g -XX:PerMethodTrapLimit=0 -XX:PerBytecodeTrapLimit=0 -XX:-UseTypeSpeculation -Dxq.trace.wideBeats=true"
MODES=native,xq,xq-alt ALT="dev.xq.scheduler/bestEffortBalanceSliceMicros:${SLICE:-2157}" \
MIXES="${MIXES:-custom=trainbf16+triton;custom=decode+trainbf16+triton;custom=chat+gemm+triton}" \
  TMO=${TMO:-150} timeout ${ALL:-360} sh bench/gpu/mix-run.sh $OUT/m2 > $OUT/m2.log 2>&1; echo "mix rc=$?"
cp /tmp/c2-* $OUT/ 2>/dev/null
rm -rf /tmp/r; mkdir -p /tmp/r; tar xzf $OUT/m2/mix-results.tgz -C /tmp/r
grep -h "done (" /tmp/r/mix-*.txt | sed 's/P99\/standalone[^,]*,//' | cut -c1-700
grep -h "rates alone" /tmp/r/mix-*.txt | cut -c1-300 | head -16
