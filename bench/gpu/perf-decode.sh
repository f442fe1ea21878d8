#!/bin/sh
# GPU machine (issue 40): where an interposed tenant's host time goes, by Linux perf when the host
# has it: the host's facts (perf, its paranoia level, the CPU), then the decoder alone under
# ./xq run sampled by perf record (8 s), and perf's report by library and function (the
# interposer's lines and the top of everything). Prints "no perf" and the facts otherwise.
# Carry node/target, interpose/target, .jre.tar.xz. Usage: [KIND=decode] [SECS=8] sh bench/gpu/perf-decode.sh OUTDIR
set -u
out=${1:?usage: perf-decode.sh OUTDIR}
mkdir -p "$out"
K=${KIND:-decode}
{ command -v perf; cat /proc/sys/kernel/perf_event_paranoid; lscpu | head -25; } > "$out/host.txt" 2>&1
if ! command -v perf > /dev/null; then echo "no perf on this host"; cat "$out/host.txt"; exit 0; fi
./xq serve > "$out/node.txt" 2>&1 &
node=$!
sleep 6
./xq run --priority 2 --name "$K" -- perf record -F 20000 -g -o "$out/perf.data" python3 -u bench/torch/family/tenant.py \
  --kind "$K" --seconds "${SECS:-8}" > "$out/run.txt" 2> "$out/run.err"
kill $node; wait $node 2>/dev/null
perf report -i "$out/perf.data" --no-children --sort dso --stdio 2>/dev/null | grep -v "^#" | grep -v "^$" | head -30 > "$out/by-dso.txt"
perf report -i "$out/perf.data" --no-children --sort dso,symbol --stdio -g none 2>/dev/null | grep -v "^#" | grep -v "^$" > "$out/by-symbol.txt"
perf annotate -i "$out/perf.data" --stdio -d libxq-cuda.so 2>/dev/null | head -3000 > "$out/annotate.txt"
rm -f "$out/perf.data"
cat "$out/by-dso.txt"; grep libxq "$out/by-symbol.txt" | head -40; head -30 "$out/by-symbol.txt"
