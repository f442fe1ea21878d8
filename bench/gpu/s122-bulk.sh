# Session 122's question for the GPU: why the large batch beside bf16 training has spells at twice
# its alone latency under XQ (docs/performance.md, "Session 122"). The suspect is the hold behind a
# tenant's current stretch of work (session 116); xq-alt turns it off in every tenant (XQ_STRETCH=0).
# Three runs of bulk+trainbf16 and one of chat+trainbf16 (what the stretch rule was made for), each
# its own bench call, with the node's wide-beat trace on so that its starving counts mean something.
# Read: the count of the batch's slow requests per mode, and bench/gpu/lc-inside.py's samples of
# the trainer inside them (the 47 ms sampler lands inside the batch's 8 ms requests).
#   usage (device): sh bench/gpu/s122-bulk.sh      (TMO=170 a call; MIXES as for s116-stretch.sh)
# Carry node/target, interpose/target, .jre.tar.xz. Results in $OUT/stretch/ (mix-results.tgz) and $OUT/stretch.log;
# the readings below come from the bench folder (/tmp/xq-mix) as the call ends.
export XQ_JAVA_OPTS="${XQ_JAVA_OPTS:--XX:+UseParallelGC -Xmn1g -XX:PerMethodTrapLimit=0 -XX:PerBytecodeTrapLimit=0 -XX:-UseTypeSpeculation -Dxq.trace.wideBeats=true}"
MIXES="${MIXES:-bulk+trainbf16;bulk+trainbf16;bulk+trainbf16;chat+trainbf16}" TMO=${TMO:-170} sh bench/gpu/s116-stretch.sh
echo "== the batch's requests over 12 ms (its alone best is about 8 ms), per run and mode"
for d in /tmp/xq-mix/logs-*/bulk+trainbf16/*; do
  [ -f "$d/bulk.json" ] && python3 -c "import json,sys; r=json.loads(open(sys.argv[1]).read().strip().splitlines()[-1]); l=r['lat_ms']; print(sys.argv[2], sum(1 for x in l if x > 12), 'of', len(l))" "$d/bulk.json" "${d#/tmp/xq-mix/}"
done
echo "== inside the batch's slow requests"; python3 bench/gpu/lc-inside.py /tmp/xq-mix 2>&1 | grep -A3 "bulk:" | cut -c1-300
# since session 123: were the slow requests slow on the host, and there did the CPU run slow (the release spin)
# or did the launches wait in the driver (the interposer's XQ_TIME_LAUNCHES count)? bench/gpu/host-speed.py
python3 bench/gpu/host-speed.py /tmp/xq-mix 2>&1 | cut -c1-420 | tail -30
