#!/bin/sh
# session 21 call 1: N = this build (an arrival on top decided by the loop), O = main before (only the lone arrival), in turn;
# J = N with -XX:CompileThresholdScaling=0.1 (per-task code compiled by C2 sooner). C++ probe with first-submit figures.
# (kit/alt held O's runtime jar)
kit=$(cd "$(dirname "$0")" && pwd)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
rm -rf /tmp/kitO && cp -r "$kit" /tmp/kitO && cp "$kit"/alt/*.jar /tmp/kitO/bundles/
mkdir -p /tmp/c1 /tmp/xqhot; rm -f /tmp/xqhot/*.cfg
gcc -O2 -pthread -o /tmp/warm "$kit/probe/warm.c" && /tmp/warm 150 10000 | head -3 | tee /tmp/c1/probe.txt
nvcc -O2 -o /tmp/standalone "$kit/probe/standalone.cu" -lcuda && /tmp/standalone 100 20 6 | tee -a /tmp/c1/probe.txt && /tmp/standalone 500 20 6 | tee -a /tmp/c1/probe.txt
n=0
for r in N100 O100 J100 N500 O500 N100 O100 J100; do
  n=$((n+1))
  k=$kit; case $r in O*) k=/tmp/kitO ;; esac
  opts="-XX:+UseParallelGC -Xmn1g"; case $r in J*) opts="$opts -XX:CompileThresholdScaling=0.1" ;; esac
  line="fixed-priority --device cuda T=$(echo $r | cut -c2-) seconds=8"
  rm -rf /tmp/xq-results
  XQ_JAVA_OPTS="$opts" XQ_BENCH_TIMELINES=/tmp/xq-results/tl SCENARIOS="$line" timeout 150 sh "$k/run-bench.sh" > /tmp/run.log 2>&1
  cp /tmp/run.log /tmp/xq-results/; cp -r /tmp/xq-results /tmp/c1/$n-$r
done
/tmp/standalone 100 20 6 | tee -a /tmp/c1/probe.txt
tar -C /tmp/c1 -czf "$OUT/results.tar.gz" .
