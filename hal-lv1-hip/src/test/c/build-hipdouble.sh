#!/bin/sh
# Builds the HIP test double: OUT/libamdhip64.so and its module blobs OUT/xq-spin.hipdouble and
# OUT/matmul.hipdouble (example-host's kernels). Its sources: hipdouble.c, hipdouble_engine.c and
# hipdouble_launch.c (with hipdouble_internal.h); build-fakehip.sh (interpose) compiles the same three.
# Usage: build-hipdouble.sh OUT   (CC overrides the compiler; default gcc)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: build-hipdouble.sh OUTPUT_DIR}
cc=${CC:-gcc}
if ! command -v "$cc" >/dev/null 2>&1; then
  echo "build-hipdouble.sh: C compiler '$cc' not found on PATH; the HIP test double needs it (Debian: apt-get install -y gcc)" >&2
  exit 1
fi
mkdir -p "$out"
"$cc" -std=c11 -O2 -g -Wall -Wextra -Werror -fPIC -shared -pthread -fvisibility=hidden \
  -o "$out/libamdhip64.so.tmp" "$here/hipdouble.c" "$here/hipdouble_engine.c" "$here/hipdouble_launch.c"
mv -f "$out/libamdhip64.so.tmp" "$out/libamdhip64.so"
cp -f "$here/xq-spin.hipdouble" "$out/xq-spin.hipdouble"
cp -f "$here/matmul.hipdouble" "$out/matmul.hipdouble"
