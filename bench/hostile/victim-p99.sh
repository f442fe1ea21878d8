#!/usr/bin/env bash
# Issue 41 ("trust"), its last goal: a victim tenant's P99 under the queue flood, the session hog,
# the connection flood and the slow-body attack, each run as an ordinary local user; the node's
# operator commands timed during each attack; nothing lost. Fake libcuda (no GPU needed).
#
# Before each baseline the node is let settle (at most 5 ticks of CPU in a second, 30 s at most):
# after the HTTP floods it kept both CPUs busy for seconds. Controls: none (baseline against
# baseline: the noise), spin (one CPU of the attacker's kept busy, no attack on XQ), connidle and
# connpen (the connection flood's client against a port nobody listens on / a listener that only holds).
#
#   sudo [WAKE=1] [TASKS=50] [NODE_OPTS='-Xlog:gc:file=/tmp/gc.log'] [HTTP_CFG=threadNice=0] [NODE_NICE=5] [VICTIM_USER=xqvic] bench/hostile/victim-p99.sh [PAIRS] [ATTACK...]      (default 5 pairs; flood floodhold hog connflood slowbody none spin)
#
# Needs root (a user and a group are created: xqatk in xqt), python3 (/usr/bin/python3, or PY=, or
# the real binary behind the PATH's python3), curl,
# everything built (node/target/xq-node.jar, interpose/target/fakecuda). Starts its own node
# (port 50100, socket under /tmp/xqvp/run, hot-deploy folder /tmp/xqvp/bundles with
# socketGroup=xqt, otherwise default settings: the only way another local user reaches the process
# socket at all) and stops it at the end. The victim (root, the node's user) is
#   ./xq run --priority 2 -- xq-cuda-app --tasks 50 --kernels 4 --us 200 --period-ms 20 --latencies
# run alternately with no attack and under attack (the attacker set up first, bench/hostile/attack.py
# under setpriv as xqatk). Writes /tmp/xqvp/runs.tsv and prints the summary (bench/hostile/summary.py).
set -u
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"; cd "$ROOT"
PAIRS="${1:-5}"; shift || true
ATTACKS="${*:-flood floodhold hog connflood slowbody none spin}"
B=/tmp/xqvp; PORT=50100; SOCK=$B/run/node.sock; F=$ROOT/interpose/target/fakecuda
[ "$(id -u)" = 0 ] || { echo "victim-p99: needs root (setpriv, useradd)" >&2; exit 2; }
# the attacker's Python: a real binary another user may run (a pyenv shim under root's home is not)
PY="${PY:-/usr/bin/python3}"
[ -x "$PY" ] || PY="$(readlink -f "$(command -v python3)")"
[ -x "$PY" ] || { echo "victim-p99: no python3 for the attacker (set PY=)" >&2; exit 2; }
# a Java runtime that travelled packed (a GPU machine: .jre.tar.xz, hal-lv1-cuda/jre/make-jre.sh)
if [ ! -x .jre/bin/java ] && [ -f .jre.tar.xz ]; then
  mkdir -p .jre.tmp && tar -C .jre.tmp -xJf .jre.tar.xz && mv .jre.tmp .jre || { rm -rf .jre.tmp; echo "victim-p99: could not unpack .jre.tar.xz" >&2; exit 2; }
