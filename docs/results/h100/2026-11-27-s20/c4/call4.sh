#!/bin/sh
# session 20 call 4: the count, then the C standalone with more CPU per submit / a spinning companion, in turn
export XQ_BENCH_TIMELINES=/tmp/xq-results/tl
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
sh bench/target/gpu-kit/campaign.sh 2>&1 | tail -20
for i in 1 2; do
  for args in "0 0" "5 0" "0 1"; do
    /tmp/standalone 100 20 8 $args | tee -a /tmp/xq-results/host-probe.txt
  done
done
tar -C /tmp/xq-results -czf "$OUT/results.tar.gz" .
