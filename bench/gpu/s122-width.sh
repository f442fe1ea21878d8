# Session 122's A/B for the GPU: kernels' widths by occupancy (xq-alt: XQ_WIDTH=occupancy in every
# tenant) against by threads (xq, the default). By threads, a library's convolution or GEMM whose
# blocks are held to one or two a multiprocessor reads far narrower than it runs, and the node may
# narrow a best-effort tenant beside it instead of holding it (docs/processes.md, "Widths by
# occupancy"). Mixes: the large batch beside bf16 training (its spells at twice its alone latency,
# session 122), chat beside bf16 training (what the stretch rule was made for, to see nothing lost),
# the eager decoder beside GEMMs and bf16 training, and the graph beside Triton and GEMMs.
#   usage (device): sh bench/gpu/s122-width.sh      (TMO=540 in all; MIXES to choose others, ";" between bench calls)
# Carry node/target, interpose/target, .jre.tar.xz. Results in $OUT/width/ (mix-results.tgz) and $OUT/width.log.
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
SECS=${SECS:-8} PAUSE=${PAUSE:-1.5} RUNS=1 MODES=native,xq,xq-alt ALT="env/XQ_WIDTH:occupancy" \
  MIXES="${MIXES:-bulk+trainbf16,chat+trainbf16;bulk+trainbf16,decode+trainbf16+gemm,graph+triton+gemm}" \
  TMO=${TMO:-540} timeout $(( ${TMO:-540} + 15 )) sh bench/gpu/mix-run.sh "$OUT/width" > "$OUT/width.log" 2>&1; echo "mix rc=$?"
grep -A30 "== the call's mixes" "$OUT/width.log" | head -30
grep -A20 "== the call's A/B" "$OUT/width.log" | head -20
echo "== the batch's requests over 12 ms (its alone best is about 8 ms), per mode"
for d in /tmp/xq-mix/logs-*/bulk+trainbf16/*; do
  [ -f "$d/bulk.json" ] && python3 -c "import json,sys; r=json.loads(open(sys.argv[1]).read().strip().splitlines()[-1]); l=r['lat_ms']; print(sys.argv[2], sum(1 for x in l if x > 12), 'of', len(l))" "$d/bulk.json" "${d#/tmp/xq-mix/}"
done
grep -A40 "== inside the latency-critical requests" "$OUT/width.log" | cut -c1-300 | head -40
# since session 123: were the slow requests slow on the host, and there did the CPU run slow (the release spin)
# or did the launches wait in the driver (the interposer's XQ_TIME_LAUNCHES count)? bench/gpu/host-speed.py
python3 bench/gpu/host-speed.py /tmp/xq-mix 2>&1 | cut -c1-420 | tail -30
