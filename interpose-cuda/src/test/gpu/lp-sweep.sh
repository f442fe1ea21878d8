#!/bin/sh
# H100: where does the best-effort tenant's speed go? ResNet-50 training alone under the
# interposer (XQ_DEFER=1, memop completions, XQ_LOG=2 per-stream diagnostics) at several queue
# limits, then the torch pair at the limits that kept most of lp's speed. One device call:
#   sh interpose-cuda/src/test/gpu/lp-sweep.sh "$OUT"      (carry node/target .jre.tar.xz interpose-cuda/target)
set -u
out=${1:?usage: lp-sweep.sh OUTDIR}
export XQ_LOG=2 XQ_DEFER=1 XQ_COMPLETION=memop
mkdir -p "$out/logs"
run() { # name modes params...
  n=$1; m=$2; shift 2
  s=$(date +%s)
  timeout 150 ./xq bench torch-pair --device cuda seconds=10 modes=$m "$@" --json "$out/$n.json" > "$out/$n.txt" 2>&1
  echo "== $n ($*) rc=$? $(( $(date +%s) - s )) s"
  grep -E "^(lp-|standalone|native|xq:|summary|goal)" "$out/$n.txt" | cut -c1-200
  d=$(ls -dt /tmp/xq-torch-pair-* 2>/dev/null | head -1)
  [ -n "$d" ] && mkdir -p "$out/logs/$n" && cp "$d"/* "$out/logs/$n/" 2>/dev/null
  grep -h "xq: stream\|deferred" "$out/logs/$n"/* 2>/dev/null | head -12
}
run lp-default lp
run lp-thr64 lp threshold=64
run lp-thr64-w1000 lp threshold=64 window=1000
run lp-nolimit lp threshold=4096 window=0
best=$(python3 - "$out" <<'PY'
import json, sys
r = {}
for n, p in (("lp-thr64", "threshold=64"), ("lp-thr64-w1000", "threshold=64 window=1000")):
    try: r[p] = json.load(open(f"{sys.argv[1]}/{n}.json"))["summary"]["lp_xq_vs_alone"]
    except Exception: pass
print(max(r, key=r.get) if r else "threshold=64")
PY
)
echo "pair with: $best"
run pair-best-1 pair $best
run pair-best-2 pair $best
tar -C "$out" -czf "$out/logs.tgz" logs && rm -rf "$out/logs"
