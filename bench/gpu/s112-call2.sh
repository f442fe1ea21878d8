# Session 112, call 2: a new latency-critical kind, `chat` (an eager LLM chat service at random
# arrivals: a prompt of 128-1024 tokens prefilled across the whole device, then 16 launch-bound
# tokens, a synchronize a token), never run before: bare first (does it run, how long a request),
# then the launch path on it alone (xq-ab: every other request bypassed, the 2 % goal), then four
# mixes of one's own, native sharing against the defaults. (AB=0 leaves out the launch path;
# CHAT_MIXES=... runs other mixes: less device time.)
export SECS=10 PAUSE=1.5 RUNS=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
timeout 90 python3 bench/torch/family/tenant.py --kind chat --seconds 4 > /tmp/chat-bare.json 2> /tmp/chat-bare.err; echo "bare rc=$?"
tail -3 /tmp/chat-bare.err; python3 -c "
import json; d=json.loads(open('/tmp/chat-bare.json').read().split('\n')[-2]); print({k: d[k] for k in ('requests','p50_ms','p99_ms','mean_ms')})" || exit 1
[ "${AB:-1}" = 1 ] && MODES=xq-ab MIXES="custom=chat+gemm" TMO=70 timeout 80 sh bench/gpu/mix-run.sh /tmp/m3a > /tmp/m3a.log 2>&1; echo "xq-ab rc=$?"
cp /tmp/m3a.log /tmp/m3a/ 2>/dev/null; tar czf $OUT/m3a.tgz -C /tmp m3a
rm -rf /tmp/r; mkdir -p /tmp/r; tar xzf /tmp/m3a/mix-results.tgz -C /tmp/r && grep -h "launch path" /tmp/r/mix-*.txt | cut -c1-400
MODES=native,xq MIXES="${CHAT_MIXES:-custom=chat+trainbf16;custom=chat+gemm+triton;custom=chat:3+decode:2+train32;custom=chat+trainio+gemm}" \
  TMO=${TMO:-300} timeout $((${TMO:-300} + 10)) sh bench/gpu/mix-run.sh /tmp/m3b > /tmp/m3b.log 2>&1; echo "mix rc=$?"
cp /tmp/m3b.log /tmp/m3b/ 2>/dev/null; tar czf $OUT/m3b.tgz -C /tmp m3b
rm -rf /tmp/r; mkdir -p /tmp/r; tar xzf /tmp/m3b/mix-results.tgz -C /tmp/r && grep -h "done (" /tmp/r/mix-*.txt | cut -c1-900
grep -h "goals MET\|goals MISSED" /tmp/r/mix-*.txt | head
grep -h "WARN" /tmp/r/mix-*.txt | cut -c1-200 | sort | uniq -c | sort -rn | head -20
