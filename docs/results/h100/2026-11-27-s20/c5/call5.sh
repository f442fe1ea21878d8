#!/bin/sh
# session 20 call 5: why fg's submit costs more CPU in the standalone mode than in native (same
# queue config): the completion thread's wait (pollWait), level 2 (stall), in turn; one JFR run
# (the kit's tail.jfc had jdk.ExecutionSample / NativeMethodSample at 1 ms and jdk.CPUTimeSample added)
kit=$(cd "$(dirname "$0")" && pwd)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
nvcc -O2 -o /tmp/standalone "$kit/probe/standalone.cu" -lcuda
mkdir -p /tmp/c5 /tmp/xqhot
/tmp/standalone 100 20 8 | tee /tmp/c5/probe.txt
/tmp/standalone 500 20 8 | tee -a /tmp/c5/probe.txt
n=0
for v in jfr500 def500 park500 off500 def100 park100 off100 def500b park500b; do
  n=$((n+1))
  rm -f /tmp/xqhot/*.cfg
  case $v in park*) echo "pollWait=park" > /tmp/xqhot/dev.xq.hal.cuda.cfg ;; off*) echo "stall=off" > /tmp/xqhot/dev.xq.hal.cuda.cfg ;; esac
  T=$(echo $v | tr -dc 0-9 | cut -c1-3)
  J=0; [ $v = jfr500 ] && J=1
  rm -rf /tmp/xq-results /tmp/xq-jfr
  XQ_JFR=$J XQ_JFR_TASK=20 SCENARIOS="fixed-priority --device cuda T=$T seconds=8" timeout 200 sh "$kit/run-bench.sh" > /tmp/run.log 2>&1
  cp /tmp/run.log /tmp/xq-results/; cp -r /tmp/xq-results /tmp/c5/$n-$v
  [ -f /tmp/xq-jfr/1-fixed-priority.jfr ] && cp /tmp/xq-jfr/1-fixed-priority.jfr /tmp/c5/$n-$v/
  awk -v f="$n-$v" '$1=="mode"&&/idle_pct/{for(i=1;i<=NF;i++) c[$i]=i} ($1=="standalone"||$1=="native"||$1=="xq:hpf")&&NF>10{printf "%s %s p50 %s p99 %s cpu med %s slow %s dev slow %s\n", f, $1, $(c["fg_p50"]), $(c["fg_p99"]), $(c["fg_med_submit_cpu_us"]), $(c["fg_slow_submit_cpu_us"]), $(c["fg_slow_device_us"])}' /tmp/c5/$n-$v/1-fixed-priority.txt
done
rm -f /tmp/xqhot/*.cfg
tar -C /tmp/c5 -czf "$OUT/results.tar.gz" .
