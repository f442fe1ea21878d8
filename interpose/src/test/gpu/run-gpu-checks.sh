#!/bin/sh
# Checks libxq-cuda.so with PyTorch (and Triton) on a real GPU, against mini_node.py.
# Usage (repo root): sh interpose/src/test/gpu/run-gpu-checks.sh OUTDIR
# Builds the library into /tmp/xq; measures launch_bench.c and tiny_ops.py bare and under the
# interposer; runs torch_smoke.py bare, under the interposer with no node,
# with a node (limits 16/8/300 us), with a node holding the gates 1 s (train_s shows it), with a
# node that dies mid-run; the node summaries land in OUTDIR.
set -u
# the nodes' sockets in a directory of our own: the interposer refuses a node whose directory others may write (/tmp)
XQ_SOCKDIR=${XQ_SOCKDIR:-$(mktemp -d)}
out=${1:?usage: run-gpu-checks.sh OUTDIR}
here=$(cd "$(dirname "$0")" && pwd)
b=/tmp/xq
sh "$here/../../main/c/build.sh" $b || exit 1
lib=$b/libxq-cuda.so
export PYTHONUNBUFFERED=1
py() { s=$(date +%s%N); python3 "$here/torch_smoke.py" "$@"; echo "wall $(( ($(date +%s%N) - s) / 1000000 )) ms"; }
node() { python3 "$here/mini_node.py" "$@" & sleep 0.5; }
gcc -std=gnu11 -O2 -I"$here/../../main/c" -o $b/launch_bench "$here/launch_bench.c" -ldl || exit 1
mean() { sed 's/.*mean_ns":\([0-9.]*\).*/\1/'; }
node $XQ_SOCKDIR/n0.sock $out/node-bench.json --run-for 300
echo "== mean ns per cuLaunchKernel of an empty kernel: bare | interposer, no node | interposer, node"
for i in 1 2 3; do for st in legacy explicit; do
  echo "$st $($b/launch_bench $st | mean) | $(LD_PRELOAD=$lib XQ_SOCKET=$XQ_SOCKDIR/xq-none.sock XQ_LOG=0 $b/launch_bench $st | mean) | $(LD_PRELOAD=$lib XQ_SOCKET=$XQ_SOCKDIR/n0.sock $b/launch_bench $st | mean)"
done; done
echo "== us per tiny PyTorch op (legacy stream): bare | interposer, no node | interposer, node"
for i in 1 2 3; do
  echo "$(python3 $here/tiny_ops.py) | $(LD_PRELOAD=$lib XQ_SOCKET=$XQ_SOCKDIR/xq-none.sock XQ_LOG=0 python3 $here/tiny_ops.py) | $(LD_PRELOAD=$lib XQ_SOCKET=$XQ_SOCKDIR/n0.sock python3 $here/tiny_ops.py)"
done
kill $! 2>/dev/null; wait
echo "== bare";            py 50 20000
echo "== no node";         LD_PRELOAD=$lib XQ_SOCKET=$XQ_SOCKDIR/xq-none.sock py 50 20000
echo "== node 16/8/300us"; node $XQ_SOCKDIR/n1.sock $out/node-limits.json --threshold 16 --batch 8 --window 300 --exit-when-idle 1
                           LD_PRELOAD=$lib XQ_SOCKET=$XQ_SOCKDIR/n1.sock XQ_NAME=smoke XQ_PRIORITY=3 py 50 20000; wait
echo "== node holds 1 s";  node $XQ_SOCKDIR/n2.sock $out/node-hold.json --hold 1 --exit-when-idle 1
                           LD_PRELOAD=$lib XQ_SOCKET=$XQ_SOCKDIR/n2.sock py 5 1000; wait
echo "== node dies 2 s after the process connects"; node $XQ_SOCKDIR/n3.sock $out/node-dies.json --die-after 2
                           LD_PRELOAD=$lib XQ_SOCKET=$XQ_SOCKDIR/n3.sock py 6000 20000; wait
