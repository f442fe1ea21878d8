# Session 114: do a PyTorch process's synchronizes reach the interposer's count of host waits
# (XQ_LOG=2's "host waits" line), and the node's measured cut ("ms a wait, weight" in the trace)?
# Session 113's call 1 ran the cut with a slice and its trace named no process's waits.
# 1. Triton and the bf16 trainer under ./xq run --priority 1 (best-effort), XQ_LOG=2, 6 s together.
# 2. The pair as a mix, xq and xq-alt (the slice), traced, XQ_LOG=2 in the tenants.
#   usage (device): sh bench/gpu/s114-diag.sh    SLICE (2157 us: session 114's native-slice median)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
./xq serve > /tmp/d-node.txt 2>&1 &
node=$!
sleep 8
# Triton alone under the node first: its launches a step, unnarrowed (the pair's are narrowed)
XQ_LOG=2 timeout 60 ./xq run --priority 1 --name triton -- python3 -u bench/torch/family/tenant.py --kind triton --seconds 4 \
  > /tmp/d-alone-triton.txt 2> /tmp/d-alone-triton.err
echo "== triton alone"; tail -1 /tmp/d-alone-triton.txt | cut -c1-160; grep -h "host waits\|launched\|unwrapped" /tmp/d-alone-triton.err | cut -c1-260
for k in triton trainbf16; do
  XQ_LOG=2 timeout 60 ./xq run --priority 1 --name $k -- python3 -u bench/torch/family/tenant.py --kind $k --seconds 6 \
    > /tmp/d-$k.txt 2> /tmp/d-$k.err &
  pids="${pids:-} $!"
done
wait $pids; sleep 1
for k in triton trainbf16; do echo "== $k"; tail -1 /tmp/d-$k.txt | cut -c1-200; grep -h "host waits\|registered\|no node\|launched\|unwrapped" /tmp/d-$k.err | cut -c1-260; done
kill $node; wait $node 2>/dev/null
mkdir -p /tmp/d; cp /tmp/d-* /tmp/d/ 2>/dev/null
export SECS=10 PAUSE=1.5 RUNS=1 XQ_LOG=2
export XQ_JAVA_OPTS="-XX:+UseParallelGC -Xmn1g -XX:PerMethodTrapLimit=0 -XX:PerBytecodeTrapLimit=0 -XX:-UseTypeSpeculation -Dxq.trace.wideBeats=true"
MODES=xq,xq-alt ALT="dev.xq.scheduler/bestEffortBalanceSliceMicros:${SLICE:-2157}" MIXES="custom=trainbf16+triton" \
  TMO=${TMO:-150} timeout $((${TMO:-150} + 10)) sh bench/gpu/mix-run.sh /tmp/m1 > /tmp/m1.log 2>&1; echo "mix rc=$?"
cp /tmp/m1.log /tmp/m1/ 2>/dev/null; cp -r /tmp/d /tmp/m1/; tar czf $OUT/d.tgz -C /tmp m1
rm -rf /tmp/r; mkdir -p /tmp/r; tar xzf /tmp/m1/mix-results.tgz -C /tmp/r
grep -h "done (" /tmp/r/mix-*.txt | cut -c1-400
grep -h "rates alone" /tmp/r/mix-*.txt | cut -c1-400 | head -8
grep -rh "host waits" /tmp/r/logs-* | head -8
