#!/bin/sh
# Stages the context of XQ's image (deploy/image/Dockerfile) in target/image-context from a built
# tree: the jlinked runtime as jre.tar.xz, the launcher, the node and its bundles, the interposers
# and xq-k8s.jar. Build first: mvn install -DskipTests (needs gcc for the interposers).
# The runtime has make-jre.sh's modules and jdk.httpserver (the webhook's HTTPS server); it is
# linked here, not taken from .jre.tar.xz, which lacks that module.
# Usage: deploy/image/build.sh [TAG]   (prints the docker build command; runs it where docker is)
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
ctx="$root/target/image-context"
tag=${1:-xq:0.1.0-SNAPSHOT}
java_home=${JAVA_HOME:-$(ls -d /usr/lib/jvm/temurin-25* 2>/dev/null | head -n 1)}
base=$(sed -n 's/^modules=\${XQ_JRE_MODULES:-\(.*\)}$/\1/p' "$root/hal-lv1-cuda/jre/make-jre.sh")
modules="${base:?make-jre.sh names no modules},jdk.httpserver"

for f in node/target/xq-node.jar node/target/bundles/xq-bundles.txt interpose/target/libxq-cuda.so \
         interpose/target/libxq-hip.so k8s/target/xq-k8s.jar; do
  [ -f "$root/$f" ] || { echo "build.sh: $f is missing; build first: mvn install -DskipTests" >&2; exit 1; }
done
[ -x "$java_home/bin/jlink" ] || { echo "build.sh: no jlink in '$java_home'; set JAVA_HOME to a JDK 25" >&2; exit 1; }

rm -rf "$ctx"
mkdir -p "$ctx/node/target" "$ctx/interpose/target" "$ctx/k8s/target" "$ctx/deploy"
"$java_home/bin/jlink" --add-modules "$modules" --strip-debug --no-man-pages --no-header-files \
    --compress=zip-0 --output "$ctx/jre"
echo "$modules" > "$ctx/jre/.modules"
tar -C "$ctx/jre" -cf - . | xz -T0 -6 > "$ctx/jre.tar.xz"
rm -rf "$ctx/jre"
cp "$root/xq" "$ctx/xq"
cp -r "$root/node/target/xq-node.jar" "$root/node/target/lib" "$root/node/target/bundles" "$ctx/node/target/"
: > "$ctx/node/target/.xq-built"
cp "$root/interpose/target/libxq-cuda.so" "$root/interpose/target/libxq-hip.so" "$ctx/interpose/target/"
cp "$root/k8s/target/xq-k8s.jar" "$ctx/k8s/target/"
cp "$root/deploy/image/node-start.sh" "$ctx/deploy/"
cp "$root/deploy/image/Dockerfile" "$ctx/Dockerfile"
echo "build.sh: context in $ctx ($(du -sh "$ctx" | cut -f1)); runtime modules: $modules"
if command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1; then
  docker build -t "$tag" "$ctx"
else
  echo "build.sh: no docker daemon here; build with: docker build -t $tag $ctx"
fi
