# Session 108, call 1:
# (a) bench/gpu/host-noise.sh: does host load shaped like the interposer's trackers (three threads
#     napping 5 us or 50 us at a time) slow a bare eager decoder's launching, against three
#     spinning threads and a quiet host (two rounds, the order rotated)? Under XQ a best-effort
#     process's tracker took 18-47 % of a core in session 107's runs.
# (b) XQ_TRACK_AHEAD A/B (xq = default: a long command behind a limit looked at every 100 us until
#     fifteen sixteenths of its estimate has passed; xq-alt = XQ_TRACK_AHEAD=0: every 5 us from
#     the start), native sharing in the same run, five mixes with GEMM processes (21 ms kernels).
#     Two of them (graph+triton+gemm, bulk+gemm+gemm) are where session 107 found best-effort turns
#     standing still at the wide tenant's exit: bench/gpu/end-stall.py reads whether the 2 ms look
#     (XqCore.TURN_DRAIN_LOOK_NANOS) holds, in both xq modes.
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
ROUNDS=2 SECS=8 THREADS=3 timeout 170 sh bench/gpu/host-noise.sh /tmp/hn > /tmp/hn.log 2>&1; echo "host-noise rc=$?"
cp /tmp/hn.log /tmp/hn/; rm -f /tmp/hn/napper; tar czf $OUT/hn.tgz -C /tmp hn
tail -18 /tmp/hn.log
export SECS=10 PAUSE=1.5 RUNS=1 MODES=native,xq,xq-alt ALT="env/XQ_TRACK_AHEAD:0"
MIXES="custom=decode+gemm+gemm;custom=bulk+gemm+gemm;custom=decode+trainbf16+gemm+triton;custom=graph+triton+gemm;custom=gemm+triton+trainbf16" \
  TMO=390 timeout 400 sh bench/gpu/mix-run.sh /tmp/m1 > /tmp/m1.log 2>&1; echo "mix rc=$?"
cp /tmp/m1.log /tmp/m1/ 2>/dev/null; tar czf $OUT/m1.tgz -C /tmp m1
rm -rf /tmp/r; mkdir -p /tmp/r; tar xzf /tmp/m1/mix-results.tgz -C /tmp/r && grep -h "done (" /tmp/r/mix-*.txt | sed 's/P99\/standalone[^,]*,//' | cut -c1-600
grep -h "goals MET\|goals MISSED" /tmp/r/mix-*.txt | head -20
python3 bench/gpu/end-stall.py /tmp/r 2>&1 | grep -v native | cut -c1-200
for f in /tmp/r/procs-report-*.txt; do echo "== $f"; awk '/^== /{m=$2} /xq-tracker/{for(i=2;i<=NF;i++) if($i=="%") {n[m]++; s[m]+=$(i-1); break}} END{for(k in n) printf "%s: xq-tracker the busiest thread in %d process-seconds, mean %.1f %% of a core\n", k, n[k], s[k]/n[k]}' "$f"; done
