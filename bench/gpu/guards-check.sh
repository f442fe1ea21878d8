#!/bin/sh
# GPU machine (issue 40): the arrival guards on the family, in one device call: each mix in ROUNDS
# scenario runs (standalone, native sharing, XQ), then for every latency-critical tenant its P99
# over the whole run and without its first requests (bench/gpu/lc-phases.py), and for every
# best-effort stream how often its gate closed with work in flight and under which guard (the
# interposer's XQ_LOG=2 summary). Carry node/target, interpose/target, .jre.tar.xz.
#   MIXES="graph+train32,bulk+trainbf16" ROUNDS=2 SECS=6 sh bench/gpu/guards-check.sh "$OUT"
set -u
out=${1:?usage: guards-check.sh OUTDIR}
mkdir -p "$out"
export XQ_LOG=2
r=0
while [ "$r" -lt "${ROUNDS:-2}" ]; do
  r=$((r+1))
  MIXES="${MIXES:-graph+train32,bulk+trainbf16,graph+triton+gemm,decode+trainbf16}" SECS="${SECS:-6}" \
    MODES="${MODES:-standalone,native,xq}" TMO="${TMO:-280}" sh bench/gpu/mix-run.sh "$out/round$r" > "$out/round$r.txt" 2>&1
  grep -E 'done \(' "$out/round$r.txt"
  echo "== round $r: LC tenants, all requests and without the first 15"
  python3 bench/gpu/lc-phases.py /tmp/xq-mix/logs-1 | grep -v 'standalone-\|xq-alone' | sed 's/^/  /'
  echo "== round $r: BE streams' gate closes (xq mode)"
  for f in /tmp/xq-mix/logs-1/*/xq/*.log; do
    grep -H 'gate closed' "$f" 2>/dev/null | sed "s|/tmp/xq-mix/logs-1/||; s|^|  |" | cut -c1-240
  done
done
