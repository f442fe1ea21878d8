#!/bin/sh
# session 20 call 6: N = a lone queue's arrival decided by the loop (this build), O = decided on the submitting thread (before), in turn
kit=$(cd "$(dirname "$0")" && pwd)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
rm -rf /tmp/kitO && cp -r "$kit" /tmp/kitO && cp "$kit"/alt/*.jar /tmp/kitO/bundles/
nvcc -O2 -o /tmp/standalone "$kit/probe/standalone.cu" -lcuda && /tmp/standalone 100 20 6 | tee /tmp/probe.txt
mkdir -p /tmp/c6 /tmp/xqhot; rm -f /tmp/xqhot/*.cfg
n=0
for r in N500 O500 N100 O100 N500 O500 Nov Oov; do
  n=$((n+1))
  k=$kit; case $r in O*) k=/tmp/kitO ;; esac
  case $r in *ov) line="overhead --device cuda" ;; *) line="fixed-priority --device cuda T=$(echo $r | cut -c2-) seconds=8" ;; esac
  rm -rf /tmp/xq-results
  SCENARIOS="$line" timeout 150 sh "$k/run-bench.sh" > /tmp/run.log 2>&1
  cp /tmp/run.log /tmp/xq-results/; cp -r /tmp/xq-results /tmp/c6/$n-$r
  f=$(ls /tmp/c6/$n-$r/1-*.txt | grep -v run.log | head -1)
  case $r in
    *ov) awk -v f="$n-$r" '$1=="direct"{dp=$4} $1=="xq:hpf"{xp=$4; m=$6} END{printf "%s overhead P99 %.3f -> %.3f ms (x%.3f), mean %+.2f %%\n", f, dp, xp, xp/dp, m}' "$f" ;;
    *) awk -v f="$n-$r" '$1=="mode"&&/idle_pct/{for(i=1;i<=NF;i++) c[$i]=i} $1=="standalone"&&NF>10{sa=$(c["fg_p99"])/$(c["fg_p50"]); sc=$(c["fg_med_submit_cpu_us"]); sp=$(c["fg_p50"])} $1=="xq:hpf"&&NF>10{printf "%s sa %.3f (p50 %s, submit cpu %s) | hpf fg %s p50 %s submit cpu %s bg %s lost %s\n", f, sa, sp, sc, $(c["fg_p99_over_standalone"]), $(c["fg_p50"]), $(c["fg_med_submit_cpu_us"]), $(c["bg_vs_native"]), $(c["lost"])}' "$f" ;;
  esac
done
cp /tmp/probe.txt /tmp/c6/
tar -C /tmp/c6 -czf "$OUT/results.tar.gz" .
