# session 99, last device seconds: is decodeg's +14 % under ./xq run MPS's? One round each way,
# bare and as the only client of a plain MPS daemon, no XQ (bench/gpu/mps-alone.sh).
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
mkdir -p $OUT/call
KINDS=decodeg ROUNDS=1 SECS=4 timeout 50 sh bench/gpu/mps-alone.sh $OUT/call/mps-alone > $OUT/call/mps-alone.log 2>&1; echo "mps-alone rc=$?"
tail -6 $OUT/call/mps-alone.log