fi
getent group xqt >/dev/null || groupadd xqt
id xqatk >/dev/null 2>&1 || useradd -M -s /usr/sbin/nologin -G xqt xqatk
rm -rf $B; mkdir -p $B/bundles $B/log $B/a; chmod 755 $B; chmod 700 $B/bundles; chmod 777 $B/a
printf 'socketGroup=xqt\n' > $B/bundles/dev.xq.host.cfg; chmod 600 $B/bundles/dev.xq.host.cfg
# HTTP_CFG: lines for the node's dev.xq.http.cfg (an A/B of an HTTP setting, e.g. HTTP_CFG=threadNice=0)
[ -n "${HTTP_CFG:-}" ] && { printf '%s\n' "$HTTP_CFG" > $B/bundles/dev.xq.http.cfg; chmod 600 $B/bundles/dev.xq.http.cfg; }
cp bench/hostile/attack.py $B/attack.py; chmod 755 $B/attack.py
# WAKE=1: after each victim run (baseline and under attack) also bench/hostile/wake.c, how late a
# thread wakes with no node involved (a sleep's overshoot, a semaphore's post to wake), 1,000 each
if [ "${WAKE:-0}" = 1 ]; then gcc -O2 -pthread -o $B/wake bench/hostile/wake.c || exit 2; fi
wake() { [ "${WAKE:-0}" = 1 ] && echo " wake=$($B/wake 1000)"; }
JAVA="$(ls -d .jre/bin/java /usr/lib/jvm/temurin-25*/bin/java 2>/dev/null | head -1)"
# what ./xq serve runs (on 2 CPUs), without its build step, with this node's socket and port
nice -n "${NODE_NICE:-0}" "$JAVA" --enable-native-access=ALL-UNNAMED --sun-misc-unsafe-memory-access=allow -Dxq.home="$ROOT" \
  -XX:+UseParallelGC -Xmn1g $([ "$(nproc)" -le 2 ] && echo -XX:TieredStopAtLevel=1) ${NODE_OPTS:-} \
  -Dxq.host.socket=$SOCK -Dxq.http.port=$PORT -jar node/target/xq-node.jar --bundles $B/bundles serve > $B/log/node.log 2>&1 &
NODE=$!
cleanup() { [ -n "${AP:-}" ] && kill "$AP" 2>/dev/null; [ -n "${PEN:-}" ] && kill "$PEN" 2>/dev/null; kill -TERM $NODE 2>/dev/null; wait $NODE 2>/dev/null; }
trap cleanup EXIT
for i in $(seq 150); do [ -S $SOCK ] && curl -s -m1 -o /dev/null 127.0.0.1:$PORT/api/v1/queues && break; sleep 0.2; done
cpu() { [ -r /proc/$1/stat ] && awk '{print $14+$15}' /proc/$1/stat || echo 0; }  # clock ticks
settle() {  # until the node used at most 5 ticks of CPU in a second (30 s at most): seconds waited
  local i a b; for i in $(seq 30); do a=$(cpu $NODE); sleep 1; b=$(cpu $NODE); [ $((b-a)) -le 5 ] && break; done; echo $i
}
ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
# VICTIM_USER=NAME: the victim runs as that ordinary user (created in group xqt, which may use the
# node's socket), not as root, the node's user
AS=(env)  # a command word before LD_LIBRARY_PATH=... (an empty array there made the assignment the command: rc 127)
if [ -n "${VICTIM_USER:-}" ]; then
  id "$VICTIM_USER" >/dev/null 2>&1 || useradd -M -s /usr/sbin/nologin -G xqt "$VICTIM_USER"
  AS=(setpriv --reuid="$VICTIM_USER" --regid="$VICTIM_USER" --groups=xqt env)
