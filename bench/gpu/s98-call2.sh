# ready for the next session: the family's new kind, decodeg (an LLM served from CUDA graphs: a graph
# replay and a synchronize a token; session 98, never yet run on a GPU). First the tenant alone, bare
# (does the capture work, what a request takes), then its mixes with standalone, native and xq, and
# xq-alone (what ./xq run costs it alone: the overhead goal, <= 2 % at P50 and P99).
export XQ_LOG=3 XQ_JAVA_OPTS="-XX:+UseParallelGC -Xmn1g -XX:PerMethodTrapLimit=0 -XX:PerBytecodeTrapLimit=0 -XX:-UseTypeSpeculation -Dxq.trace.wideBeats=true"; export SECS=12 PAUSE=1.5 RUNS=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
mkdir -p $OUT/call
timeout 90 python3 bench/torch/family/tenant.py --kind decodeg --seconds 4 > $OUT/call/bare.json 2> $OUT/call/bare.log; echo "bare rc=$?"
tail -3 $OUT/call/bare.log; python3 -c "import json,sys; d=json.loads(open(sys.argv[1]).read().splitlines()[-1]); print({k: d.get(k) for k in ('requests','p50_ms','p99_ms','checksum','error')})" $OUT/call/bare.json
rm -rf /tmp/r
MIXES="decodeg+trainbf16;decodeg+triton+gemm;custom=decodeg+gemm;custom=decodeg:3+decode:2+trainbf16" MODES=standalone,xq-alone,native,xq TMO=220 timeout 480 sh bench/gpu/mix-run.sh $OUT/call > $OUT/call.log 2>&1
mkdir -p /tmp/r; tar xzf $OUT/call/mix-results.tgz -C /tmp/r; grep -h "done (\|goal " /tmp/r/mix-*.txt | cut -c1-300
