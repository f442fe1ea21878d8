# Session 119's A/B on the GPU: best-effort processes of short commands weighed by the region for
# the share of their last seconds they spent narrowed (xq: dev.xq.scheduler
# bestEffortBalanceRegionShort=true, the default since session 119) against session 118's way,
# where they weigh 1 whatever (xq-alt). Beside an eager decoder and GEMMs, which narrows both the
# GEMM and the trainer, session 118's weighing favoured the GEMM: bf16 training at 0.47 and 0.56
# of native sharing in session 119's family run, the GEMM at 1.26 and 1.04. Beside a seldom-busy
# wide tenant (graphp) the two ways should read alike: Triton is not narrowed there.
#   usage (device): sh bench/gpu/s119-short.sh   (MIXES=..., RUNS=1, SECS=8, PAUSE=1.5, TMO=420)
# Carry node/target, interpose/target, .jre.tar.xz. Results in $OUT/short/ and $OUT/short.log.
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
SECS=${SECS:-8} PAUSE=${PAUSE:-1.5} RUNS=${RUNS:-1} MODES=native,xq,xq-alt \
  ALT="${ALT:-dev.xq.scheduler/bestEffortBalanceRegionShort:false}" \
  MIXES="${MIXES:-decode+trainbf16+gemm,decode+trainbf16+gemm+triton,decode+trainio+gemm,graphp+gemm+triton,chat+gemm+triton}" \
  TMO=${TMO:-420} timeout $(( ${TMO:-420} + 30 )) sh bench/gpu/mix-run.sh "$OUT/short" > "$OUT/short.log" 2>&1; echo "mix rc=$?"
grep -A30 "== the call's mixes" "$OUT/short.log" | head -30
grep -A20 "== the call's A/B" "$OUT/short.log" | head -20
grep -A80 "== the node's decisions" "$OUT/short.log" | grep -v "^  queue" | head -80
