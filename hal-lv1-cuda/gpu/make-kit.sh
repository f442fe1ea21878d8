#!/bin/sh
# Puts what the GPU smoke run needs into <repo>/.gpu (git-ignored through .git/info/exclude):
# the runtime bundle, this bundle and its test classes as jars. The jlinked runtime comes from
# jre/make-jre.sh as <repo>/.jre.tar.xz. Then, with the device tool:
#   run  command: sh hal-lv1-cuda/gpu/run-smoke.sh   carry: [".gpu", ".jre.tar.xz"]
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
export JAVA_HOME=${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}
repo=${MAVEN_REPO:-$HOME/.m2/repository}
version=0.1.0-SNAPSHOT

cd "$root"
mvn -q -pl hal-lv1-cuda install -DskipTests
hal-lv1-cuda/jre/make-jre.sh
rm -rf .gpu
mkdir -p .gpu/lib
cp "$repo/dev/xq/dev.xq.runtime/$version/dev.xq.runtime-$version.jar" .gpu/lib/
cp "hal-lv1-cuda/target/dev.xq.hal.cuda-$version.jar" .gpu/lib/
"$JAVA_HOME/bin/jar" cf .gpu/lib/dev.xq.hal.cuda-tests.jar -C hal-lv1-cuda/target/test-classes .
echo "make-kit: $(du -sh .gpu | cut -f1) in .gpu, $(du -h .jre.tar.xz | cut -f1) in .jre.tar.xz"
