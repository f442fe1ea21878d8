#!/bin/sh
# Builds the interposers: OUT/libxq-cuda.so (cuda_*.c) and OUT/libxq-hip.so (hip_*.c).   Usage: build.sh OUT   (CC overrides gcc)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: build.sh OUTPUT_DIR}
cc=${CC:-gcc}
if ! command -v "$cc" >/dev/null 2>&1; then
  echo "build.sh: C compiler '$cc' not found on PATH; the interposer needs it (Debian: apt-get install -y gcc)" >&2
  exit 1
fi
mkdir -p "$out"
# initial-exec TLS: the library is preloaded (its thread-locals in the static TLS block, read
# without a __tls_get_addr call; a launch read them through four of those, with their cache misses)
"$cc" -std=gnu11 -O2 -g -Wall -Wextra -Werror -fPIC -shared -pthread -fvisibility=hidden -ftls-model=initial-exec \
  -o "$out/libxq-cuda.so.tmp" "$here"/cuda_*.c -ldl
mv -f "$out/libxq-cuda.so.tmp" "$out/libxq-cuda.so"
"$cc" -std=gnu11 -O2 -g -Wall -Wextra -Werror -fPIC -shared -pthread -fvisibility=hidden \
  -o "$out/libxq-hip.so.tmp" "$here"/hip_*.c -ldl
mv -f "$out/libxq-hip.so.tmp" "$out/libxq-hip.so"
