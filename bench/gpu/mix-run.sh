#!/bin/sh
# GPU machine: the workload family (./xq bench mix --device cuda) and the node-kill check with MPS.
# Carry: node/target, interpose/target, .jre.tar.xz. Usage (one device call):
#   MIXES=all SECS=8 MODES=standalone,native,xq sh bench/gpu/mix-run.sh "$OUT"
# (MIXES is ';'-separated, one ./xq bench call each; an entry custom=bulk+gemm+trainbf16 runs a mix of one's own)
# (PAUSE=S: the paired reading, the BE tenants stopped S s of every 2 S; bench/README.md)
# (RUNS=N: each entry's mixes N times in one ./xq bench call, judged run by run and run after run)
# (MPS_PIPE=DIR: the CUDA_MPS_PIPE_DIRECTORY of a running MPS control daemon, for MODES with mps: plain MPS clients, no XQ)
# (ORDER=alternate, the default: MODES as listed for odd-numbered entries of MIXES, reversed for even-numbered
#  ones (native,xq,xq-alt then xq-alt,xq,native; standalone and xq-alone first either way, themselves swapped), and within an entry of
#  several mixes the bench's order=alternate: the node's first xq mode reacted slower than the second in session
#  74's A/B calls, and the host's speed drifts over minutes, so a reading across modes always taken one way round
#  (native first, as until session 76) reads that drift as much as XQ;
#  ORDER=listed: the modes in the order MODES lists them, after standalone/xq-alone, every entry;
#  ORDER=fixed: the bench's fixed order, standalone, xq-alone, native, xq, ...)
# Every table, JSON file and tenant log comes back in $OUT/mix-results.tgz. KILLCHECK=1: the node
# killed beside one MPS client; KILLCHECK=2: killed while it narrows one (a decoder beside GEMMs). Where nvidia-smi is, the GPU's
# clocks, power, temperature, utilization and throttle reasons are sampled every 100 ms during each run
# (clocks-N.csv) and split by mix and mode after the runs by bench/gpu/clocks-by-mode.py (clocks-N.txt);
# the host CPU's speed likewise (bench/gpu/cpu-tick.py, ticks-N.txt; ticks-by-mode-N.txt), and where the
# tenants' and the node's threads ran on the host (bench/gpu/proc-watch.py, procs-N.txt.gz; by mode and
# second, procs-report-N.txt).
set -u
out=${1:?usage: mix-run.sh OUTDIR}
res=/tmp/xq-mix
# a machine may keep /tmp between calls: an earlier call's logs must not mix with this one's
rm -rf "$res"
mkdir -p "$out" "$res"
# XQ_LOG=2 or more (the traces these runs are read with) put every launch on the interposer's full,
# timed path: ~0.8 us a launch more on the H200, ~0.8 ms of an eager decoder's request, which no
# user's process pays; launches nothing holds keep the lean path unless XQ_LOG_LEAN=0 is given (session 83)
export XQ_LOG_LEAN="${XQ_LOG_LEAN:-1}"
export PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
nvidia-smi --query-gpu=name,driver_version,compute_mode,mig.mode.current --format=csv > "$res/gpu.txt" 2>&1; cat "$res/gpu.txt"
pack() { tar -C "$res" -czf "$out/mix-results.tgz" . 2>/dev/null; }
# this machine's offset east of UTC in seconds: nvidia-smi's timestamps are local time, the mode lines epoch ms
tzoff() {
  z=$(date +%z); sign=1
  case "$z" in -*) sign=-1 ;; esac
  h=$(echo "$z" | cut -c2-3); mi=$(echo "$z" | cut -c4-5)
  echo $(( sign * ( ${h#0} * 3600 + ${mi#0} * 60 ) ))
}
smi=0; command -v nvidia-smi > /dev/null 2>&1 && smi=1
i=0
for m in $(echo "${MIXES:-all}" | tr ';' ' '); do
  i=$((i+1))
  s=$(date +%s)
  sampler=
  if [ "$smi" = 1 ]; then
    nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,utilization.gpu,clocks_throttle_reasons.active \
      --format=csv,noheader,nounits -lms 100 > "$res/clocks-$i.csv" 2>&1 &
    sampler=$!
  fi
  # the host's CPU speed beside the run (a small fixed pure-Python work every 100 ms): eager
  # tenants' latency is made on the host, whose speed moves in phases of seconds on a cloud machine
  python3 bench/gpu/cpu-tick.py 0 100 80000 > "$res/ticks-$i.txt" 2>/dev/null &
  ticker=$!
  # where the tenants' and the node's threads ran on the host, every 500 ms (bench/gpu/proc-watch.py)
  python3 bench/gpu/proc-watch.py 500 > "$res/procs-$i.txt" 2>/dev/null &
  watcher=$!
  # custom=KIND[:P]+KIND[:P]...: a mix of one's own (./xq bench mix custom=...), run alone
  case "$m" in
    custom=*) sel="mixes=none $m" ;;
    *) sel="mixes=$m" ;;
  esac
  modes=${MODES:-standalone,native,xq}
  order=${ORDER:-alternate}
  if [ "$order" = alternate ]; then
    if [ $((i % 2)) = 0 ]; then
      # every mode reversed (the bench still runs standalone and xq-alone first, as listed)
      modes=$(echo "$modes" | tr ',' '\n' | awk '{a[NR]=$0} END {for (k = NR; k >= 1; k--) printf "%s%s", a[k], (k > 1 ? "," : "")}')
    fi
    # one mix an entry: listed, as just ordered; several (MIXES=all): the bench alternates them itself
    case "$m" in
      all|*,*) ;;
      *) order=listed ;;
    esac
  fi
  echo "== mix $i ($m): modes $modes${order:+, order $order}"
  timeout "${TMO:-560}" ./xq bench mix --device cuda seconds="${SECS:-8}" $sel modes="$modes" ${ALT:+alt="$ALT"} ${PAUSE:+pause="$PAUSE"} ${order:+order="$order"} ${RUNS:+runs="$RUNS"} ${MPS_PIPE:+mps_pipe="$MPS_PIPE"} \
    --json "$res/mix-$i.json" > "$res/mix-$i.txt" 2>&1
  rc=$?
  if [ -n "$sampler" ]; then
    kill "$sampler" 2>/dev/null; wait "$sampler" 2>/dev/null
  fi
  kill "$ticker" 2>/dev/null; wait "$ticker" 2>/dev/null
  kill "$watcher" 2>/dev/null; wait "$watcher" 2>/dev/null
  # each mode's seconds apart (the bench prints "mix M: MODE started at MS" and "ended at MS")
  grep -E '^mix .*: [a-z-]+ (started|ended) at [0-9]+$' "$res/mix-$i.txt" | awk '
    / started at / {mode = $(NF-3); s[mode] = $NF}
    / ended at / {mode = $(NF-3); if (mode in s) print mode, s[mode], $NF}' | while read -r md from to; do
    echo "== $md"
    python3 bench/gpu/proc-watch.py --report "$res/procs-$i.txt" --from "$from" --to "$to" 2>&1
  done > "$res/procs-report-$i.txt"
  gzip -f "$res/procs-$i.txt"
  echo "== mix run $i ($m) rc=$rc $(( $(date +%s) - s )) s"
  grep -v '^  \[' "$res/mix-$i.txt" | tail -40
  # the node's trace (-Dxq.trace.wideBeats=true) in numbers; the lines themselves are in mix-N.txt
  echo "trace: cuts $(grep 'weighed parts' "$res/mix-$i.txt" | grep -vc 'turns on all'), turns passed $(grep -c 'turns on all' "$res/mix-$i.txt"), taken for starving $(grep -c 'completed nothing' "$res/mix-$i.txt"), guards dropped for starving $(grep -c 'arrival guard: q.*unguarded for' "$res/mix-$i.txt")"
  # the node's reaction to arrivals that held others, as each together-mode ended (its last trace line)
  for md in $(echo "${MODES:-standalone,native,xq}" | tr ',' ' '); do
    case "$md" in standalone|native) continue ;; esac
    r=$(awk -v s=": $md started" -v e=": $md ended" 'index($0, s) {on=1} on && /arrival reaction: / {l=$0} index($0, e) {on=0} END {print l}' "$res/mix-$i.txt")
    [ -n "$r" ] && echo "trace $md: ${r#xq: }"
  done
  d=$(ls -dt /tmp/xq-mix-* 2>/dev/null | head -1)
  [ -n "$d" ] && mkdir -p "$res/logs-$i" && cp -r "$d"/. "$res/logs-$i/" 2>/dev/null
  pack
