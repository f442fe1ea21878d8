#!/bin/sh
# Builds a jlinked Java 25 runtime for machines that have no Java (the GPU machine of the
# device tool): <repo>/.jre (the runtime) and <repo>/.jre.tar.xz (the same, packed to travel).
# Both are git-ignored. Usage: hal-lv1-cuda/jre/make-jre.sh [--force]
#
# Modules: what the XQ node and its bundles use (JFR events, JMX for CPU time, XML for
# Metatype/SCR descriptors, naming/rmi/sql for third-party bundles that import them (Jetty, for
# the HTTP API, imports javax.naming and javax.rmi.ssl), java.desktop
# for headless plots, jdk.unsupported for libraries that still use sun.misc.Unsafe).
# Override with XQ_JRE_MODULES=comma,separated,list.
#
# The module image is linked without jlink compression (zip-0): xz packs the uncompressed
# image to ~22 MB instead of ~36 MB for a zip-9 image (compressed data does not compress
# again), and an uncompressed image starts faster. --strip-debug, --no-man-pages and
# --no-header-files keep it small.
set -eu

root=$(cd "$(dirname "$0")/../.." && pwd)
java_home=${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}
modules=${XQ_JRE_MODULES:-java.base,java.logging,java.management,jdk.management,java.naming,java.rmi,java.xml,java.sql,jdk.jfr,java.desktop,jdk.unsupported}
out="$root/.jre"
tarball="$root/.jre.tar.xz"

if [ ! -x "$java_home/bin/jlink" ]; then
    echo "make-jre: no jlink at $java_home/bin/jlink; set JAVA_HOME to a JDK 25" >&2
    exit 1
fi
version=$("$java_home/bin/java" -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -n 1)
if [ "$version" != "25" ]; then
    echo "make-jre: $java_home is Java '$version'; XQ needs 25" >&2
    exit 1
fi
if [ "${1:-}" != "--force" ] && [ -x "$out/bin/java" ] && [ -f "$tarball" ] \
        && [ "$(cat "$out/.modules" 2>/dev/null)" = "$modules" ]; then
    echo "make-jre: $out and $tarball are up to date (--force rebuilds)"
    exit 0
fi

rm -rf "$out.tmp"
"$java_home/bin/jlink" --add-modules "$modules" --strip-debug --no-man-pages --no-header-files \
    --compress=zip-0 --output "$out.tmp"
echo "$modules" > "$out.tmp/.modules"
"$out.tmp/bin/java" -version >/dev/null 2>&1 || { echo "make-jre: the linked runtime does not start" >&2; exit 1; }
rm -rf "$out"
mv "$out.tmp" "$out"

tar -C "$out" -cf - . | xz -T0 -6 > "$tarball.tmp"
mv "$tarball.tmp" "$tarball"
echo "make-jre: $out ($(du -sh "$out" | cut -f1)), $tarball ($(du -h "$tarball" | cut -f1))"
echo "make-jre: on the target: mkdir -p /tmp/jre && tar -C /tmp/jre -xJf .jre.tar.xz && /tmp/jre/bin/java -version"
