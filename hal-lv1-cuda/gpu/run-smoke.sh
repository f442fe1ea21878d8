#!/bin/sh
# Runs on the GPU machine (no Java there): unpacks the jlinked runtime carried as .jre.tar.xz,
# checks the spin PTX with the toolkit's ptxas where present, and runs the CUDA smoke harness.
# Everything it measures goes to $OUT (cuda-smoke.json, smoke.log, gpu.txt).
set -eu
out=${OUT:-/tmp/xq-smoke}
mkdir -p "$out" /tmp/jre
tar -C /tmp/jre -xJf .jre.tar.xz
{
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv || true
    nproc
    if command -v ptxas >/dev/null 2>&1; then
        ptxas -arch=sm_90 -v hal-lv1-cuda/src/main/resources/dev/xq/hal/cuda/spin.ptx -o /tmp/spin.cubin 2>&1 \
            && echo "ptxas sm_90: spin.ptx ok"
    else
        echo "no ptxas"
    fi
} > "$out/gpu.txt" 2>&1
cat "$out/gpu.txt"
set +e
timeout 400 /tmp/jre/bin/java --enable-native-access=ALL-UNNAMED -Xss1m \
    -cp ".gpu/lib/dev.xq.hal.cuda-tests.jar:.gpu/lib/dev.xq.hal.cuda-0.1.0-SNAPSHOT.jar:.gpu/lib/dev.xq.runtime-0.1.0-SNAPSHOT.jar" \
    dev.xq.hal.cuda.CudaSmoke --out "$out" "$@" > "$out/smoke.log" 2>&1
rc=$?
cat "$out/smoke.log"
exit $rc
