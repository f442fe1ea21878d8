#!/bin/sh
# session 19 call 5, one host, T=100: H = this build (hold on arrival, host flags, linger), K = session 18's build, in turn
kit=$(cd "$(dirname "$0")" && pwd)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
rm -rf /tmp/kitK && cp -r "$kit" /tmp/kitK && cp "$kit"/alt/*.jar /tmp/kitK/bundles/
mkdir -p /tmp/c5 /tmp/xqhot
rm -f /tmp/xqhot/*.cfg
n=0
for b in H K H K H K H; do
  n=$((n+1))
  k=$kit; [ $b = K ] && k=/tmp/kitK
  rm -rf /tmp/xq-results /tmp/xq-jfr
  J=0; [ $n = 1 ] && J=1
  XQ_JFR=$J XQ_BENCH_TIMELINES=/tmp/xq-results SCENARIOS="fixed-priority --device cuda T=100 seconds=8" timeout 150 sh "$k/run-bench.sh" > /tmp/run.log 2>&1
  cp /tmp/run.log /tmp/xq-results/; cp -r /tmp/xq-results /tmp/c5/$n-$b
  f=/tmp/c5/$n-$b/1-fixed-priority.txt
  awk -v f="$n-$b jfr=$J" '$1=="mode"&&/idle_pct/{for(i=1;i<=NF;i++) c[$i]=i} $1=="standalone"&&NF>10{sa=$(c["fg_p99"])/$(c["fg_p50"]); sp=$(c["fg_p50"])} $1=="xq:hpf"&&NF>10{printf "%s fg %s p50 %s p99 %s (sa p50 %s, sa %.3f) bg %s bgcmd %s lost %s\n", f, $(c["fg_p99_over_standalone"]), $(c["fg_p50"]), $(c["fg_p99"]), sp, sa, $(c["bg_vs_native"]), $(c["bg_cmd_us"]), $(c["lost"])}' "$f"
  [ -f /tmp/c5/$n-$b/1-fixed-priority-arrival.txt ] && awk '/^pair/{p=$2} p=="4:"' /tmp/c5/$n-$b/1-fixed-priority-arrival.txt
done
tar -C /tmp/c5 -czf "$OUT/results.tar.gz" .
