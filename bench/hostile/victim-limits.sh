#!/usr/bin/env bash
# Issue 41: which limits the victim's queue runs with, alone and beside an attack, and its P99
# over more tasks than victim-p99.sh's 50. The same node, victim and attacker as victim-p99.sh
# (read it first); while each victim runs, the node's /api/v1/queues is read every 100 ms and the
# victim queue's `limits` (configured, alone, on_top) counted.
#
#   sudo bench/hostile/victim-limits.sh [TASKS] [ATTACK]     (default 300 tasks, floodhold)
#
# Prints, per run (alone, then beside the attack): P50 / P99 ms, tasks, and how often each
# `limits` value was seen. Writes /tmp/xqvl (port 50101: it can run beside victim-p99.sh's node,
# though not usefully at the same time); stops its node at the end.
set -u
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"; cd "$ROOT"
TASKS="${1:-300}"; ATK="${2:-floodhold}"
B=/tmp/xqvl; PORT=50101; SOCK=$B/run/node.sock; F=$ROOT/interpose/target/fakecuda
[ "$(id -u)" = 0 ] || { echo "victim-limits: needs root (setpriv, useradd)" >&2; exit 2; }
getent group xqt >/dev/null || groupadd xqt
id xqatk >/dev/null 2>&1 || useradd -M -s /usr/sbin/nologin -G xqt xqatk
rm -rf $B; mkdir -p $B/bundles $B/log $B/a; chmod 755 $B; chmod 700 $B/bundles; chmod 777 $B/a
printf 'socketGroup=xqt\n' > $B/bundles/dev.xq.host.cfg; chmod 600 $B/bundles/dev.xq.host.cfg
cp bench/hostile/attack.py $B/attack.py; chmod 755 $B/attack.py
JAVA="$(ls -d .jre/bin/java /usr/lib/jvm/temurin-25*/bin/java 2>/dev/null | head -1)"
"$JAVA" --enable-native-access=ALL-UNNAMED --sun-misc-unsafe-memory-access=allow -Dxq.home="$ROOT" \
  -XX:+UseParallelGC -Xmn1g $([ "$(nproc)" -le 2 ] && echo -XX:TieredStopAtLevel=1) \
  -Dxq.host.socket=$SOCK -Dxq.http.port=$PORT -jar node/target/xq-node.jar --bundles $B/bundles serve > $B/log/node.log 2>&1 &
NODE=$!
cleanup() { [ -n "${AP:-}" ] && kill "$AP" 2>/dev/null; kill -TERM $NODE 2>/dev/null; wait $NODE 2>/dev/null; }
trap cleanup EXIT
for i in $(seq 150); do [ -S $SOCK ] && curl -s -m1 -o /dev/null 127.0.0.1:$PORT/api/v1/queues && break; sleep 0.2; done
run() {  # $1: label
  LD_LIBRARY_PATH=$F ./xq run --priority 2 --name victim --socket $SOCK -- $F/xq-cuda-app --tasks "$TASKS" --kernels 4 \
    --us 200 --period-ms 20 --latencies > $B/v.json 2> $B/v.err &
  local V=$!
  : > $B/limits.txt
  while kill -0 $V 2>/dev/null; do
    curl -s -m 2 127.0.0.1:$PORT/api/v1/queues | python3 -c '
import json, sys
try:
    d = json.load(sys.stdin)
except Exception:
    sys.exit(0)
qs = d if isinstance(d, list) else d.get("queues", [])
for q in qs:
    if str(q.get("name", "")).startswith("victim"):
        print(q.get("limits"))' >> $B/limits.txt
    sleep 0.1
  done
  wait $V
  python3 - "$1" $B/v.json $B/limits.txt <<'EOF'
import collections, json, sys
j = json.load(open(sys.argv[2]))
seen = collections.Counter(l.strip() for l in open(sys.argv[3]) if l.strip())
print(f"{sys.argv[1]}: P50 {j['p50_ms']:.3f} ms, P99 {j['p99_ms']:.3f} ms, {j['tasks']} tasks; victim limits seen: {dict(seen)}")
EOF
}
cd "$ROOT"
LD_LIBRARY_PATH=$F ./xq run --priority 2 --name victim --socket $SOCK -- $F/xq-cuda-app --tasks 20 --kernels 4 --us 200 \
  --period-ms 20 --latencies > /dev/null 2>&1  # warm-up
run alone
setpriv --reuid=xqatk --regid=xqatk --groups=xqt /usr/bin/python3 $B/attack.py $ATK $SOCK $B/a/ready > $B/a/out 2>&1 &
AP=$!
for i in $(seq 300); do [ -f $B/a/ready ] && break; sleep 0.1; done
sleep 1
run "beside $ATK ($(tr -d '\n' < $B/a/ready 2>/dev/null))"
