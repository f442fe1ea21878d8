#!/bin/sh
# H100: where does the best-effort tenant's speed go? ResNet-50 training alone under the
# interposer (XQ_DEFER=1, memop completions, XQ_LOG=2 per-stream diagnostics) at several queue
# limits and the torch pair (the plan: lines "name modes params..." on stdin). One device call:
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
  [ -n "$d" ] && mkdir -p "$out/logs/$n" && cp -r "$d"/. "$out/logs/$n/" 2>/dev/null
  grep -rh "xq: stream\|deferred" "$out/logs/$n" 2>/dev/null | cut -c1-220 | head -16
}
# what to run: "name modes params..." lines on stdin, or the default sweep
if [ -t 0 ] || [ "${SWEEP:-}" = default ]; then
  printf '%s\n' "lp-default lp" "lp-thr64 lp threshold=64" "pair-thr64 pair threshold=64" "pair-thr64-w500 pair threshold=64 window=500"
else
  cat
fi > "$out/plan"
while read -r line; do [ -n "$line" ] && run $line < /dev/null; done < "$out/plan"
for f in "$out"/*.json; do [ -f "$f" ] && cat "$f" >> "$out/all.jsonl" && echo >> "$out/all.jsonl"; done
tar -C "$out" -czf "$out/results.tgz" logs $(cd "$out" && ls *.json *.txt 2>/dev/null) && rm -rf "$out/logs" "$out"/*.json "$out"/*.txt
