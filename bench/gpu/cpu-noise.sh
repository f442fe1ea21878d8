#!/bin/sh
# GPU machine: is the eager decoder's latency (which moves 15 -> 48 ms in phases of seconds even
# alone) made by the host's CPU rather than the GPU? Runs, each SECS s: a pure-Python tick alone;
# the decoder alone with the tick beside it; the decoder and the tick each pinned to a core of its
# own (one OpenMP thread); the decoder alone with one OpenMP thread, unpinned. /proc/stat is sampled
# (busy, steal) through each. Usage: sh bench/gpu/cpu-noise.sh OUTDIR
set -u
out=${1:?usage: cpu-noise.sh OUTDIR}/cpu-noise
mkdir -p "$out"
S=${SECS:-12}
t=bench/torch/family/tenant.py
{
  lscpu | grep -E 'Model name|^CPU\(s\)|Thread|Core|Socket|NUMA node\(s\)|MHz|Hypervisor'
  echo "siblings: $(cat /sys/devices/system/cpu/cpu*/topology/thread_siblings_list | sort -un | tr '\n' ' ')"
  echo "governor: $(cat /sys/devices/system/cpu/cpu0/cpufreq/scaling_governor 2>/dev/null || echo none)"
  echo "loadavg: $(cat /proc/loadavg)"
  ps -eo pcpu,pid,comm --sort=-pcpu | head -8
} > "$out/machine.txt" 2>&1
cat "$out/machine.txt"
# pick two cores on different physical cores: the first core and the first core not its sibling
c1=$(cut -d, -f1 /sys/devices/system/cpu/cpu2/topology/thread_siblings_list | cut -d- -f1)
sib=$(cat /sys/devices/system/cpu/cpu2/topology/thread_siblings_list)
c2=6; [ "$(cat /sys/devices/system/cpu/cpu6/topology/thread_siblings_list)" = "$sib" ] && c2=10
echo "pinned cores: decoder $c1 (siblings $sib), tick $c2"
run() { # name, then a command line run with the stat sampler beside it
  name=$1; shift
  python3 bench/gpu/cpu-stat.py > "$out/$name.stat" & st=$!
  sh -c "$*"
  kill $st; wait $st 2>/dev/null
}
run tick-alone "python3 bench/gpu/cpu-tick.py $S > $out/tick-alone.json"
run decode-tick "python3 -u $t --kind decode --seconds $S > $out/decode-tick.dec.json 2> $out/decode-tick.log & d=\$!; \
  while ! grep -q READY $out/decode-tick.dec.json 2>/dev/null; do sleep 0.2; done; python3 bench/gpu/cpu-tick.py $S > $out/decode-tick.tick.json; wait \$d"
run decode-pinned "OMP_NUM_THREADS=1 taskset -c $c1 python3 -u $t --kind decode --seconds $S > $out/decode-pinned.dec.json 2> $out/decode-pinned.log & d=\$!; \
  while ! grep -q READY $out/decode-pinned.dec.json 2>/dev/null; do sleep 0.2; done; taskset -c $c2 python3 bench/gpu/cpu-tick.py $S > $out/decode-pinned.tick.json; wait \$d"
run decode-omp1 "OMP_NUM_THREADS=1 python3 -u $t --kind decode --seconds $S > $out/decode-omp1.dec.json 2> $out/decode-omp1.log"
python3 - "$out" <<'PY'
import json, os, sys, statistics as st
d = sys.argv[1]
def pct(l, q):
    l = sorted(l); return l[min(len(l) - 1, int(q * len(l)))]
for n in ("tick-alone", "decode-tick", "decode-pinned", "decode-omp1"):
    rows = [r.split() for r in open(os.path.join(d, n + ".stat")).read().splitlines()[1:] if r.strip()]
    steal = [float(r[3]) for r in rows]; busy = [float(r[1]) for r in rows]
    print(f"== {n}: machine busy P50 {pct(busy,.5):.1f}% max {max(busy):.1f}%, steal P50 {pct(steal,.5):.1f}% max {max(steal):.1f}%")
    for suf in (".dec.json", ".tick.json", ".json"):
        f = os.path.join(d, n + suf)
        if not os.path.exists(f) or (suf == ".json" and n != "tick-alone"):
            continue
        lines = [l for l in open(f).read().splitlines() if l.startswith("{")]
        if not lines:
            print("  ", suf, "no JSON"); continue
        j = json.loads(lines[-1])
        l = j.get("lat_ms") or j.get("ms")
        print(f"  {suf:10s} n {len(l)} P50 {pct(l,.5):.2f} P90 {pct(l,.9):.2f} P99 {pct(l,.99):.2f} max {max(l):.2f} ms")
        print("   series:", " ".join(str(round(x)) if x >= 10 else str(round(x, 1)) for x in l))
PY
