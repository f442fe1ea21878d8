#!/bin/sh
# GPU machine (issue 40): the interposer's cost on a launch-bound tenant alone: the eager decoder
# (~950 launches a request) bare, under ./xq run without MPS (XQ_MPS=0: the interposer alone) and
# under ./xq run as it comes (the interposer and the node's MPS server), alternated A B C A B C,
# each run its own process. Carry node/target, interpose/target, .jre.tar.xz.
# ROUNDS=N (default 2): more rounds; the summary's ratios are per round (each mode against the bare run
# of its own round, seconds apart) and their median: the host's CPU speed moves in phases of seconds
# on the H200 test machine (docs/performance.md, "The host under the decoder"), so runs minutes apart
# compare the host as much as the interposer.
# PEER=1: a fourth mode, ./xq run beside an idle best-effort process under ./xq run (xqpeer).
# PLAINMPS=1: a mode without the interposer, a plain client of the node's MPS server (mpsonly:
# CUDA_MPS_PIPE_DIRECTORY set by hand): with xqnomps (the interposer without MPS) it takes apart
# what the decoder's median pays under ./xq run (1.24 x bare in session 64; a lone decoder's P50
# 1.31 x native's in the mixes of sessions 72-75, docs/performance.md, session 75).
# STOPPEER=1: three more modes, each beside a bf16 trainer that ran 8 s and was then stopped (SIGSTOP
# to its process group), as a mix's paired reading leaves its best-effort tenants: barestop (both
# bare, native contexts), xqstop (both under ./xq run, the trainer at priority 1) and mpsstop (the
# decoder under ./xq run, the trainer a plain client of the node's MPS server): whether a stopped
# company costs the decoder under XQ (its alone-phase P50 in the mixes, 1.31 x native's, session 75).
# KIND=graph (default decode): another of tenant.py's latency-critical kinds (graph: CUDA-graph
# inference, whose standalone latency moves by less than 2 % within a run).
# On the device machine, give it a folder outside $OUT and pack that into $OUT afterwards (it
# writes 3-4 files a round; a call returns only a few files). Outside the bench, ./xq run needs both
# interposers built or carried (interpose/target/libxq-cuda.so and libxq-hip.so).
# KIND=trainbf16 (or another best-effort kind: train32, gemm, triton) with PRIO=1: a best-effort
# process alone (never held: no company), judged by its iterations per second (rate / bare).
# Usage: SECS=8 [ROUNDS=6] [KIND=decode] [PRIO=2] sh bench/gpu/overhead-decode.sh "$OUT"
set -u
out=${1:?usage: overhead-decode.sh OUTDIR}
mkdir -p "$out"
S=${SECS:-8}
K=${KIND:-decode}
P=${PRIO:-2}
./xq serve > "$out/overhead-node.txt" 2>&1 &
node=$!
sleep 6
# the node's MPS pipe directory: its log line, else where the node puts it (next to its socket)
pipe=$(grep -o 'pipe /[^ ;,]*' "$out/overhead-node.txt" | head -1 | cut -d' ' -f2)
for d in "$pipe" "${XDG_RUNTIME_DIR:-/nonexistent}/xq/mps" /run/xq/mps "/tmp/xq-$(id -u)/mps"; do
  if [ -n "$d" ] && [ -e "$d/control" ]; then pipe=$d; break; fi
  pipe=
