#!/bin/sh
# Runs the interposer's C tests.   Usage: run-tests.sh TARGET_DIR [TEST...]
# Needs TARGET_DIR/libxq-cuda.so and TARGET_DIR/fakecuda (build.sh, build-fakecuda.sh).
set -eu
target=${1:?usage: run-tests.sh TARGET_DIR [TEST...]}
shift
exec "$target/fakecuda/xq-cuda-tests" "$target/libxq-cuda.so" "$target/fakecuda" "$@"
