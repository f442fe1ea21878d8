#!/bin/sh
# The H100 check of XQ_DEFER=1 (deferred launches), one device call (about 8 minutes):
#   run (repo root, carry node/target .jre.tar.xz interpose/target):
#   sh interpose/src/test/gpu/defer-check.sh "$OUT"
# 1. correctness: torch_smoke.py (training, a captured graph, a priority stream, Triton) bare and under
#    the interposer with XQ_DEFER=1 and a node holding the gates, losses compared;
# 2. torch-pair modes=lp and modes=pair with XQ_DEFER=1, events and memop; XQ_LOG=2, so each
#    process's log (copied to OUT/logs) says how many launches were deferred and which driver
#    calls waited for them.
set -u
# the nodes' sockets in a directory of our own: the interposer refuses a node whose directory others may write (/tmp)
XQ_SOCKDIR=${XQ_SOCKDIR:-$(mktemp -d)}
out=${1:?usage: defer-check.sh OUTDIR}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out/logs"
lib=$(pwd)/interpose/target/libxq-cuda.so
export PYTHONUNBUFFERED=1
echo "== torch_smoke bare"
timeout 120 python3 "$here/torch_smoke.py" 50 2000 > "$out/smoke-bare.json" 2>&1; tail -1 "$out/smoke-bare.json"
echo "== torch_smoke, XQ_DEFER=1, node holding the gates 1 s, limits 16/8/300 us"
python3 "$here/mini_node.py" $XQ_SOCKDIR/nd.sock "$out/node-defer.json" --hold 1 --threshold 16 --batch 8 --window 300 --exit-when-idle 1 &
sleep 0.5
XQ_DEFER=1 XQ_LOG=2 LD_PRELOAD=$lib XQ_SOCKET=$XQ_SOCKDIR/nd.sock timeout 120 python3 "$here/torch_smoke.py" 50 2000 \
  > "$out/smoke-defer.json" 2> "$out/smoke-defer.err"; echo "rc=$?"; wait
tail -1 "$out/smoke-defer.json"; cat "$out/smoke-defer.err" | head -20
python3 - "$out/smoke-bare.json" "$out/smoke-defer.json" <<'PY'
import json, sys
a, b = (json.loads(open(f).read().strip().splitlines()[-1]) for f in sys.argv[1:3])
for k in ("first_loss", "last_loss", "graph_ok", "tiny_ok", "hi_ok", "triton_ok"):
    print("%-10s bare %-12s defer %-12s %s" % (k, a.get(k), b.get(k), "same" if a.get(k) == b.get(k) else "DIFFERENT"))
PY
export XQ_LOG=2 XQ_DEFER=1
for c in lp-defer:lp: lp-defer-memop:lp:memop pair-defer-memop:pair:memop pair-defer:pair:; do
  n=${c%%:*}; r=${c#*:}; m=${r%%:*}; x=${r#*:}
  if [ "$x" = memop ]; then export XQ_COMPLETION=memop; else unset XQ_COMPLETION; fi
  s=$(date +%s)
  timeout 150 ./xq bench torch-pair --device cuda seconds=10 modes=$m --json "$out/$n.json" > "$out/$n.txt" 2>&1
  echo "== $n rc=$? $(( $(date +%s) - s )) s"
  grep -E "^(lp-|standalone|native|xq:|summary|goal)" "$out/$n.txt"
  d=$(ls -dt /tmp/xq-torch-pair-* 2>/dev/null | head -1)
  [ -n "$d" ] && mkdir -p "$out/logs/$n" && cp "$d"/* "$out/logs/$n/" 2>/dev/null
  grep -h "deferred\|waited\|failed" "$out/logs/$n"/* 2>/dev/null | head -12
done
