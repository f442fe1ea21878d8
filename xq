#!/usr/bin/env bash
# XQ command line: ./xq demo | node | test | bench SCENARIO ... | help
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
NODE_JAR="$ROOT/node/target/xq-node.jar"

die() { echo "xq: $*" >&2; exit 1; }

java_version() { "$1/bin/java" -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -1; }

# A Java 25 runtime: $XQ_JAVA_HOME, a jlinked runtime in ./.jre (for machines without Java),
# an installed Temurin 25, or `java` on the PATH if it is 25.
find_java() {
  local c
  for c in "${XQ_JAVA_HOME:-}" "$ROOT/.jre" /usr/lib/jvm/temurin-25-jdk-* /usr/lib/jvm/temurin-25* /usr/lib/jvm/java-25-*; do
    if [ -n "$c" ] && [ -x "$c/bin/java" ] && [ "$(java_version "$c")" = "25" ]; then echo "$c"; return 0; fi
  done
  if command -v java >/dev/null; then
    c="$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")"
    if [ "$(java_version "$c")" = "25" ]; then echo "$c"; return 0; fi
  fi
  return 1
}

# A JDK 25 (with javac) for building.
find_jdk() {
  local c
  for c in "${XQ_JAVA_HOME:-}" /usr/lib/jvm/temurin-25-jdk-* /usr/lib/jvm/temurin-25* /usr/lib/jvm/java-25-*; do
    if [ -n "$c" ] && [ -x "$c/bin/javac" ] && [ "$(java_version "$c")" = "25" ]; then echo "$c"; return 0; fi
  done
  if command -v javac >/dev/null; then
    c="$(dirname "$(dirname "$(readlink -f "$(command -v javac)")")")"
    if [ "$(java_version "$c")" = "25" ]; then echo "$c"; return 0; fi
  fi
  return 1
}

JAVA_HOME_25="$(find_java)" || die "no Java 25 found. Install a JDK 25 (e.g. Temurin 25: https://adoptium.net, or apt-get install temurin-25-jdk from the Adoptium repository), or set XQ_JAVA_HOME to one, or put a jlinked runtime in $ROOT/.jre"

stale() {
  [ -f "$NODE_JAR" ] || return 0
  [ -n "$(cd "$ROOT" && find pom.xml bnd.bnd */pom.xml */bnd.bnd */src/main -newer "$NODE_JAR" -type f -print -quit 2>/dev/null)" ]
}

build() {
  if ! stale; then return 0; fi
  if ! command -v mvn >/dev/null; then
    if [ -f "$NODE_JAR" ]; then echo "xq: sources are newer than the build, but Maven is not installed: using the built jars" >&2; return 0; fi
    die "Maven is needed to build (apt-get install -y maven)"
  fi
  local jdk; jdk="$(find_jdk)" || die "building needs a JDK 25 with javac; set XQ_JAVA_HOME"
  echo "xq: building (mvn install -DskipTests) ..." >&2
  (cd "$ROOT" && JAVA_HOME="$jdk" mvn -q -B install -DskipTests) || die "build failed"
}

node() {
  exec "$JAVA_HOME_25/bin/java" --enable-native-access=ALL-UNNAMED --sun-misc-unsafe-memory-access=allow -Dxq.home="$ROOT" ${XQ_JAVA_OPTS:-} -jar "$NODE_JAR" "$@"
}

usage() {
  cat <<USAGE
usage: ./xq COMMAND
  demo [--json FILE]            two tenants on the simulated XPU: no scheduling, then hpf, then a live switch
  node                          an XQ node with the interactive Gogo shell (xq:devices, xq:top, xq:policy ...)
  test                          the whole test suite (JUnit + Pax Exam), as CI runs it
  bench SCENARIO [--device sim|cuda] [--json FILE] [--plot DIR] [key=value ...]
                                one scenario of the suite (xq:bench lists them)
  help                          this text
USAGE
}

cmd="${1:-help}"; shift || true
case "$cmd" in
  demo)  build; node run xq:demo "$@" ;;
  bench) build; node run xq:bench "$@" ;;
  node)  build; node node "$@" ;;
  test)
    jdk="$(find_jdk)" || die "tests need a JDK 25 with javac; set XQ_JAVA_HOME"
    command -v mvn >/dev/null || die "Maven is needed (apt-get install -y maven)"
    start=$(date +%s)
    (cd "$ROOT" && JAVA_HOME="$jdk" mvn -B install "$@")
    echo "xq test: passed in $(( $(date +%s) - start )) s"
    ;;
  help|-h|--help) usage ;;
  *) usage >&2; exit 2 ;;
esac
