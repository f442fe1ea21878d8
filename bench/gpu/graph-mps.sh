#!/bin/sh
# GPU machine (issue 40): where MPS's cost on a CUDA graph comes from. Session 84: a ResNet-50
# graph's device time was 7 % longer as the only client of a plain MPS daemon than bare, host part
# unchanged (bench/gpu/mps-alone.sh). probe/graphmps.cu times a chain of N spinning kernels on the
# device, launched one by one on a stream and replayed as a graph; this runs it bare and as the
# only client of a plain MPS daemon (no XQ), ROUNDS rounds alternated, for each CONFIG
# N:SPIN_NS[:BLOCKS[:MEM_KB]] (BLOCKS 0 or left out: one block per multiprocessor; MEM_KB > 0: each
# kernel copies that many KiB from the previous one's output instead of spinning, a memory-bound
# chain, e.g. 160:0:0:65536 past the L2, 160:0:0:4096 within it). The summary gives, per
# config and way, the median over rounds of the device time's P50, MPS over bare, and MPS's extra
# time per kernel: a constant extra per kernel says the cost is the device's dispatch of each next
# kernel, not the kernels' own running.
# Usage: [ROUNDS=3] [CONFIGS="1:2000 16:2000 160:2000 160:20000 160:2000:8"] [ITERS=400] sh bench/gpu/graph-mps.sh OUTDIR
set -u
out=${1:?usage: graph-mps.sh OUTDIR}
mkdir -p "$out"
nvcc -O2 -o "$out/graphmps" bench/gpu/probe/graphmps.cu > "$out/build.txt" 2>&1 || { cat "$out/build.txt"; exit 1; }
pipe=$(mktemp -d /tmp/xq-graph-mps-pipe.XXXXXX)
logd=$(mktemp -d /tmp/xq-graph-mps-log.XXXXXX)
configs=${CONFIGS:-1:2000 16:2000 160:2000 160:20000 160:2000:8}
for r in $(seq "${ROUNDS:-3}"); do
  for way in $( [ $((r % 2)) = 1 ] && echo "bare mps" || echo "mps bare"); do
    if [ "$way" = mps ]; then
      CUDA_MPS_PIPE_DIRECTORY=$pipe CUDA_MPS_LOG_DIRECTORY=$logd nvidia-cuda-mps-control -d || { echo "graph-mps: the MPS daemon did not start"; exit 1; }
    fi
    for c in $configs; do
      n=$(echo "$c" | cut -d: -f1) ns=$(echo "$c" | cut -d: -f2) bl=$(echo "$c" | cut -s -d: -f3) kb=$(echo "$c" | cut -s -d: -f4)
      if [ "$way" = mps ]; then
        CUDA_MPS_PIPE_DIRECTORY=$pipe "$out/graphmps" "$n" "$ns" "${bl:-0}" "${ITERS:-400}" "${kb:-0}"
      else
        "$out/graphmps" "$n" "$ns" "${bl:-0}" "${ITERS:-400}" "${kb:-0}"
      fi | sed "s/^{/{\"round\":$r,\"mps\":$( [ "$way" = mps ] && echo 1 || echo 0),/" >> "$out/runs.jsonl"
    done
    if [ "$way" = mps ]; then
      echo quit | CUDA_MPS_PIPE_DIRECTORY=$pipe nvidia-cuda-mps-control
      sleep 1
    fi
  done
done
rm -rf "$pipe"
cp -r "$logd" "$out/mps-log" 2>/dev/null; rm -rf "$logd"
python3 - "$out/runs.jsonl" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
by = {}
for r in rows:
    by.setdefault((r["n"], r["spin_ns"], r["blocks"], r.get("mem_kb", 0), r["way"], r["mps"]), []).append(r["dev_p50_us"])
for (n, ns, bl, kb, way, mps) in sorted(k for k in by if k[5] == 1):
    m = statistics.median(by[(n, ns, bl, kb, way, 1)])
    b = by.get((n, ns, bl, kb, way, 0))
    if not b:
        continue
    b = statistics.median(b)
    what = f"copy {kb:7d} KiB" if kb else f"spin {ns:6d} ns"
    print(f"n {n:4d} {what} blocks {bl:4d} {way:6s}: device P50 bare {b:9.2f} us, MPS {m:9.2f} us, "
          f"MPS/bare {m / b:.4f}, extra a kernel {(m - b) * 1000 / n:8.1f} ns ({len(by[(n, ns, bl, kb, way, 1)])} rounds)")
PY
