#!/bin/sh
# Builds what the HIP interposer's tests run into OUT, from the HIP test double and the fake KFD
# of the adapters' own tests (hal-lv1-hip, hal-lv3-kfd; their sources, not their builds):
#   libamdhip64.so (the double) + xq-spin.hipdouble (its module), libfakekfd.so,
#   xq-hip-app, xq-hip-fuzz, libxq-hipvendor.so, xq-hip-tests (test_hip_*.c with test_hip.h, and test_node.c),
#   so5/libamdhip64.so.5 (the double under the real library's soname) and xq-hip-probe, which
#   needs libamdhip64.so.5 by soname and has no RPATH: it runs against the system's HIP runtime.
# Usage: build-fakehip.sh OUT   (CC overrides gcc)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
inc="$here/../../main/c"
root="$here/../../../.."
out=${1:?usage: build-fakehip.sh OUTPUT_DIR}
cc=${CC:-gcc}
if ! command -v "$cc" >/dev/null 2>&1; then
  echo "build-fakehip.sh: C compiler '$cc' not found on PATH; the HIP tests need it (Debian: apt-get install -y gcc)" >&2
  exit 1
fi
mkdir -p "$out/so5"
flags="-std=gnu11 -O2 -g -Wall -Wextra -Werror -pthread -I$inc"
CC="$cc" sh "$root/hal-lv1-hip/src/test/c/build-hipdouble.sh" "$out"
"$cc" -std=gnu11 -O2 -g -Wall -Wextra -Werror -fPIC -shared -pthread -fvisibility=hidden -Wl,-soname,libamdhip64.so.5 \
  -o "$out/so5/libamdhip64.so.5.tmp" "$root/hal-lv1-hip/src/test/c/hipdouble.c" \
  "$root/hal-lv1-hip/src/test/c/hipdouble_engine.c" "$root/hal-lv1-hip/src/test/c/hipdouble_launch.c"
mv -f "$out/so5/libamdhip64.so.5.tmp" "$out/so5/libamdhip64.so.5"
"$cc" -Wall -Wextra -Werror -O1 -shared -fPIC -o "$out/libfakekfd.so.tmp" "$root/hal-lv3-kfd/src/test/c/fakekfd.c" -ldl -lpthread
mv -f "$out/libfakekfd.so.tmp" "$out/libfakekfd.so"
"$cc" $flags -fPIC -shared -o "$out/libxq-hipvendor.so.tmp" "$here/xq_hip_vendor.c" -L"$out" -l:libamdhip64.so \
  -Wl,--disable-new-dtags,-rpath,'$ORIGIN'
mv -f "$out/libxq-hipvendor.so.tmp" "$out/libxq-hipvendor.so"
"$cc" $flags -o "$out/xq-hip-app.tmp" "$here/xq_hip_app.c" -L"$out" -l:libamdhip64.so -ldl -Wl,--disable-new-dtags,-rpath,'$ORIGIN'
mv -f "$out/xq-hip-app.tmp" "$out/xq-hip-app"
"$cc" $flags -o "$out/xq-hip-fuzz.tmp" "$here/xq_hip_fuzz.c" -L"$out" -l:libamdhip64.so -Wl,--disable-new-dtags,-rpath,'$ORIGIN'
mv -f "$out/xq-hip-fuzz.tmp" "$out/xq-hip-fuzz"
"$cc" $flags -o "$out/xq-hip-probe.tmp" "$here/xq_hip_probe.c" -L"$out/so5" -l:libamdhip64.so.5
mv -f "$out/xq-hip-probe.tmp" "$out/xq-hip-probe"
"$cc" $flags -o "$out/xq-hip-tests.tmp" "$here"/test_hip_*.c "$here/test_node.c" "$here/test_chaos.c"
mv -f "$out/xq-hip-tests.tmp" "$out/xq-hip-tests"
