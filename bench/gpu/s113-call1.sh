# Session 113, call 1 (for the next session with device time; no XQ in its first part):
# 1. does native time slicing split the device by how often each process waits on it?
#    (bench/gpu/native-slice.py: the trainer, a GEMM process and Triton at three --sync-every
#    settings, alone, in pairs and in trios, natively; about 11 runs of SECS s plus start-ups)
# 2. then session 112's call 2, short: chat bare and two chat mixes, native sharing against the
#    defaults (CHAT_MIXES as there; AB=1 adds its launch path).
#   usage (device): TMO=200 sh bench/gpu/s113-call1.sh       (OUT: where the files go back)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
timeout ${NS_TMO:-260} python3 bench/gpu/native-slice.py /tmp/ns --seconds ${NS_SECS:-8} --syncs ${NS_SYNCS:-4,16,64} --three \
  > /tmp/ns.log 2>&1; echo "native-slice rc=$?"
cat /tmp/ns.log; tar czf $OUT/ns.tgz -C /tmp ns ns.log
AB=${AB:-0} CHAT_MIXES="${CHAT_MIXES:-custom=chat+trainbf16;custom=chat+gemm+triton}" TMO=${TMO:-200} sh bench/gpu/s112-call2.sh
