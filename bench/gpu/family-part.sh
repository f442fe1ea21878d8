# The whole family (./xq bench mix's 40 mixes) in three device calls, native against the defaults,
# one run a mix: after session 115's fix (torch.cuda.synchronize() wrapped under CUDA 13), every
# PyTorch best-effort tenant waits as it does natively, so every mix is to be measured again.
#   usage (device): PART=1|2|3 sh bench/gpu/family-part.sh     (SECS=8, PAUSE=1.5, TMO=560)
#   or PART=a|b|c: the family's 40 mixes by what session 118 changed (a and b: the 17 mixes of two or
#   more best-effort tenants, whose cut is now read in sixteenths of the device; c: 13 of the pairs)
#   or PART=d|e: the 13 mixes session 119's parts a-c left unrun or cut (d: 7, mostly pairs and
#   decoders; e: 6, two or more latency-critical tenants)
# Carry node/target, interpose/target, .jre.tar.xz. Results in $OUT/fam-PART/ (mix-results.tgz,
# written as the run goes) and $OUT/fam-PART.log.
part=${PART:?PART=1, 2, 3 or a-e}
all="decode+trainbf16 decode+gemm decode+trainbf16+gemm graph+train32 bulk+trainbf16 decode+graph+train32
graph+triton+gemm bulk+gemm+triton decode+graph+trainbf16+gemm decode+decode graphp+train32 graphp+gemm graph+gemm
bulk+gemm decode+decode+train32 bulk+gemm+gemm decode+bulk+gemm+triton graph+trainbf16 bulk+gemm+gemm+gemm
graph+decode+bulk+gemm gemm+triton+trainbf16 bulk@period=150@batch=128+gemm@size=16384 decodep+trainbf16
bulkp+trainbf16 decodep+graphp+train32 decodeg+trainbf16 decodeg+triton+gemm trainio+triton decode+trainio+gemm
decode+trainbf16+gemm+triton bulkp+train32+triton graphp+gemm+triton decode+gemm+gemm
decode@period=40@layers=16+trainio+triton decode+decodep@layers=12+gemm@size=6144 decodep+bulkp+gemm
graph+decodep@layers=12+trainbf16@layers=12 chat+trainbf16 chat+gemm+triton chat+decode+train32"
n=$(echo $all | wc -w)
case "$part" in
  a) list="graph+triton+gemm,bulk+gemm+triton,decode+graph+trainbf16+gemm,bulk+gemm+gemm,decode+bulk+gemm+triton,gemm+triton+trainbf16,decodeg+triton+gemm,trainio+triton,graphp+gemm+triton" ;;
  b) list="decode+trainbf16+gemm,bulk+gemm+gemm+gemm,decode+trainio+gemm,decode+trainbf16+gemm+triton,bulkp+train32+triton,decode+gemm+gemm,decode@period=40@layers=16+trainio+triton,chat+gemm+triton" ;;
  c) list="graphp+gemm,decodeg+trainbf16,chat+trainbf16,graph+trainbf16,bulkp+trainbf16,graphp+train32,decode+trainbf16,decode+gemm,graph+train32,bulk+trainbf16,decode+graph+train32,decodep+trainbf16,chat+decode+train32" ;;
  d) list="decode+graph+train32,decodep+trainbf16,chat+decode+train32,decode+decode,graph+gemm,bulk+gemm,decode+decode+train32" ;;
  e) list="graph+decode+bulk+gemm,bulk@period=150@batch=128+gemm@size=16384,decodep+graphp+train32,decode+decodep@layers=12+gemm@size=6144,decodep+bulkp+gemm,graph+decodep@layers=12+trainbf16@layers=12" ;;
  *) per=$(( (n + 2) / 3 ))
     from=$(( (part - 1) * per + 1 )); to=$(( part * per ))
     list=$(echo $all | tr ' ' '\n' | sed -n "${from},${to}p" | paste -sd, -) ;;
esac
echo "part $part: $(echo "$list" | tr ',' ' ' | wc -w) mixes of $n: $list"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
SECS=${SECS:-8} PAUSE=${PAUSE:-1.5} RUNS=1 MODES=native,xq MIXES="$list" TMO=${TMO:-560} \
  timeout $(( ${TMO:-560} + 20 )) sh bench/gpu/mix-run.sh "$OUT/fam-$part" > "$OUT/fam-$part.log" 2>&1; echo "mix rc=$?"
grep -A60 "== the call's mixes" "$OUT/fam-$part.log" | head -50
# what the node decided for each best-effort tenant (bench/gpu/node-queues.py): narrowed, share, held
grep -A200 "== the node's decisions" "$OUT/fam-$part.log" | grep -v "^  queue" | head -80
