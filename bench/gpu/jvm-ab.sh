#!/bin/sh
# GPU machine: the node's JVM options A/B, mix by mix, each mix run once with each set of options
# (its own node JVM each time: ./xq bench starts one), the order alternating mix by mix so that
# neither set always runs first. The node's deoptimizations and safepoints are logged
# (-Xlog, decorated with epoch ms and System.nanoTime, as the slow-decision lines are) into each
# run's results, beside mix-run.sh's.
# Carry: node/target, interpose/target, .jre.tar.xz. Usage:
#   A="-XX:+UseParallelGC -Xmn1g" B="-XX:+UseParallelGC -Xmn1g -XX:PerMethodTrapLimit=0" \
#   MIXES="graphp+gemm;custom=graph+gemm+train32" SECS=12 PAUSE=1.5 MODES=native,xq sh bench/gpu/jvm-ab.sh OUTDIR
# TRACE: JVM options both sets get (default: the wide beats' and slow decisions' traces).
set -u
out=${1:?usage: jvm-ab.sh OUTDIR}
mkdir -p "$out"
trace=${TRACE:--Dxq.trace.wideBeats=true -Dxq.trace.slowDecisions=true}
log="-Xlog:deoptimization=debug,safepoint=info:file=/tmp/xq-mix/jvm-%p.log:timemillis,timenanos,tid"
i=0
for m in $(echo "${MIXES:?MIXES}" | tr ';' ' '); do
  i=$((i+1))
  if [ $((i % 2)) = 1 ]; then order="A B"; else order="B A"; fi
  for v in $order; do
    if [ "$v" = A ]; then opts=${A:?A}; else opts=${B:?B}; fi
    XQ_JAVA_OPTS="$opts $trace $log" MIXES="$m" sh bench/gpu/mix-run.sh "$out/$i-$v" > "$out/$i-$v.log" 2>&1
    echo "== $i $v ($m): slow decisions $(grep -c 'slow decision' /tmp/xq-mix/mix-1.txt), node deoptimizations $(cat /tmp/xq-mix/jvm-*.log | grep -c 'dev[.]xq')"
    grep -A4 '== the call' "$out/$i-$v.log" | tail -2
  done
done
