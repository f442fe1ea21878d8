#!/bin/sh
# Runs the interposers' C tests: the CUDA ones, then the HIP ones (both run; the exit status
# fails when either failed).   Usage: run-tests.sh TARGET_DIR [TEST...]
# Needs TARGET_DIR/libxq-cuda.so, TARGET_DIR/libxq-hip.so, TARGET_DIR/fakecuda and TARGET_DIR/fakehip
# (build.sh, build-fakecuda.sh, build-fakehip.sh). Named tests run in whichever suite has them.
set -u
target=${1:?usage: run-tests.sh TARGET_DIR [TEST...]}
shift
rc=0
if [ $# -eq 0 ]; then
  "$target/fakecuda/xq-cuda-tests" "$target/libxq-cuda.so" "$target/fakecuda" || rc=1
  "$target/fakehip/xq-hip-tests" "$target" "$target/fakehip" || rc=1
  exit $rc
fi
cuda="" hip=""
for t in "$@"; do
  case "$t" in hip_*|lv3_*) hip="$hip $t" ;; *) cuda="$cuda $t" ;; esac
done
# shellcheck disable=SC2086
if [ -n "$cuda" ]; then "$target/fakecuda/xq-cuda-tests" "$target/libxq-cuda.so" "$target/fakecuda" $cuda || rc=1; fi
# shellcheck disable=SC2086
if [ -n "$hip" ]; then "$target/fakehip/xq-hip-tests" "$target" "$target/fakehip" $hip || rc=1; fi
exit $rc