fi
victim() {  # $1: a label; one JSON line to $B/v.json, rc to stdout
  "${AS[@]}" LD_LIBRARY_PATH=$F ./xq run --priority 2 --name victim --socket $SOCK -- $F/xq-cuda-app --tasks ${TASKS:-50} --kernels 4 \
    --us 200 --period-ms 20 --latencies > $B/v.json 2> $B/v.err
  echo $?
}
ops() {  # the operator's commands, each timed: curl GET queues, curl GET policy, ./xq queues, ./xq policy
  local t c1 c2 r1 r2
  t=$(date +%s%N); c1=$(curl -s -m 10 -o /dev/null -w '%{http_code}' 127.0.0.1:$PORT/api/v1/queues); local a=$(ms $t)
  t=$(date +%s%N); c2=$(curl -s -m 10 -o /dev/null -w '%{http_code}' 127.0.0.1:$PORT/api/v1/policy); local b=$(ms $t)
  t=$(date +%s%N); timeout 15 ./xq queues --node 127.0.0.1:$PORT > /dev/null 2>&1; r1=$?; local c=$(ms $t)
  t=$(date +%s%N); timeout 15 ./xq policy --node 127.0.0.1:$PORT > $B/policy.txt 2>&1; r2=$?; local d=$(ms $t)
  echo "$a/$c1 $b/$c2 $c/$r1 $d/$r2 $(tr '\n' ' ' < $B/policy.txt | tr -s ' ' | sed 's/ /_/g')"
}
printf 'attack\tpair\tcond\trc\tvictim_json\tops(curl_queues_ms/http curl_policy_ms/http xq_queues_ms/rc xq_policy_ms/rc policy)\tattacker\n' > $B/runs.tsv
victim >/dev/null  # warm-up, not counted
for atk in $ATTACKS; do
  # connidle: control, the connection flood's client aimed at a port nobody listens on (what the
  # client and the kernel cost without the node)
  mode=$atk
  # connpen: control, the same client aimed at a listener that is not a node and holds every
  # connection it accepts without a word (bench/hostile/pen.py, as the attacker): the client's and
  # the kernel's cost, with no node's work; what connflood costs beyond it is the node's doing
  case $atk in flood|floodhold|hog) tgt=$SOCK ;; spin|none) tgt=- ;; connidle) tgt=$((PORT+1)); mode=connflood ;;
    connpen) tgt=$((PORT+2)); mode=connflood ;; *) tgt=$PORT ;; esac
  if [ "$atk" = connpen ]; then
    cp bench/hostile/pen.py $B/pen.py; chmod 755 $B/pen.py; rm -f $B/a/pen-ready
    setpriv --reuid=xqatk --regid=xqatk --groups=xqt "$PY" $B/pen.py $tgt $B/a/pen-ready > $B/a/pen.out 2>&1 &
    PEN=$!
    for i in $(seq 50); do [ -f $B/a/pen-ready ] && break; sleep 0.1; done
  fi
  for p in $(seq "$PAIRS"); do
    st=$(settle)
    n0=$(cpu $NODE); rc=$(victim); n1=$(cpu $NODE); o=$(ops); w=$(wake)
    printf '%s\t%s\tbase\t%s\t%s\t%s\tnode_cpu_ticks=%s settled_after_s=%s%s\n' "$atk" "$p" "$rc" "$(cat $B/v.json)" "$o" $((n1-n0)) $st "$w" >> $B/runs.tsv
    rm -f $B/a/ready
    setpriv --reuid=xqatk --regid=xqatk --groups=xqt "$PY" $B/attack.py $mode $tgt $B/a/ready > $B/a/out 2>&1 &
    AP=$!
    for i in $(seq 300); do [ -f $B/a/ready ] && break; sleep 0.1; done
    sleep 1
    n0=$(cpu $NODE); a0=$(cpu $AP); rc=$(victim); n1=$(cpu $NODE); a1=$(cpu $AP); o=$(ops); w=$(wake)
    kill $AP; wait $AP 2>/dev/null; AP=
    printf '%s\t%s\tattack\t%s\t%s\t%s\t%s\n' "$atk" "$p" "$rc" "$(cat $B/v.json)" "$o" "node_cpu_ticks=$((n1-n0)) attacker_cpu_ticks=$((a1-a0)) set_up: $(cat $B/a/ready 2>/dev/null | tr -d '\n'); at_end: $(tail -1 $B/a/out)$w" >> $B/runs.tsv
    echo "$atk pair $p done" >&2
    # the node's sessions of the attacker gone before the next baseline
    for i in $(seq 100); do curl -s -m2 127.0.0.1:$PORT/api/v1/queues | grep -q '"pid"' || break; sleep 0.1; done
  done
  [ -n "${PEN:-}" ] && { kill $PEN 2>/dev/null; wait $PEN 2>/dev/null; PEN=; }
done
"$PY" bench/hostile/summary.py $B/runs.tsv
