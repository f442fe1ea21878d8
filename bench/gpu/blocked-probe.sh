#!/bin/sh
# GPU machine (issue 40): does a best-effort GEMM narrowed by a green context block a latency-critical
# tenant's kernels in the same MPS server, where one capped by MPS's thread percentage does not?
# Under an MPS daemon of its own, no XQ: bench/gpu/probe/blocked.py (the LC tenant, profiled) alone,
# then beside bench/gpu/probe/gemmload.cu on the whole device, on a green context of SMS
# multiprocessors, and at CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=PCT. Usage (one device call, ~2 min):
#   [KINDS="bulk:128 bulk:8 graph:8"] [N="16384"] [SMS="64"] [PCT=50] [BMODES="full green pct"] sh bench/gpu/blocked-probe.sh OUTDIR
# (N and SMS may be lists: each green load once per SMS value, each load once per N; SYNCS="own
# device stream event query": how the tenant's requests end, probe/blocked.py --sync, each in turn;
# PROFILES="1 0": with torch.profiler and without, each in turn, beside the loads; MARKS="none memop
# event tevent": what probe/blocked.py --marks puts behind every 8th layer, each in turn, beside them;
# SMMAP="32 64 104": the GPCs and each green context's multiprocessors first, probe/smmap.cu).
# GREEN_SPLIT=cluster: the green contexts (gemmload's, smmap's) split for the largest clusters, as
# the interposer does by default since session 72 (unset: the plain split, XQ_NARROW_SPLIT=plain).
# Session 72's A/B, one call: for each split, SMMAP=64 KINDS=bulk:128 BMODES=green GEMMMODES=none
# LCMODES=plain: the batch 333.4 ms a request beside the plain split, 22.3 beside the split for
# clusters, the GEMM on multiprocessors 0-63 both times (docs/results/h200/2026-12-02-s72/).
set -u
out=${1:?usage: blocked-probe.sh OUTDIR}
mkdir -p "$out"
b=/tmp/xq-blocked
rm -rf "$b"; mkdir -p "$b/pipe" "$b/log"
# cuBLAS from the toolkit, else from PyTorch's wheel (nvidia-cublas: headers and libcublas.so.N)
if ! nvcc -O2 -o "$b/gemmload" bench/gpu/probe/gemmload.cu -lcublas -lcuda 2> "$b/build.txt"; then
  cb=$(python3 -c "import nvidia.cublas as m; print(list(m.__path__)[0])" 2>/dev/null)
  lib=$(ls "$cb"/lib/libcublas.so* 2>/dev/null | head -1)
  [ -n "$lib" ] && nvcc -O2 -o "$b/gemmload" bench/gpu/probe/gemmload.cu -I"$cb/include" -L"$cb/lib" -l:"$(basename "$lib")" -lcuda \
    -Xlinker -rpath="$cb/lib" 2>> "$b/build.txt" || { cat "$b/build.txt"; echo "blocked-probe: build failed"; exit 1; }
fi
# SMMAP="32 64 104": first map the GPCs and which multiprocessors a green context of each size takes
# (probe/smmap.cu), inside the same MPS daemon
if [ -n "${SMMAP:-}" ] && ! nvcc -O2 -o "$b/smmap" bench/gpu/probe/smmap.cu -lcuda 2>> "$b/build.txt"; then
  cat "$b/build.txt"; echo "blocked-probe: smmap did not build"; SMMAP=
fi
export CUDA_MPS_PIPE_DIRECTORY=$b/pipe CUDA_MPS_LOG_DIRECTORY=$b/log PYTHONUNBUFFERED=1
nvidia-cuda-mps-control -d || { echo "blocked-probe: the MPS control daemon did not start" >&2; exit 1; }
trap 'echo quit | nvidia-cuda-mps-control' EXIT
N=${N:-16384}; SMS=${SMS:-64}; PCT=${PCT:-50}
{
# shellcheck disable=SC2086
[ -n "${SMMAP:-}" ] && "$b/smmap" $SMMAP
# which kind of launch waits: a small kernel, plain, in a cluster of 2, with programmatic
# serialization, or behind a driver memset or copy on its stream
for mode in ${GEMMMODES:-none full green pct}; do
  case $mode in
    none) g= ;;
    full) "$b/gemmload" 0 "${N%% *}" 120 > "$b/g.out" 2>&1 & g=$! ;;
    green) "$b/gemmload" "${SMS%% *}" "${N%% *}" 120 > "$b/g.out" 2>&1 & g=$! ;;
    pct) CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=$PCT "$b/gemmload" 0 "${N%% *}" 120 > "$b/g.out" 2>&1 & g=$! ;;
  esac
  [ -n "$g" ] && sleep 3
  for lm in ${LCMODES:-plain cluster pdl memset dtod htod}; do echo "beside gemm $mode: $("$b/gemmload" lc $lm 3)"; done
  if [ -n "$g" ]; then kill -INT $g 2>/dev/null; wait $g 2>/dev/null; cat "$b/g.out"; fi
done
[ "${LCONLY:-0}" = 1 ] && exit 0
for kb in ${KINDS:-bulk:128 bulk:8 graph:8}; do
  kind=${kb%%:*}; batch=${kb#*:}
  for sy in ${SYNCS:-own}; do
    python3 bench/gpu/probe/blocked.py --kind "$kind" --batch "$batch" --sync "$sy" --label "alone" 2>&1 | grep -v Warning
  done
  # BMODES: which loads beside it; green once per value in SMS (a list: "32 64 100")
  for mode in ${BMODES:-full green pct}; do
   for s in $( [ "$mode" = green ] && echo "$SMS" || echo -); do
    for n in $N; do
    # a load of its own for each variant, started 3 s before it and ended after it: one load for
    # several variants in turn ran out (30 s) before the later ones began, which then read "not
    # held" with nothing beside them (session 71's first probes)
    for sy in ${SYNCS:-own}; do for pr in ${PROFILES:-1}; do for mk in ${MARKS:-none}; do
    case $mode in
      full) "$b/gemmload" 0 "$n" 120 > "$b/g.out" 2>&1 & ;;
      green) "$b/gemmload" "$s" "$n" 120 > "$b/g.out" 2>&1 & ;;
      pct) CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=$PCT "$b/gemmload" 0 "$n" 120 > "$b/g.out" 2>&1 & ;;
    esac
    g=$!
    sleep 3
      python3 bench/gpu/probe/blocked.py --kind "$kind" --batch "$batch" --sync "$sy" --profile "$pr" --marks "$mk" \
        --label "beside gemm $mode (n=$n, green $s SMs, pct $PCT)" 2>&1 | grep -v Warning
    if kill -0 $g 2>/dev/null; then echo "(the load ran through the variant)"; else echo "NOTE: the load had ended before the variant did: not beside it"; fi
    kill -INT $g 2>/dev/null; wait $g 2>/dev/null
    cat "$b/g.out"
    done; done; done
    done
   done
  done
done
} 2>&1 | tee "$out/blocked.txt"
