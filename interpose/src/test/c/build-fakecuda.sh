#!/bin/sh
# Builds the fake CUDA driver and the test programs into OUT:
#   libcuda.so.1 (+ libcuda.so), xq-cuda-app, xq-cuda-fuzz, libxq-next.so (another preloaded library), xq-launch-bench, xq-local-app + libxq-local.so,
#   xq-cuda-tests
# The fake driver is fake_cuda*.c (fake_cuda_int.h between them), the tests test_cuda_*.c (test_cuda.h) + test_node.c.
# Usage: build-fakecuda.sh OUT   (CC overrides gcc). The programs find OUT/libcuda.so.1 by an
# RPATH (not RUNPATH: --disable-new-dtags), so the fake wins over a real driver on LD_LIBRARY_PATH.
# -Bsymbolic: like the real driver, cuGetProcAddress hands out the library's own functions, never
# a preloaded definition of the same name.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
inc="$here/../../main/c"
out=${1:?usage: build-fakecuda.sh OUTPUT_DIR}
cc=${CC:-gcc}
if ! command -v "$cc" >/dev/null 2>&1; then
  echo "build-fakecuda.sh: C compiler '$cc' not found on PATH; the fake CUDA driver needs it (Debian: apt-get install -y gcc)" >&2
  exit 1
fi
mkdir -p "$out"
flags="-std=gnu11 -O2 -g -Wall -Wextra -Werror -pthread -I$inc"
"$cc" $flags -fPIC -shared -fvisibility=hidden -Wl,-soname,libcuda.so.1 -Wl,-Bsymbolic -o "$out/libcuda.so.1.tmp" "$here"/fake_cuda*.c
mv -f "$out/libcuda.so.1.tmp" "$out/libcuda.so.1"
ln -sf libcuda.so.1 "$out/libcuda.so"
for p in xq-cuda-app:xq_cuda_app.c xq-cuda-fuzz:xq_cuda_fuzz.c xq-launch-bench:xq_launch_bench.c; do
  "$cc" $flags -o "$out/${p%%:*}.tmp" "$here/${p#*:}" -L"$out" -l:libcuda.so.1 -ldl -lm -Wl,--disable-new-dtags,-rpath,'$ORIGIN'
  mv -f "$out/${p%%:*}.tmp" "$out/${p%%:*}"
done
"$cc" $flags -fPIC -shared -DXQ_LOCAL_LIB -o "$out/libxq-local.so.tmp" "$here/xq_local.c" -L"$out" -l:libcuda.so.1 \
  -Wl,--disable-new-dtags,-rpath,'$ORIGIN'
mv -f "$out/libxq-local.so.tmp" "$out/libxq-local.so"
"$cc" $flags -fPIC -shared -o "$out/libxq-next.so.tmp" "$here/xq_next.c" -ldl
mv -f "$out/libxq-next.so.tmp" "$out/libxq-next.so"
"$cc" $flags -o "$out/xq-local-app.tmp" "$here/xq_local.c" -ldl
mv -f "$out/xq-local-app.tmp" "$out/xq-local-app"
"$cc" $flags -o "$out/xq-cuda-tests.tmp" "$here"/test_cuda_*.c "$here/test_node.c" "$here/test_chaos.c"
mv -f "$out/xq-cuda-tests.tmp" "$out/xq-cuda-tests"
