#!/bin/sh
# The example host bundle on a CUDA GPU, checked: runs `xq:example --device cuda` (example-host/,
# README "Writing a host application") on a fresh node with the jlinked runtime, and prints the
# table (fg latency alone, shared under native, and under hpf), the check's result (every
# product copied back and compared with the CPU's, bit for bit) and the exit code.
#
# On the GPU machine, which has no Java and no Maven. Prepare here (this machine):
#   mvn -q install -DskipTests && bench/gpu/make-kit.sh        # the kit (with this script) and .jre.tar.xz
# then with the device tool, from the repository root:
#   command: sh example-host/src/test/gpu/example-check.sh "$OUT"
#   carry:   ["bench/target/gpu-kit", ".jre.tar.xz"]
# Extra xq:example words go in EXAMPLE_ARGS (e.g. EXAMPLE_ARGS="tasks=200 size=1024").
# OUTDIR gets example-cuda.txt (the node's output), example-cuda.json (the figures), gpu.txt
# (nvidia-smi) and summary.txt. Exit code: 0 when the check passed, else the node's (1: a
# result differed from the CPU's, or the run failed; 124: timed out).
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../../.." 2>/dev/null && pwd)
out=${1:-${OUT:-/tmp/xq-example}}
mkdir -p "$out"
out=$(cd "$out" && pwd)
# the kit: KIT, or the one beside this script (make-kit copies it in), or bench/target/gpu-kit
if [ -n "${KIT:-}" ]; then
  kit=$KIT
elif [ -f "$here/xq-node.jar" ]; then
  kit=$here
  root=$(cd "$here/../../.." && pwd)
else
  kit="$root/bench/target/gpu-kit"
fi
[ -f "$kit/xq-node.jar" ] || { echo "example-check: no node in $kit; run bench/gpu/make-kit.sh first and carry bench/target/gpu-kit" >&2; exit 2; }
ls "$kit"/bundles/dev.xq.example.host-*.jar >/dev/null 2>&1 \
  || { echo "example-check: the kit has no example host bundle (dev.xq.example.host); rebuild it with bench/gpu/make-kit.sh" >&2; exit 2; }
# Java 25: XQ_JAVA_HOME, a java 25 on the PATH, or the jlinked runtime carried as .jre.tar.xz
java=""
if [ -n "${XQ_JAVA_HOME:-}" ]; then
  java="$XQ_JAVA_HOME/bin/java"
elif command -v java >/dev/null 2>&1 && java -version 2>&1 | grep -q 'version "25'; then
  java=java
else
  for t in "$root/.jre.tar.xz" "$kit/.jre.tar.xz" ./.jre.tar.xz; do
    if [ -f "$t" ]; then
      mkdir -p /tmp/jre
      [ -x /tmp/jre/bin/java ] || tar -C /tmp/jre -xJf "$t"
      java=/tmp/jre/bin/java
      break
    fi
  done
fi
[ -n "$java" ] || { echo "example-check: no Java 25: set XQ_JAVA_HOME or carry .jre.tar.xz (hal-lv1-cuda/jre/make-jre.sh makes it)" >&2; exit 2; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > "$out/gpu.txt" 2>&1 || true
hot=$(mktemp -d /tmp/xq-example-hot.XXXXXX)
# EXAMPLE_CFG="pid:key=value ..." writes node configuration into the run's hot-deploy folder
# (e.g. EXAMPLE_CFG="dev.xq.hal.cuda:stall=off"); the node applies it before the example starts
for c in ${EXAMPLE_CFG:-}; do echo "${c#*:}" >> "$hot/${c%%:*}.cfg"; done
echo "example-check: $(head -2 "$out/gpu.txt" | tail -1); node from $kit"
# shellcheck disable=SC2086
timeout "${EXAMPLE_TIMEOUT:-500}" "$java" --enable-native-access=ALL-UNNAMED --sun-misc-unsafe-memory-access=allow \
  ${XQ_JAVA_OPTS--XX:+UseParallelGC -Xmn1g} -Dxq.home="$kit" -Dxq.bundles="$kit/bundles" -jar "$kit/xq-node.jar" --bundles "$hot" \
  run xq:example --device cuda --json "$out/example-cuda.json" ${EXAMPLE_ARGS:-} > "$out/example-cuda.txt" 2>&1
rc=$?
rm -rf "$hot"
grep -v '^  \[' "$out/example-cuda.txt" | grep -E '^(example|mode|alone|shared|hpf|native|check|wrote|xq)|rror|xception' | tail -40
{
  echo "device: $(head -2 "$out/gpu.txt" | tail -1)"
  grep -E '^(mode|alone|shared|hpf|[a-z-]+ +[a-z-]+ +[0-9])' "$out/example-cuda.txt" || true
  grep -E '^check:' "$out/example-cuda.txt" || echo "check: NOT RUN (exit code $rc; see example-cuda.txt)"
  echo "exit code: $rc"
} > "$out/summary.txt"
echo "--- summary"
cat "$out/summary.txt"
if [ "$rc" = 0 ] && grep -q '^check: PASSED' "$out/example-cuda.txt"; then
  exit 0
fi
[ "$rc" = 0 ] && rc=1
exit "$rc"
