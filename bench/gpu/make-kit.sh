#!/bin/sh
# Puts what a GPU run of the scenario suite needs into bench/target/gpu-kit (git-ignored): the
# node launcher, every bundle the node runs (from node/target/bundles, with this module's and
# the CUDA adapter's and the runtime's freshest jars), and run-bench.sh. The Java runtime travels as .jre.tar.xz
# (hal-lv1-cuda/jre/make-jre.sh). Build first: mvn -q install -DskipTests (or ./xq help).
# Then, with the device tool:
#   run  command: SCENARIOS="fixed-priority --device cuda seconds=8" sh bench/target/gpu-kit/run-bench.sh
#        carry:   ["bench/target/gpu-kit", ".jre.tar.xz"]
# The kit also carries the example host bundle (dev.xq.example.host, with its PTX) and its check:
#   run  command: sh bench/target/gpu-kit/example-check.sh "$OUT"      (example-host/src/test/gpu/)
#        carry:   ["bench/target/gpu-kit", ".jre.tar.xz"]
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
kit="$root/bench/target/gpu-kit"
[ -f "$root/node/target/xq-node.jar" ] || { echo "make-kit: build the node first (./xq help builds it)" >&2; exit 1; }
[ -f "$root/.jre.tar.xz" ] || "$root/hal-lv1-cuda/jre/make-jre.sh"
rm -rf "$kit"
mkdir -p "$kit/lib" "$kit/bundles"
cp "$root/node/target/xq-node.jar" "$kit/"
cp "$root"/node/target/lib/*.jar "$kit/lib/"
cp "$root"/node/target/bundles/*.jar "$kit/bundles/"
# the node's start order (node/pom.xml's list); without it the launcher starts XQ bundles in file-name order
cp "$root/node/target/bundles/xq-bundles.txt" "$kit/bundles/" 2>/dev/null || true
for j in "$root"/bench/target/dev.xq.bench-*.jar "$root"/hal-lv1-cuda/target/dev.xq.hal.cuda-*.jar \
         "$root"/runtime/target/dev.xq.runtime-*.jar "$root"/example-host/target/dev.xq.example.host-*.jar; do
  [ -f "$j" ] && cp "$j" "$kit/bundles/"
done
cp "$root/bench/gpu/run-bench.sh" "$root/bench/gpu/campaign.sh" "$root/bench/gpu/tail.jfc" "$root/example-host/src/test/gpu/example-check.sh" "$kit/"
# the CUDA probes (nvcc on the GPU machine: nvcc -O2 -o /tmp/wake probe/wake.cu -lcuda)
mkdir -p "$kit/probe" && cp "$root"/bench/gpu/probe/*.cu "$root"/bench/gpu/probe/*.c "$kit/probe/"
ls "$kit"/bundles/dev.xq.example.host-*.jar >/dev/null 2>&1 \
  || echo "make-kit: WARNING: no example host bundle in the kit (mvn install -pl example-host,node -DskipTests); example-check.sh will refuse" >&2
echo "make-kit: $(du -sh "$kit" | cut -f1) in $kit"
