#!/bin/sh
# GPU machine: the same xq:bench lines on builds carried in .devbuild/<name>/ (each a tree with its
# xq script, node/target with xq-node.jar, lib and bundles, its interposer folder's target and
# bench/torch), alternated round after round, so that the machine's drift falls on every build
# alike. Issue 42's smoke ("no behaviour change") compared the build before the split with the
# build after it this way. Carry .devbuild and .jre.tar.xz; one device call:
#   BUILDS="before after" ROUNDS=1 LINES="torch-pair --device cuda seconds=8 modes=pair|fixed-priority --device cuda seconds=5" \
#     sh bench/gpu/before-after.sh "$OUT"
# Every table and JSON file comes back in $OUT/before-after.tgz.
set -u
out=${1:?usage: before-after.sh OUTDIR}
root=$(pwd)
res=/tmp/xq-before-after
mkdir -p "$out" "$res" /tmp/jre
[ -x /tmp/jre/bin/java ] || tar -C /tmp/jre -xJf .jre.tar.xz
XQ_JAVA_HOME=$(dirname "$(dirname "$(find /tmp/jre -name java -type f | head -1)")")
export XQ_JAVA_HOME PYTHONUNBUFFERED=1
# third-party bundles left out of a carried build (the carry limit) are taken from this tree's node
for b in ${BUILDS:-}; do
  for j in node/target/bundles/*.jar; do
    case "$(basename "$j")" in dev.xq.*) ;; *) [ -f ".devbuild/$b/$j" ] || cp "$j" ".devbuild/$b/$j" ;; esac
  done
done
nvidia-smi --query-gpu=name,driver_version,compute_mode,mig.mode.current --format=csv > "$res/gpu.txt" 2>&1
for r in $(seq 1 "${ROUNDS:-1}"); do
  for b in ${BUILDS:?set BUILDS to names under .devbuild/}; do
    n=0
    echo "${LINES:?set LINES to xq:bench lines separated by |}" | tr '|' '\n' | while IFS= read -r line; do
      [ -z "$line" ] && continue
      n=$((n+1))
      name=$(echo "$line" | cut -d' ' -f1)
      f="$res/$r-$b-$n-$name"
      s=$(date +%s)
      # shellcheck disable=SC2086
      (cd "$root/.devbuild/$b" && timeout "${TMO:-200}" ./xq bench $line --wide --json "$f.json" > "$f.txt" 2>&1)
      echo "rc=$? $(( $(date +%s) - s )) s" >> "$f.txt"
      echo "== round $r build $b: $line"; grep -E "goal|P99|standalone|native|xq|rc=" "$f.txt" | grep -v '^  \[' | tail -14
    done
    tar -C "$res" -czf "$out/before-after.tgz" . 2>/dev/null
  done
done
