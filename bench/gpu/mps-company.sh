#!/bin/sh
# GPU machine (issue 40): does an idle MPS client beside it slow a launch-bound tenant's host part?
# Across sessions 81-85 the eager decoder's median with the best-effort company stopped (SIGSTOP,
# the mix scenario's pause) was ~1.1 x (0.37-1.56) its native-sharing median, while alone under
# ./xq run (xq-alone) it was as fast as standalone or faster: its latency is made on the host, and
# stopped company leaves only idle contexts beside it. Here the KIND tenant (default decode) runs
# ROUNDS times each way, the ways in turn and reversed every other round (the host's speed drifts):
#   bare      alone, no MPS, no XQ
#   mps       the only client of a plain MPS daemon (its own pipe/log directories, no limit)
#   mps+idle  the same daemon with IDLE (default 2) other clients that made a context, ran one
#             matmul and sleep (a stopped tenant's context)
#   xq        alone under ./xq run (the node and its MPS daemon, the interposer)
#   xq+idle   the same with IDLE idle processes under ./xq run --priority 1
#   xq+idle-nowatch  as xq+idle with the node's arrival watch off (arrivalWatchMicros=0 in
#             bundles/dev.xq.host.cfg for that node): the watch wakes every 50 us while
#             a latency-class stream and a lower one are registered, and reads the LC's slot
# PIN=CPUS: the KIND tenant runs under taskset -c CPUS in every way (where the scheduler places
# it on a VM's vCPUs is one suspect for runs minutes apart differing by a fifth).
# Per run: P50/P99 of the latency, its host part (until the last launch) and device part; then
# each way's medians over rounds against bare. Carry node/target, interpose/target, .jre.tar.xz.
# The run's files go into OUTDIR/comp.tgz too (the device tool brings back a limited count of files).
# Usage: [KIND=decode] [ROUNDS=2] [SECS=10] [IDLE=2] [PIN=] [WAYS="bare mps mps+idle xq xq+idle"] sh bench/gpu/mps-company.sh OUTDIR
set -u
out=${1:?usage: mps-company.sh OUTDIR}
mkdir -p "$out"
K=${KIND:-decode} S=${SECS:-10} N=${IDLE:-2}
ways=${WAYS:-bare mps mps+idle xq xq+idle}
pipe=$(mktemp -d /tmp/xq-mps-company-pipe.XXXXXX)
logd=$(mktemp -d /tmp/xq-mps-company-log.XXXXXX)
idle_py='import sys, time, torch
x = torch.randn(1024, 1024, device="cuda"); (x @ x).sum().item()
print("idle ready", flush=True); time.sleep(float(sys.argv[1]))'
# start N idle clients (PREFIX: the command before python3, e.g. ./xq run ...), wait until each said ready
idle_start() {
  pids=
  for j in $(seq "$N"); do
    "$@" python3 -c "$idle_py" 600 > "$out/idle-$j.txt" 2>&1 &
    pids="$pids $!"
  done
  for t in $(seq 60); do
    ready=$(cat "$out"/idle-*.txt 2>/dev/null | grep -c "idle ready")
    [ "$ready" -ge "$N" ] && break
    sleep 1
  done
  echo "$pids"
}
# (started in a command substitution: not this shell's children; ./xq run may not pass a signal on)
idle_stop() { for p in $1; do kill "$p" 2>/dev/null; done; pkill -f "idle ready" 2>/dev/null; sleep 2; rm -f "$out"/idle-*.txt; }
node=
node_start() { ./xq serve > "$out/node-$1.txt" 2>&1 & node=$!; sleep 6; }
node_stop() { kill "$node" 2>/dev/null; wait "$node" 2>/dev/null; node=; sleep 1; }
mps_start() { CUDA_MPS_PIPE_DIRECTORY=$pipe CUDA_MPS_LOG_DIRECTORY=$logd nvidia-cuda-mps-control -d || { echo "mps-company: the MPS daemon did not start"; exit 1; }; }
mps_stop() { echo quit | CUDA_MPS_PIPE_DIRECTORY=$pipe nvidia-cuda-mps-control; sleep 1; }
pin=
[ -n "${PIN:-}" ] && pin="taskset -c $PIN"
tenant() { # NAME [prefix...]
  n=$1; shift
  "$@" $pin python3 -u bench/torch/family/tenant.py --kind "$K" --seconds "$S" > "$out/$n.txt" 2> "$out/$n.err"
}
r=0
while [ "$r" -lt "${ROUNDS:-2}" ]; do
  r=$((r+1))
  order=$ways
  [ $((r % 2)) = 0 ] && order=$(echo "$ways" | tr ' ' '\n' | awk '{a[NR]=$0} END {for (k = NR; k >= 1; k--) printf "%s ", a[k]}')
  for w in $order; do
    name="$K-$(echo "$w" | tr '+' '_')-$r"
    echo "round $r: $w"
    case "$w" in
      bare) tenant "$name" ;;
      mps) mps_start; tenant "$name" env CUDA_MPS_PIPE_DIRECTORY="$pipe"; mps_stop ;;
      mps+idle) mps_start; p=$(idle_start env CUDA_MPS_PIPE_DIRECTORY="$pipe"); tenant "$name" env CUDA_MPS_PIPE_DIRECTORY="$pipe"; idle_stop "$p"; mps_stop ;;
      xq) node_start "$r-xq"; tenant "$name" ./xq run --priority 2 --name "$K" --; node_stop ;;
      xq+idle) node_start "$r-xqidle"; p=$(idle_start ./xq run --priority 1 --name idle --); tenant "$name" ./xq run --priority 2 --name "$K" --; idle_stop "$p"; node_stop ;;
      xq+idle-nowatch)
        mkdir -p bundles; [ -f bundles/dev.xq.host.cfg ] && { echo "mps-company: bundles/dev.xq.host.cfg exists; not touched"; exit 2; }
        echo "arrivalWatchMicros=0" > bundles/dev.xq.host.cfg
        node_start "$r-xqidlenowatch"; p=$(idle_start ./xq run --priority 1 --name idle --); tenant "$name" ./xq run --priority 2 --name "$K" --; idle_stop "$p"; node_stop
        rm -f bundles/dev.xq.host.cfg ;;
      *) echo "mps-company: way '$w' is not allowed; allowed: bare mps mps+idle xq xq+idle xq+idle-nowatch"; exit 2 ;;
    esac
  done
