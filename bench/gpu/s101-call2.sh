# Session 101, call 2 (H100 or H200): where MPS's price on decodeg is paid, what hand-fixed MPS
# splits give decodeg+trainbf16 with no XQ, and decodeg beside GEMMs with the LC in a context of its
# own (mpsLatencyOwnContext=true) against the default, natives in the same run.
export XQ_LOG=3 XQ_JAVA_OPTS="-XX:+UseParallelGC -Xmn1g -XX:PerMethodTrapLimit=0 -XX:PerBytecodeTrapLimit=0 -XX:-UseTypeSpeculation -Dxq.trace.wideBeats=true"; export SECS=12 PAUSE=1.5 RUNS=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
mkdir -p $OUT/p
WAYS="bare mps mps:spin mps75 mps50" ROUNDS=2 TOKENS=640 timeout 200 sh bench/gpu/decodeg-mps.sh $OUT/p/dg > $OUT/p/dg.log 2>&1; echo "decodeg-mps rc=$?"; tail -8 $OUT/p/dg.log
timeout 150 python3 bench/gpu/mps-split.py $OUT/p/split decodeg trainbf16 alone,native,100/30,70/30 8 > $OUT/p/split.log 2>&1; echo "mps-split rc=$?"; tail -6 $OUT/p/split.log
ALT="dev.xq.host/mpsLatencyOwnContext:true" MIXES="custom=decodeg+gemm;decodeg+triton+gemm" MODES=native,xq,xq-alt TMO=220 timeout 225 sh bench/gpu/mix-run.sh $OUT/p/m > $OUT/p/m.log 2>&1; echo "mix rc=$?"
rm -rf /tmp/r; mkdir -p /tmp/r; tar xzf $OUT/p/m/mix-results.tgz -C /tmp/r && grep -h "done (" /tmp/r/mix-*.txt | cut -c1-900