done
runs=$i
i=0
while [ "$i" -lt "$runs" ]; do
  i=$((i+1))
  [ -f "$res/ticks-$i.txt" ] || continue
  python3 bench/gpu/ticks-by-mode.py "$res/mix-$i.txt" "$res/ticks-$i.txt" > "$res/ticks-by-mode-$i.txt" 2>&1
  echo "== host CPU by mode, run $i"; cat "$res/ticks-by-mode-$i.txt"
done
# every mix of the call in one table, XQ beside plain MPS where the mps mode ran (bench/gpu/family-table.py)
echo "== the call's mixes"; python3 bench/gpu/family-table.py "$res" 2>&1 | tail -40
# where each BE tenant's time went in the XQ modes (kernels whole, narrowed, idle; bench/gpu/be-time.py)
echo "== best-effort time"; for dir in "$res"/logs-*/*/xq "$res"/logs-*/*/xq-alt; do [ -d "$dir" ] && python3 bench/gpu/be-time.py "$dir" 2>&1 | sed "s|$res/||"; done | tail -60
# best-effort tenants held while an LC tenant worked where native sharing let them run (bench/gpu/be-beside.py)
echo "== best-effort beside the latency-critical tenants, held where native let them run"; python3 bench/gpu/be-beside.py --held "$res" 2>&1 | sed "s|$res/*||" | cut -c1-220 | tail -40
# what the node decided for each tenant meanwhile: held, narrowed, its share (bench/gpu/node-queues.py)
echo "== the node's decisions per tenant"; python3 bench/gpu/node-queues.py "$res" 2>&1 | tail -150
# what the node had each BE queue do inside the LC tenants' slow requests and inside the rest (bench/gpu/lc-inside.py)
echo "== inside the latency-critical requests, slow ones apart"; python3 bench/gpu/lc-inside.py "$res" 2>&1 | cut -c1-300 | tail -80
# whether the LC tenants' slow requests were slow on their hosts, and there whether the CPU ran slow or the
# launches waited in the driver (bench/gpu/host-speed.py)
echo "== latency-critical hosts: slow requests, the CPU's speed, the driver's launch calls"; python3 bench/gpu/host-speed.py "$res" 2>&1 | cut -c1-420 | tail -60
# how far the alone half disagrees with itself at P99 (even stops against odd ones): the verdicts' noise (bench/gpu/lc-aa.py)
echo "== the paired verdicts' own noise (alone against alone)"; python3 bench/gpu/lc-aa.py "$res" 2>&1 | grep -v '^/' | tail -20
# an A/B call (ALT set): its two modes side by side, with or without native (bench/gpu/ab-modes.py)
[ -n "${ALT:-}" ] && { echo "== the call's A/B"; python3 bench/gpu/ab-modes.py "$res" 2>&1 | grep -E '^(==|  [^ []+ )' | tail -80; }
# and how many readings it moved, the LC's device and host parts apart (bench/gpu/ab-parts.py)
[ -n "${ALT:-}" ] && { echo "== the call's A/B by parts"; python3 bench/gpu/ab-parts.py "$res" 2>&1 | tail -4; }
if [ "$smi" = 1 ] && command -v python3 > /dev/null 2>&1; then
  tz=$(tzoff)
  i=0
  while [ "$i" -lt "$runs" ]; do
    i=$((i+1))
    [ -f "$res/clocks-$i.csv" ] || continue
    python3 bench/gpu/clocks-by-mode.py --tz-offset-s "$tz" "$res/mix-$i.txt" "$res/clocks-$i.csv" > "$res/clocks-$i.txt" 2>&1
    echo "== clocks by mode, run $i"; cat "$res/clocks-$i.txt"
  done
  pack