done
rm -rf "$pipe"
cp -r "$logd" "$out/mps-log" 2>/dev/null; rm -rf "$logd"
tar -C "$out" -czf "$out/comp.tgz" --exclude comp.tgz . 2>/dev/null
python3 - "$out" "$K" <<'PY'
import json, os, sys
d, kind = sys.argv[1], sys.argv[2]
def pct(v, q):
    v = sorted(v)
    k = (len(v) - 1) * q / 100.0
    f = int(k); c = min(f + 1, len(v) - 1)
    return v[f] + (v[c] - v[f]) * (k - f)
def med(xs):
    xs = sorted(xs)
    n = len(xs)
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2
rows = {}
for f in sorted(os.listdir(d)):
    if not (f.startswith(kind + "-") and f.endswith(".txt")):
        continue
    way, r = f[len(kind) + 1:-4].rsplit("-", 1)
    way = way.replace("_", "+")
    try:
        j = json.loads([l for l in open(os.path.join(d, f)).read().splitlines() if l.startswith("{")][-1])
        lat, host = j["lat_ms"], j["host_ms"]
    except Exception as e:
        print(f"{f}: no result ({e})")
        continue
    dev = [a - b for a, b in zip(lat, host)]
    row = (pct(lat, 50), pct(lat, 99), pct(host, 50), pct(host, 99), pct(dev, 50), pct(dev, 99))
    rows.setdefault(way, []).append(row)
    print(f"{way:9s} round {r}: n {len(lat)} lat P50/P99 {row[0]:7.3f}/{row[1]:7.3f} ms, host {row[2]:7.3f}/{row[3]:7.3f}, "
          f"device {row[4]:6.3f}/{row[5]:6.3f}")
if "bare" in rows:
    b = rows["bare"]
    for way, v in rows.items():
        print(f"{way:9s} over bare, medians of the rounds: lat P50 {med([x[0] for x in v]) / med([x[0] for x in b]):.3f}, "
              f"P99 {med([x[1] for x in v]) / med([x[1] for x in b]):.3f}; host P50 {med([x[2] for x in v]) / med([x[2] for x in b]):.3f} "
              f"({len(v)} + {len(b)} runs)")
PY
