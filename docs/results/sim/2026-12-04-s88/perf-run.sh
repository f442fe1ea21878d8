#!/bin/bash
# one bench run under perf; $1 = index
cd /work/main
i=$1
XQ_BENCH_TIMELINES=/tmp/pf/tl-$i ./xq bench fixed-priority --json /tmp/pf/fp-$i.json > /tmp/pf/fp-$i.txt 2>&1 &
b=$!
pid=""
for k in $(seq 100); do
  pid=$(pgrep -f "xq-node.jar.*bench fixed-priority" | head -1)
  [ -n "$pid" ] && break
  sleep 0.1
done
perf record -e cpu-clock -F 4000 -g -p $pid -o /tmp/pf/perf-$i.data > /tmp/pf/perf-$i.log 2>&1 &
p=$!
wait $b
kill -INT $p 2>/dev/null; wait $p
python3 - $i <<'PY'
import json,sys
i=sys.argv[1]
d=json.load(open(f"/tmp/pf/fp-{i}.json"))
def walk(o,path=""):
    if isinstance(o,dict):
        for k,v in o.items():
            if k in("fg_slow_submit_cpu_us","fg_p99_over_standalone","mode","bg_vs_native"): print(i,path,k,v)
            walk(v,path+"/"+k)
    elif isinstance(o,list):
        for n,v in enumerate(o): walk(v,path+f"[{n}]")
walk(d)
PY
