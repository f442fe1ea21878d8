#!/bin/sh
# H100: what the launch limits cost a training tenant that runs alone under them, and where the
# time goes. lp_timeline.py (ResNet-50 fp32 training, batch 64: the torch-pair lp tenant) runs
# bare and under the interposer with mini_node.py holding the limits of each variant (no JVM
# needed), and reports its throughput and the device timeline of 20 traced iterations (busy
# fraction, idle gaps, device time per kernel). Variants (VARIANTS, in order, ROUNDS times):
#   bare             no interposer
#   lifted           limits lifted (threshold 2^20, no window: what the node writes for a tenant alone)
#   thr=N/B,win=W    threshold N, batch B, window W us (thr=1048576 for none), e.g. thr=16/8,win=300 (the defaults)
#   any of those followed by +XQ_VAR=value (several allowed), e.g. thr=16/8,win=300+XQ_MARKS=all
# XQ_LIB: another build of the library. One device call (carry interpose/target; no Java):
#   VARIANTS="bare lifted thr=16/8,win=300" ROUNDS=2 sh interpose/src/test/gpu/limits-matrix.sh "$OUT"
set -u
# the nodes' sockets in a directory of our own: the interposer refuses a node whose directory others may write (/tmp)
XQ_SOCKDIR=${XQ_SOCKDIR:-$(mktemp -d)}
out=${1:?usage: limits-matrix.sh OUTDIR}
g=$(dirname "$0")
lib=${XQ_LIB:-$(pwd)/interpose/target/libxq-cuda.so}
[ -f "$lib" ] || { echo "no $lib: build interpose first"; exit 2; }
secs=${SECS:-8}
rounds=${ROUNDS:-1}
variants=${VARIANTS:-bare lifted thr=16/8,win=300}
mkdir -p "$out/runs"
r=1
while [ "$r" -le "$rounds" ]; do
  i=0
  for v in $variants; do
    i=$((i + 1))
    f="$out/runs/$r-$i-$(echo "$v" | tr '/,=+' '.__-')"
    base=${v%%+*}
    vars=
    case $v in *+*) vars=$(echo "${v#*+}" | tr '+' ' ');; esac
    lp="python3 $g/lp_timeline.py --seconds $secs --trace ${TRACE:-20} --label $v"
    s=$(date +%s)
    case $base in
      bare) env $vars timeout 120 $lp > "$f.json" 2> "$f.err" ;;
      lifted | thr=*)
        if [ "$base" = lifted ]; then thr=1048576 b=0 w=0; else
          t=${base#thr=}; thr=${t%%/*}; t=${t#*/}; b=${t%%,*}; w=${t#*,win=}
        fi
        sock=$XQ_SOCKDIR/xq-lm.sock
        python3 $g/mini_node.py $sock "$f.node.json" --threshold "$thr" --batch "$b" --window "$w" \
          --exit-when-idle 1 --run-for 200 &
        node=$!
        sleep 0.5
        env $vars XQ_LOG=2 XQ_SOCKET=$sock LD_PRELOAD="$lib" timeout 120 $lp > "$f.json" 2> "$f.err"
        wait $node ;;
      *) echo "unknown variant $v"; exit 2 ;;
    esac
    echo "round $r $v rc=$? $(($(date +%s) - s)) s: $(python3 -c 'import json,sys
try:
    d=[json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")][-1]
    print("it/s %s busy %s gaps %s sum %s ms p50 %s p99 %s us" % (d["it_per_s"], d.get("busy_frac"), d.get("gaps"), d.get("gap_sum_ms"), d.get("gap_p50_us"), d.get("gap_p99_us")))
except Exception as e: print("no result", e)' "$f.json")"
    grep -h "xq: stream default\|tracker naps\|deferred;" "$f.err" 2>/dev/null | cut -c1-260
  done
  r=$((r + 1))
done
tar -C "$out" -czf "$out/runs.tgz" runs && rm -rf "$out/runs"
