#!/bin/sh
# Runs sim scenarios for two or more builds of the node, interleaved round after round on one
# machine, so that the machine's drift falls on every build alike (the architecture pass used it
# to show the refactored core's figures next to the previous build's).
#
#   BUILDS="old new" ROUNDS=2 SCENARIOS="fixed-priority|preemption-latency|hot-swap|scale" \
#     sh bench/gpu/compare-builds.sh OUTDIR
#
# Each build is a node/target directory copied to .devbuild/<name>-node (mvn install -DskipTests
# at that commit, then cp -r node/target). Java: XQ_JAVA_HOME, or a jlinked runtime carried as
# .jre.tar.xz. Writes OUTDIR/<round>-<build>-<n>-<scenario>.txt and a summary of the goal lines.
set -u
out=${1:?usage: compare-builds.sh OUTDIR}
mkdir -p "$out"
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
if [ -z "${XQ_JAVA_HOME:-}" ] && [ -f .jre.tar.xz ]; then
  mkdir -p /tmp/jre && [ -x /tmp/jre/bin/java ] || tar -xJf .jre.tar.xz -C /tmp/jre
  XQ_JAVA_HOME=$(dirname "$(dirname "$(find /tmp/jre -name java -type f | head -1)")")
  export XQ_JAVA_HOME
fi
[ -d node/target ] && [ ! -d .devbuild/current-node ] && mv node/target .devbuild/current-node 2>/dev/null
for r in $(seq 1 "${ROUNDS:-2}"); do
  for b in ${BUILDS:?set BUILDS to names under .devbuild/<name>-node}; do
    rm -rf node/target && cp -r ".devbuild/$b-node" node/target && touch node/target/.xq-built
    n=0
    echo "${SCENARIOS:-fixed-priority|preemption-latency|hot-swap|scale}" | tr '|' '\n' | while IFS= read -r s; do
      [ -z "$s" ] && continue
      n=$((n+1))
      f="$out/$r-$b-$n-$(echo "$s" | cut -d' ' -f1).txt"
      timeout "${TMO:-200}" ./xq bench $s --wide > "$f" 2>&1
      echo "rc=$?" >> "$f"
      echo "== round $r build $b: $s"; grep -E "goal|^ *(standalone|native|xq)|Lv[123]|gap|p99|decision" "$f" | head -20
    done
  done
done