done
[ "${PLAINMPS:-0}" = 1 ] && [ -z "$pipe" ] && echo "overhead-decode: PLAINMPS=1 but no MPS pipe directory of the node found; mode mpsonly left out" >&2
for round in $(seq "${ROUNDS:-2}"); do
  python3 -u bench/torch/family/tenant.py --kind "$K" --seconds "$S" > "$out/bare-$round.txt" 2> "$out/bare-$round.err"
  XQ_MPS=0 ./xq run --priority "$P" --name "$K" -- python3 -u bench/torch/family/tenant.py --kind "$K" --seconds "$S" \
    > "$out/xqnomps-$round.txt" 2> "$out/xqnomps-$round.err"
  ./xq run --priority "$P" --name "$K" -- python3 -u bench/torch/family/tenant.py --kind "$K" --seconds "$S" \
    > "$out/xq-$round.txt" 2> "$out/xq-$round.err"
  if [ "${PLAINMPS:-0}" = 1 ] && [ -n "$pipe" ]; then
    CUDA_MPS_PIPE_DIRECTORY="$pipe" python3 -u bench/torch/family/tenant.py --kind "$K" --seconds "$S" \
      > "$out/mpsonly-$round.txt" 2> "$out/mpsonly-$round.err"
  fi
  if [ "${STOPPEER:-0}" = 1 ]; then
    for sm in barestop xqstop mpsstop; do
      [ "$sm" = mpsstop ] && [ -z "$pipe" ] && continue
      case "$sm" in
        barestop) setsid python3 -u bench/torch/family/tenant.py --kind trainbf16 --seconds 120 > "$out/peer-$sm-$round.txt" 2>&1 & ;;
        xqstop) setsid ./xq run --priority 1 --name trainbf16 -- python3 -u bench/torch/family/tenant.py --kind trainbf16 --seconds 120 \
                  > "$out/peer-$sm-$round.txt" 2>&1 & ;;
        mpsstop) CUDA_MPS_PIPE_DIRECTORY="$pipe" setsid python3 -u bench/torch/family/tenant.py --kind trainbf16 --seconds 120 \
                  > "$out/peer-$sm-$round.txt" 2>&1 & ;;
      esac
      peer=$!
      sleep 10
      kill -STOP -- "-$peer" 2>/dev/null
      sleep 1
      if [ "$sm" = barestop ]; then
        python3 -u bench/torch/family/tenant.py --kind "$K" --seconds "$S" > "$out/$sm-$round.txt" 2> "$out/$sm-$round.err"
      else
        ./xq run --priority "$P" --name "$K" -- python3 -u bench/torch/family/tenant.py --kind "$K" --seconds "$S" \
          > "$out/$sm-$round.txt" 2> "$out/$sm-$round.err"
      fi
      kill -CONT -- "-$peer" 2>/dev/null; kill -- "-$peer" 2>/dev/null; wait $peer 2>/dev/null
      sleep 2
    done
  fi
  if [ "${PEER:-0}" = 1 ]; then
    # the same beside an idle best-effort process under ./xq run (a context on the device, no work):
    # what another MPS client costs by being there
    ./xq run --priority 1 --name idle -- python3 -c "import torch, time; torch.zeros(1, device='cuda'); torch.cuda.synchronize(); time.sleep($S + 12)" \
      > "$out/peer-$round.txt" 2>&1 &
    peer=$!
    sleep 6
    ./xq run --priority "$P" --name "$K" -- python3 -u bench/torch/family/tenant.py --kind "$K" --seconds "$S" \
      > "$out/xqpeer-$round.txt" 2> "$out/xqpeer-$round.err"
    kill $peer 2>/dev/null; wait $peer 2>/dev/null
  fi
done
kill $node; wait $node 2>/dev/null
for f in "$out"/bare-*.txt "$out"/xqnomps-*.txt "$out"/xq-*.txt "$out"/mpsonly-*.txt "$out"/xqpeer-*.txt \
    "$out"/barestop-*.txt "$out"/xqstop-*.txt "$out"/mpsstop-*.txt; do
  [ -e "$f" ] || continue
  echo "$(basename "$f"): $(grep -o '"p50_ms": *[0-9.]*\|"p99_ms": *[0-9.]*\|"requests": *[0-9]*\|"it_per_s": *[0-9.]*' "$f" | tr '\n' ' ')"
done
python3 - "$out" "${ROUNDS:-2}" <<'PY'
import json, os, statistics, sys
d, n = sys.argv[1], int(sys.argv[2])
def get(name):
    try:
        lines = [l for l in open(os.path.join(d, name)).read().splitlines() if l.startswith("{")]
        j = json.loads(lines[-1])
        if "p50_ms" not in j:  # a best-effort kind: its rate, as (rate, rate), higher is better
            return j["it_per_s"], j["it_per_s"]
        return j["p50_ms"], j["p99_ms"]
    except Exception:
        return None
for mode in ("xqnomps", "xq", "mpsonly", "xqpeer", "barestop", "xqstop", "mpsstop"):
    r50, r99 = [], []
    for i in range(1, n + 1):
        b, x = get(f"bare-{i}.txt"), get(f"{mode}-{i}.txt")
        if b and x:
            r50.append(x[0] / b[0]); r99.append(x[1] / b[1])
    if r50:
        what = ("rate", "rate") if "it_per_s" in open(os.path.join(d, "bare-1.txt")).read() else ("P50", "P99")
        print(f"{mode} / bare ({what[0]}), per round: P50 {' '.join(f'{v:.3f}' for v in r50)}; P99 {' '.join(f'{v:.3f}' for v in r99)}; "
              f"medians P50 {statistics.median(r50):.3f}, P99 {statistics.median(r99):.3f} ({len(r50)} rounds)")
PY
