# Session 115: which driver entry points PyTorch's host waits reach (XQ_LOG=3 lookups), whether
# each wait waits under the node (bench/gpu/sync-probe.py: an event recorded before it must read
# done after it), alone and beside Triton; then session 114's diagnosis (bench/gpu/s114-diag.sh).
#   usage (device): sh bench/gpu/s115-diag.sh
grep -n "PFN_cuCtxSynchronize\|PFN_cuStreamSynchronize\|PFN_cuEventSynchronize" /usr/local/cuda/include/cudaTypedefs.h | head
./xq serve > /tmp/p-node.txt 2>&1 &
node=$!
sleep 8
XQ_LOG=3 timeout 60 ./xq run --priority 1 --name probe -- python3 -u bench/gpu/sync-probe.py 100 > /tmp/p-alone.txt 2> /tmp/p-alone.err
echo "== probe alone"; cat /tmp/p-alone.txt; grep -h "lookup\|dlsym\|host waits\|unwrapped" /tmp/p-alone.err | sort | uniq -c | cut -c1-240 | head -30
XQ_LOG=2 timeout 60 ./xq run --priority 1 --name triton -- python3 -u bench/torch/family/tenant.py --kind triton --seconds 12 \
  > /tmp/p-triton.txt 2> /tmp/p-triton.err &
t=$!
sleep 5
XQ_LOG=2 timeout 60 ./xq run --priority 1 --name probe -- python3 -u bench/gpu/sync-probe.py 200 > /tmp/p-beside.txt 2> /tmp/p-beside.err
wait $t
echo "== probe beside triton"; cat /tmp/p-beside.txt; grep -h "host waits\|unwrapped" /tmp/p-beside.err | cut -c1-240
echo "== triton beside the probe"; tail -1 /tmp/p-triton.txt | cut -c1-160; grep -h "host waits\|unwrapped\|launched" /tmp/p-triton.err | cut -c1-240
kill $node; wait $node 2>/dev/null
mkdir -p /tmp/p; cp /tmp/p-* /tmp/p/ 2>/dev/null; tar czf $OUT/p.tgz -C /tmp p
sh bench/gpu/s114-diag.sh
