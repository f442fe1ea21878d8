# ready for the next session: the family's new kind trainio (training that waits for its host's
# input step every step; session 98, never yet run on a GPU): bare first (its rate, and how long
# the host step takes there), then its two mixes, native and xq, and the BE-only one twice.
export XQ_LOG=3 XQ_JAVA_OPTS="-XX:+UseParallelGC -Xmn1g -XX:PerMethodTrapLimit=0 -XX:PerBytecodeTrapLimit=0 -XX:-UseTypeSpeculation -Dxq.trace.wideBeats=true"; export SECS=12 PAUSE=1.5
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
mkdir -p $OUT/call
timeout 120 python3 bench/torch/family/tenant.py --kind trainio --seconds 5 > $OUT/call/bare.json 2> $OUT/call/bare.log; echo "bare rc=$?"
tail -2 $OUT/call/bare.log | cut -c1-200; python3 -c "import json,sys; d=json.loads(open(sys.argv[1]).read().splitlines()[-1]); print({k: d.get(k) for k in ('iterations','it_per_s','checksum','error')})" $OUT/call/bare.json
rm -rf /tmp/r
RUNS=2 MIXES="trainio+triton" MODES=native,xq TMO=200 timeout 240 sh bench/gpu/mix-run.sh $OUT/call/a > $OUT/call-a.log 2>&1
RUNS=1 MIXES="decode+trainio+gemm" MODES=standalone,native,xq TMO=200 timeout 220 sh bench/gpu/mix-run.sh $OUT/call/b > $OUT/call-b.log 2>&1
for x in a b; do mkdir -p /tmp/r/$x; tar xzf $OUT/call/$x/mix-results.tgz -C /tmp/r/$x; grep -h "done (" /tmp/r/$x/mix-*.txt | cut -c1-300; done
grep -h "balance on" /tmp/r/a/mix-*.txt | grep " -> " | tail -3 | cut -c1-250
grep -h "balance on" /tmp/r/a/mix-*.txt | grep "rates alone" | sed -n "1p;\$p" | cut -c1-300
