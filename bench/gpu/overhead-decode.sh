#!/bin/sh
# GPU machine (issue 40): the interposer's cost on a launch-bound tenant alone: the eager decoder
# (~950 launches a request) bare, under ./xq run without MPS (XQ_MPS=0: the interposer alone) and
# under ./xq run as it comes (the interposer and the node's MPS server), alternated A B C A B C,
# each run its own process. Carry node/target, interpose/target, .jre.tar.xz.
# Usage: SECS=8 sh bench/gpu/overhead-decode.sh "$OUT"
set -u
out=${1:?usage: overhead-decode.sh OUTDIR}
mkdir -p "$out"
S=${SECS:-8}
./xq serve > "$out/overhead-node.txt" 2>&1 &
node=$!
sleep 6
for round in 1 2; do
  python3 -u bench/torch/family/tenant.py --kind decode --seconds "$S" > "$out/bare-$round.txt" 2> "$out/bare-$round.err"
  XQ_MPS=0 ./xq run --priority 2 --name decode -- python3 -u bench/torch/family/tenant.py --kind decode --seconds "$S" \
    > "$out/xqnomps-$round.txt" 2> "$out/xqnomps-$round.err"
  ./xq run --priority 2 --name decode -- python3 -u bench/torch/family/tenant.py --kind decode --seconds "$S" \
    > "$out/xq-$round.txt" 2> "$out/xq-$round.err"
done
kill $node; wait $node 2>/dev/null
for f in "$out"/bare-*.txt "$out"/xqnomps-*.txt "$out"/xq-*.txt; do
  echo "$(basename "$f"): $(grep -o '"p50_ms": *[0-9.]*\|"p99_ms": *[0-9.]*\|"requests": *[0-9]*' "$f" | tr '\n' ' ')"
done
