#!/bin/sh
# H100: where the interposer's overhead on a tenant alone comes from. hp (bench/torch/hp_infer.py:
# ResNet-50 fp16, batch 8, a CUDA graph replayed every 25 ms) runs alone in each variant, the
# variants interleaved round after round so that the machine's drift falls on all of them alike:
#   bare          no interposer
#   nonode        the interposer loaded, no node to register with (the wrappers' own cost)
#   node          ./xq run against a running node (what users get)
#   node-VAR=VAL  the same with one XQ_ variable set, e.g. node-XQ_MARKS=all
# One device call (carry node/target .jre.tar.xz interpose/target):
#   VARIANTS="bare nonode node" ROUNDS=4 SECS=10 sh interpose/src/test/gpu/overhead-matrix.sh "$OUT"
set -u
out=${1:?usage: overhead-matrix.sh OUTDIR}
secs=${SECS:-10}
rounds=${ROUNDS:-3}
variants=${VARIANTS:-bare nonode node}
mkdir -p "$out/runs"
# the node, with its process host where ./xq run looks by default
sock=${XDG_RUNTIME_DIR:+$XDG_RUNTIME_DIR/xq/node.sock}
[ -n "$sock" ] || { [ "$(id -u)" = 0 ] && sock=/run/xq/node.sock || sock=/tmp/xq-$(id -u)/node.sock; }
./xq serve --bundles "$out/deploy" > "$out/node.log" 2>&1 &
node=$!
i=0
while [ ! -S "$sock" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
[ -S "$sock" ] || { echo "no node socket at $sock after 60 s"; tail -20 "$out/node.log"; kill $node; exit 1; }
echo "node up after $((i / 10)) s"
hp="python3 bench/torch/hp_infer.py --seconds $secs"
r=1
while [ $r -le "$rounds" ]; do
  for v in $variants; do
    f="$out/runs/$v-$r.json"
    case $v in
      bare) $hp > "$f" 2> "$f.err" ;;
      nonode) XQ_SOCKET=$out/none.sock LD_PRELOAD=$(pwd)/interpose/target/libxq-cuda.so $hp > "$f" 2> "$f.err" ;;
      node) ./xq run --socket "$sock" --priority 2 --name hp -- $hp > "$f" 2> "$f.err" ;;
      node-XQ_*=*) kv=${v#node-}; env "$kv" ./xq run --socket "$sock" --priority 2 --name hp -- $hp > "$f" 2> "$f.err" ;;
      *) echo "unknown variant $v"; exit 2 ;;
    esac
    echo "round $r $v rc=$? $(grep -o '"p50_ms": [0-9.]*, "p99_ms": [0-9.]*' "$f")"
  done
  r=$((r + 1))
done
kill $node; wait $node 2>/dev/null
python3 - "$out/runs" "$rounds" $variants <<'PY'
import json, statistics, sys
d, rounds, vs = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
def load(v, r):
    try:
        return [json.loads(l) for l in open("%s/%s-%d.json" % (d, v, r)) if l.startswith("{")][-1]
    except Exception:
        return None
print("%-22s %s" % ("variant", "  ".join("r%d P50/P99 (vs bare)" % r for r in range(1, rounds + 1))))
for v in vs:
    cells, d50, d99 = [], [], []
    for r in range(1, rounds + 1):
        a, b = load(v, r), load("bare", r)
        if not a:
            cells.append("-"); continue
        c = "%.3f/%.3f" % (a["p50_ms"], a["p99_ms"])
        if b:
            d50.append(100 * (a["p50_ms"] / b["p50_ms"] - 1)); d99.append(100 * (a["p99_ms"] / b["p99_ms"] - 1))
            c += " (%+.2f/%+.2f %%)" % (d50[-1], d99[-1])
        cells.append(c)
    med = " median %+.2f/%+.2f %%" % (statistics.median(d50), statistics.median(d99)) if d50 else ""
    print("%-22s %s%s" % (v, "  ".join(cells), med))
PY
tar -C "$out" -czf "$out/runs.tgz" runs node.log && rm -rf "$out/runs"
