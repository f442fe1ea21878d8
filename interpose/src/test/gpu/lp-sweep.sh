#!/bin/sh
# H100: torch-pair runs under the interposer's defaults with XQ_LOG=2 (per-stream diagnostics:
# launches, estimates, refusals, dry time, deferred launches and which calls waited for them);
# the plan: lines "name modes [XQ_VAR=value ...] params..." on stdin (or SWEEP=default); SECS: seconds
# measured per mode (10; a plan line's own seconds=S wins); TMO: seconds a run may take (150: enough for modes=pair at SECS=20,
# not for modes=all). SMOKE=1 first compares
# torch_smoke.py (training, a captured graph, a priority stream, Triton) bare and under the
# interposer with a node holding the gates. One device call:
#   sh interpose/src/test/gpu/lp-sweep.sh "$OUT"      (carry node/target .jre.tar.xz interpose/target)
set -u
# the nodes' sockets in a directory of our own: the interposer refuses a node whose directory others may write (/tmp)
XQ_SOCKDIR=${XQ_SOCKDIR:-$(mktemp -d)}
out=${1:?usage: lp-sweep.sh OUTDIR}
export XQ_LOG=2 PYTHONUNBUFFERED=1
mkdir -p "$out/logs"
if [ "${SMOKE:-}" = 1 ]; then
  g=interpose/src/test/gpu
  timeout 120 python3 $g/torch_smoke.py 50 2000 > "$out/logs/smoke-bare.json" 2>&1
  python3 $g/mini_node.py $XQ_SOCKDIR/nd.sock "$out/logs/smoke-node.json" --hold 1 --threshold 16 --batch 8 --window 300 --exit-when-idle 1 &
  sleep 0.5
  LD_PRELOAD=$(pwd)/interpose/target/libxq-cuda.so XQ_SOCKET=$XQ_SOCKDIR/nd.sock timeout 120 python3 $g/torch_smoke.py 50 2000 \
    > "$out/logs/smoke-xq.json" 2> "$out/logs/smoke-xq.err"; echo "smoke rc=$?"; wait
  head -5 "$out/logs/smoke-xq.err"
  python3 - "$out/logs/smoke-bare.json" "$out/logs/smoke-xq.json" <<'PY'
import json, sys
a, b = (json.loads(open(f).read().strip().splitlines()[-1]) for f in sys.argv[1:3])
for k in ("first_loss", "last_loss", "graph_ok", "tiny_ok", "hi_ok", "triton_ok"):
    print("smoke %-10s bare %-12s xq %-12s %s" % (k, a.get(k), b.get(k), "same" if a.get(k) == b.get(k) else "DIFFERENT"))
PY
fi
run() { # name modes [VAR=value ...] params...: XQ_* variables are set for that run (the tenants inherit them)
  n=$1; m=$2; shift 2
  s=$(date +%s)
  vars=
  while [ $# -gt 0 ] && case $1 in XQ_*=*) true;; *) false;; esac; do vars="$vars $1"; shift; done
  secs="seconds=${SECS:-10}"; case " $* " in *" seconds="*) secs=;; esac # a plan line's own seconds= wins
  env $vars timeout ${TMO:-150} ./xq bench torch-pair --device cuda $secs modes=$m "$@" --json "$out/$n.json" > "$out/$n.txt" 2>&1
  echo "== $n ($vars $*) rc=$? $(( $(date +%s) - s )) s"
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
# results.tgz after every run: a call cut short by its time limit still brings back what ran
pack() { tar -C "$out" -czf "$out/results.tgz" plan logs $(cd "$out" && ls *.json *.txt 2>/dev/null); }
while read -r line; do [ -n "$line" ] && { run $line < /dev/null; pack; }; done < "$out/plan"
for f in "$out"/*.json; do [ -f "$f" ] && cat "$f" >> "$out/all.jsonl" && echo >> "$out/all.jsonl"; done
pack && rm -rf "$out/logs" "$out"/*.json "$out"/*.txt
