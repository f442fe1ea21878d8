# Session 109, call 3: the interposer's launch path on eager decoders alone (mode xq-ab: every other
# request with the launch path bypassed, in one process; the 2 % goal), the family's decoder and
# two sizes never read so (16 layers every 40 ms, the random decoder of 12 layers); then calls 1-2's
# two new mixes whose misses were not the known conflicts, once more each (run after run).
export SECS=10 PAUSE=1.5 RUNS=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
MODES=xq-ab MIXES="custom=decode+gemm;custom=decode@period=40@layers=16+gemm;custom=decodep@layers=12+gemm" \
  TMO=150 timeout 160 sh bench/gpu/mix-run.sh /tmp/m3a > /tmp/m3a.log 2>&1; echo "xq-ab rc=$?"
cp /tmp/m3a.log /tmp/m3a/ 2>/dev/null; tar czf $OUT/m3a.tgz -C /tmp m3a
rm -rf /tmp/r; mkdir -p /tmp/r; tar xzf /tmp/m3a/mix-results.tgz -C /tmp/r && grep -h "launch path" /tmp/r/mix-*.txt | cut -c1-400
MODES=native,xq MIXES="custom=decode@period=40@layers=16+trainio+triton;custom=decode:3+decodep:2@layers=12+gemm@size=6144" \
  TMO=150 timeout 160 sh bench/gpu/mix-run.sh /tmp/m3b > /tmp/m3b.log 2>&1; echo "mix rc=$?"
cp /tmp/m3b.log /tmp/m3b/ 2>/dev/null; tar czf $OUT/m3b.tgz -C /tmp m3b
rm -rf /tmp/r; mkdir -p /tmp/r; tar xzf /tmp/m3b/mix-results.tgz -C /tmp/r && grep -h "done (" /tmp/r/mix-*.txt | sed 's/P99\/standalone[^,]*,//' | cut -c1-500
grep -h "goals MET\|goals MISSED" /tmp/r/mix-*.txt | head
