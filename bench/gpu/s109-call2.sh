# Session 109, call 2: eight mixes never run, with sizes and priorities the family never had
# (native sharing against XQ on the defaults, untraced): a graph on top of a random decoder of 12
# layers beside bf16 training of 12; a batch of 64 beside a Triton loop of 32768 rows and fp32
# training; a graph-served decoder of 8 layers at batch 2 beside short GEMMs (n=4096) and Triton;
# a random graph every 20 ms beside bf16 training and GEMMs of n=10240; a decoder of 16 layers
# every 40 ms beside input-bound training and Triton; three best-effort processes only (two
# trainers and GEMMs); two random services at two priorities beside GEMMs; long and short GEMMs
# beside an eager decoder.
export SECS=10 PAUSE=1.5 RUNS=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
MODES=native,xq \
MIXES="custom=graph:3+decodep:2@layers=12+trainbf16@layers=12;custom=bulk@batch=64+triton@size=32768+train32;custom=decodeg@layers=8@batch=2+gemm@size=4096+triton;custom=graphp@period=20+trainbf16+gemm@size=10240;custom=decode@period=40@layers=16+trainio+triton;custom=trainbf16+train32+gemm;custom=decodep:3+bulkp:2+gemm;custom=gemm@size=12288+gemm@size=4096+decode" \
  TMO=${TMO:-460} timeout $((${TMO:-460} + 10)) sh bench/gpu/mix-run.sh /tmp/m2 > /tmp/m2.log 2>&1; echo "mix rc=$?"
cp /tmp/m2.log /tmp/m2/ 2>/dev/null; tar czf $OUT/m2.tgz -C /tmp m2
rm -rf /tmp/r; mkdir -p /tmp/r; tar xzf /tmp/m2/mix-results.tgz -C /tmp/r && grep -h "done (" /tmp/r/mix-*.txt | sed 's/P99\/standalone[^,]*,//' | cut -c1-500
grep -h "goals MET\|goals MISSED" /tmp/r/mix-*.txt | head -20
python3 bench/gpu/end-stall.py /tmp/r 2>&1 | grep -v native | cut -c1-160