fi
if [ "${KILLCHECK:-0}" = 1 ]; then
  # a node killed hard while an MPS client runs: the client finishes, the daemon is gone after it
  s=$(date +%s)
  ./xq serve > "$res/kill-node.txt" 2>&1 &
  node=$!
  sleep 6
  ./xq run --priority 1 --name killcheck -- python3 -u bench/torch/family/tenant.py --kind gemm --seconds 8 > "$res/kill-tenant.txt" 2>&1 &
  t=$!
  sleep 7
  echo "before kill: $(pgrep -f nvidia-cuda-mps | wc -l) mps processes"; ps -eo pid,args | grep -i "[m]ps" | cut -c1-150
  kill -9 $node
  wait $t; echo "tenant rc=$? after the node was killed: $(tail -c 300 "$res/kill-tenant.txt")"
  sleep 4
  echo "after the tenant: $(pgrep -f nvidia-cuda-mps-control | wc -l) mps control processes left ($(( $(date +%s) - s )) s)"
  ps -eo pid,args | grep -i "[m]ps" | cut -c1-150
  pack
fi
if [ "${KILLCHECK:-0}" = 2 ]; then
  # the node killed hard while it narrows an MPS client: a latency-critical decoder (priority 2) and
  # GEMMs (priority 1, narrowed launch by launch while the decoder works) both finish, and the
  # daemon is gone after them
  s=$(date +%s)
  XQ_LOG=2 ./xq serve > "$res/kill2-node.txt" 2>&1 &
  node=$!
  sleep 6
  XQ_LOG=2 ./xq run --priority 2 --name kill-lc -- python3 -u bench/torch/family/tenant.py --kind decode --seconds 10 > "$res/kill2-lc.txt" 2>&1 &
  lc=$!
  XQ_LOG=2 ./xq run --priority 1 --name kill-be -- python3 -u bench/torch/family/tenant.py --kind gemm --seconds 10 > "$res/kill2-be.txt" 2>&1 &
  be=$!
  sleep 12
  echo "before kill: $(pgrep -f nvidia-cuda-mps | wc -l) mps processes; $(curl -s -m 2 127.0.0.1:50000/api/v1/queues | tr ',' '\n' | grep -c '"name"') queues"
  kill -9 $node
  wait $lc; r1=$?; wait $be; r2=$?
  echo "after the node was killed: decoder rc=$r1, gemm rc=$r2"
  grep -h "node lost\|narrowed (green\|checksum\|it_per_s\|p99_ms" "$res/kill2-lc.txt" "$res/kill2-be.txt" | cut -c1-200 | head -12
  sleep 4
  echo "after the tenants: $(pgrep -f nvidia-cuda-mps-control | wc -l) mps control processes left ($(( $(date +%s) - s )) s)"
  ps -eo pid,args | grep -i "[m]ps" | cut -c1-150
  pack
fi
