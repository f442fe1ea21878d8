#!/usr/bin/env bash
# XQ command line: ./xq demo | node | test | bench SCENARIO ... | example | queues | top | policy | hint | help
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
NODE_JAR="$ROOT/node/target/xq-node.jar"
BUNDLES="$ROOT/node/target/bundles"
STAMP="$ROOT/node/target/.xq-built"
# The XQ bundles the node starts (node/pom.xml copies them into $BUNDLES).

die() { echo "xq: $*" >&2; exit 1; }

java_version() { "$1/bin/java" -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -1; }

# A Java 25 runtime: $XQ_JAVA_HOME, a jlinked runtime in ./.jre (for machines without Java),
# an installed Temurin 25, or `java` on the PATH if it is 25.
find_java() {
  local c
  # A runtime that travelled packed (.jre.tar.xz, see hal-lv1-cuda/jre/make-jre.sh) is unpacked once.
  if [ ! -x "$ROOT/.jre/bin/java" ] && [ -f "$ROOT/.jre.tar.xz" ] && [ -z "${XQ_JAVA_HOME:-}" ]; then
    echo "xq: unpacking .jre.tar.xz into .jre" >&2
    mkdir -p "$ROOT/.jre.tmp" && tar -C "$ROOT/.jre.tmp" -xJf "$ROOT/.jre.tar.xz" && mv "$ROOT/.jre.tmp" "$ROOT/.jre" \
      || { rm -rf "$ROOT/.jre.tmp"; echo "xq: could not unpack .jre.tar.xz" >&2; }
  fi
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

if [ -n "${XQ_JAVA_HOME:-}" ] && [ "$(java_version "$XQ_JAVA_HOME" 2>/dev/null)" != "25" ]; then
  die "XQ_JAVA_HOME=$XQ_JAVA_HOME is not a Java 25 (no $XQ_JAVA_HOME/bin/java saying version \"25...\")"
fi
NO_JAVA="no Java 25 found. Install a JDK 25 (Temurin 25: https://adoptium.net; on Debian/Ubuntu its apt repository has temurin-25-jdk), or set XQ_JAVA_HOME to one, or put a jlinked runtime in $ROOT/.jre (hal-lv1-cuda/jre/make-jre.sh makes one)"

# Something to build: the launcher or an XQ bundle is missing, or a source, pom or bnd file
# changed since the last build that ./xq ran.
stale() {
  local b
  [ -f "$NODE_JAR" ] && [ -f "$STAMP" ] && [ -f "$BUNDLES/xq-bundles.txt" ] || return 0
  # the XQ bundles: the list the node's build wrote (node/pom.xml's dev.xq dependencies)
  for b in $(sed -n 's/^ *dev\.xq:\([^:]*\):.*/\1/p' "$BUNDLES/xq-bundles.txt"); do
    compgen -G "$BUNDLES/$b-*.jar" >/dev/null || return 0
  done
  [ -n "$(cd "$ROOT" && find pom.xml bnd.bnd */pom.xml */bnd.bnd */src/main -newer "$STAMP" -type f -print -quit 2>/dev/null)" ]
}

build() {
  if ! stale; then return 0; fi
  if ! command -v mvn >/dev/null; then
    if [ -f "$NODE_JAR" ]; then return 0; fi  # a machine that runs what was built elsewhere
    die "nothing is built here ($NODE_JAR is missing) and Maven is not installed to build it: apt-get install -y maven, or copy node/target from a machine that built it"
  fi
  local jdk; jdk="$(find_jdk)" || die "building needs a JDK 25 with javac. $NO_JAVA"
  echo "xq: building (mvn install -DskipTests) ..." >&2
  local started; started="$(date +%s)"
  (cd "$ROOT" && JAVA_HOME="$jdk" mvn -q -B install -DskipTests) || die "build failed"
  touch -d "@$started" "$STAMP"  # edits made during the build still count as newer
}

node() {
  local java_home; java_home="$(find_java)" || die "$NO_JAVA"
  # The parallel collector with a 1 GiB young generation: the command path allocates short-lived
  # objects, and on the H100 fixed-priority run (T=100 us) G1's pauses put fg P99 at 1.50x
  # standalone against 1.32x with this (ZGC: 1.57x).
  # On a host with two CPUs or fewer, only the C1 compiler: C2's compile bursts take one of the
  # two CPUs for milliseconds, and the threads that decide (an application's, a driver's) were
  # descheduled for 3-4 ms inside a 10 us decision after a policy swap; with C1 only, the
  # hot-swap scenario's longest decision gap on the 2-vCPU build VM fell from 1-6 ms to 0.5-0.7 ms,
  # and every other scenario there was as good or better (docs/performance.md, "JIT on two CPUs").
  # With C2, no speculation that a later decision can undo: a branch or a type the compiled code
  # never saw (the rehearsal's queues are not the tenants') made C2's code fall back to the
  # interpreter (deoptimised) 33-57 times in a 12 s run of the node's code on the H200, in bursts as a
  # mix's requests began; with the trap limits at 0 and type speculation off, 1-5 (docs/performance.md,
  # "The node's JIT without speculation"). C1 (two CPUs) does not speculate so.
  # XQ_JAVA_OPTS replaces all of it.
  local jit="-XX:PerMethodTrapLimit=0 -XX:PerBytecodeTrapLimit=0 -XX:-UseTypeSpeculation"
  if [ "$(nproc 2>/dev/null || echo 4)" -le 2 ]; then
    jit="-XX:TieredStopAtLevel=1"
  fi
  exec "$java_home/bin/java" --enable-native-access=ALL-UNNAMED --sun-misc-unsafe-memory-access=allow -Dxq.home="$ROOT" \
    ${XQ_JAVA_OPTS:--XX:+UseParallelGC -Xmn1g $jit} -jar "$NODE_JAR" "$@"
}

usage() {
  cat <<USAGE
usage: ./xq COMMAND
  demo [--json FILE]            two tenants on the simulated XPU: no scheduling, then hpf, then a live switch
  node                          an XQ node with the interactive Gogo shell (xq:devices, xq:top, xq:policy ...)
  serve [--bundles DIR]         a node without a shell, until SIGTERM (for a service manager)
  test                          the whole test suite (JUnit + Pax Exam), as CI runs it
  bench SCENARIO [--device sim|cuda] [--json FILE] [--plot DIR] [--wide] [key=value ...]
                                one scenario of the suite (xq:bench lists them)
  example [--device sim|cuda|hip] [--json FILE] [tasks=N size=N bgsize=N policies=native,hpf ...]
                                the example host bundle (example-host/): a tiled matmul from Java on
                                two queues at two priorities, alone, shared (native) and under hpf;
                                every result checked against the CPU (exit code 1 if one differs)
  run [--priority N] [--name NAME] [--socket PATH] [--stall] -- CMD [ARG...]
                                runs an unmodified CUDA or HIP program with its streams scheduled by
                                the node (LD_PRELOAD of the interposers); exit code is the program's;
                                --stall: level 2 for a CUDA program (XQ_STALL=1: what a held stream
                                launched waits on the device too, ~2 us per launch)
  queues | top [--once] | policy [NAME] | hint QUEUE KIND VALUE...   [--node HOST:PORT] [--token T]
                                xq:queues, xq:top, xq:policy, xq:hint asked of a running node over its
                                HTTP API; the node: --node or XQ_NODE (default 127.0.0.1:50000), its
                                token: --token or XQ_TOKEN
  help                          this text
USAGE
}

INTERPOSER="$ROOT/interpose/target/libxq-cuda.so"
INTERPOSER_HIP="$ROOT/interpose/target/libxq-hip.so"

# ./xq run: the preload and the variables of docs/processes.md, then the program itself (exec:
# its exit code and signals are its own). Builds nothing: a machine that only runs programs may
# have no Maven.
run_program() {
  local priority="" name="" socket="" stall=""
  while [ $# -gt 0 ]; do
    case "$1" in
      --priority) [ $# -ge 2 ] && [ -n "$2" ] || die "run: --priority needs a value: an integer in [-1000, 1000]"; priority="$2"; shift 2 ;;
      --name) [ $# -ge 2 ] && [ -n "$2" ] || die "run: --name needs a value: 1 to 64 of A-Z a-z 0-9 . _ : / + -"; name="$2"; shift 2 ;;
      --socket) [ $# -ge 2 ] && [ -n "$2" ] || die "run: --socket needs a path: the node's socket (default /run/xq/node.sock)"; socket="$2"; shift 2 ;;
      --stall) stall=1; shift ;;
      --) shift; break ;;
      -*) die "run: unknown option '$1'; allowed: --priority N, --name NAME, --socket PATH, --stall, then -- CMD" ;;
      *) break ;;
    esac
  done
  [ $# -gt 0 ] || die "run: no program given; usage: ./xq run [--priority N] [--name NAME] -- CMD [ARG...]"
  if [ -n "$priority" ]; then
    [[ "$priority" =~ ^-?[0-9]+$ ]] && [ "${#priority}" -le 6 ] && [ "$priority" -ge -1000 ] && [ "$priority" -le 1000 ] \
      || die "run: --priority '$priority' is not an integer in [-1000, 1000]"
    export XQ_PRIORITY="$priority"
  fi
  if [ -n "$name" ]; then
    [[ "$name" =~ ^[A-Za-z0-9._:/+-]{1,64}$ ]] || die "run: --name '$name' must be 1 to 64 of A-Z a-z 0-9 . _ : / + -"
    export XQ_NAME="$name"
  fi
  [ -z "$socket" ] || export XQ_SOCKET="$socket"
  [ -z "$stall" ] || export XQ_STALL=1
  [ -f "$INTERPOSER" ] || die "run: the interposer $INTERPOSER is missing; build it first (./xq demo or mvn install -DskipTests builds it; it needs gcc)"
  [ -f "$INTERPOSER_HIP" ] || die "run: the interposer $INTERPOSER_HIP is missing; build it first (./xq demo or mvn install -DskipTests builds it; it needs gcc)"
  if [[ "$1" == */* ]]; then
    # a path: the shell would say "Is a directory" or "Permission denied" from inside this script
    [ -e "$1" ] || die "run: program '$1' not found"
    [ ! -d "$1" ] || die "run: program '$1' is a directory; give an executable file"
    [ -x "$1" ] || die "run: program '$1' is not executable (chmod +x it, or run it through its interpreter: ./xq run -- python3 $1)"
  else
    command -v "$1" >/dev/null 2>&1 || die "run: program '$1' not found on the PATH"
  fi
  # both interposers: a process uses the one of its runtime (CUDA or HIP); the other stays idle
  export LD_PRELOAD="$INTERPOSER:$INTERPOSER_HIP${LD_PRELOAD:+:$LD_PRELOAD}"
  exec "$@"
}

# ./xq queues | top | policy | hint: the Gogo commands asked of a running node over its HTTP API
# (dev.xq.node.remote.Remote in the node's jar). Builds nothing, as run does: it may run where there is
# no Maven, and an operator asking a node must get the answer at once, not a build first.
REMOTE_MAIN="dev.xq.node.remote.Remote"
remote() {
  local java_home; java_home="$(find_java)" || die "$NO_JAVA"
  [ -f "$NODE_JAR" ] || die "$1: $NODE_JAR is missing; build first (./xq demo builds it, or mvn install -DskipTests)"
  # a jar built before these commands existed (the name is stored uncompressed in the jar's directory)
  grep -qa "${REMOTE_MAIN//.//}.class" "$NODE_JAR" \
    || die "$1: $NODE_JAR predates this command; rebuild it (mvn install -DskipTests -pl node, or ./xq demo)"
  # a short-lived client: C1 only and the serial collector start fastest
  exec "$java_home/bin/java" -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Xshare:auto -cp "$NODE_JAR" "$REMOTE_MAIN" "$@"
}

# ./xq test: DashboardIT drives Debian's headless Chromium through chromedriver. Installed once
# where this runs as root with apt-get; elsewhere the test says what is missing (and fails under CI=true).
browser_for_tests() {
  [ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ] && return 0
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "xq test: installing chromium chromium-driver (DashboardIT's headless browser) ..." >&2
    local log; log="$(mktemp)"
    if (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver) >"$log" 2>&1; then
      rm -f "$log"
    else
      tail -5 "$log" >&2; rm -f "$log"
      echo "xq test: WARNING: could not install chromium chromium-driver; DashboardIT will say so" >&2
    fi
  else
    echo "xq test: WARNING: /usr/bin/chromium or /usr/bin/chromedriver is missing and cannot be installed here (needs root and apt-get: apt-get install -y chromium chromium-driver); DashboardIT will say so" >&2
  fi
}

cmd="${1:-help}"; shift || true
case "$cmd" in
  demo)  build; node run xq:demo "$@" ;;
  bench) build; node run xq:bench "$@" ;;
  example) build; node run xq:example "$@" ;;
  node)  build; node node "$@" ;;
  serve) build; node "$@" serve ;;
  run)   run_program "$@" ;;
  queues|top|policy|hint) remote "$cmd" "$@" ;;
  test)
    jdk="$(find_jdk)" || die "tests need a JDK 25 with javac. $NO_JAVA"
    command -v mvn >/dev/null || die "Maven is needed (apt-get install -y maven)"
    browser_for_tests
    start=$(date +%s)
    rc=0
    (cd "$ROOT" && JAVA_HOME="$jdk" mvn -B install "$@") || rc=$?
    if [ "$rc" = 0 ]; then touch -d "@$start" "$STAMP" 2>/dev/null || true; fi
    echo "xq test: $([ "$rc" = 0 ] && echo passed || echo FAILED) in $(( $(date +%s) - start )) s"
    exit "$rc"
    ;;
  help|-h|--help) usage ;;
  *) echo "xq: unknown command '$cmd'" >&2; usage >&2; exit 2 ;;
esac
