#!/bin/sh
# Runs on the GPU machine (no Java there): unpacks the jlinked runtime carried as .jre.tar.xz
# and runs each line of $SCENARIOS as "xq:bench LINE" on a fresh node. Tables go to stdout;
# every table and JSON file goes back as one $OUT/results.tar.gz (the device tool returns only
# a few files). No --plot: the GPU machine has no fonts (fontconfig), which charts need.
set -u
kit=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-/tmp/xq-bench}
res=/tmp/xq-results
mkdir -p "$out" "$res" /tmp/jre /tmp/xqhot /tmp/xq-jfr
[ -x /tmp/jre/bin/java ] || tar -C /tmp/jre -xJf .jre.tar.xz
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > "$res/gpu.txt" 2>&1 || true
i=0
echo "${SCENARIOS:?set SCENARIOS to xq:bench command lines, one per line}" | while IFS= read -r line; do
  [ -z "$line" ] && continue
  i=$((i+1))
  name=$(echo "$line" | cut -d' ' -f1)
  echo "=== $line"
  # The node's JVM options as ./xq starts a node (the parallel collector with a 1 GiB young
  # generation); XQ_JAVA_OPTS replaces them, as for ./xq. XQ_GCLOG=1 logs GC pauses and
  # safepoints next to the scenario's table.
  gclog=""
  [ "${XQ_GCLOG:-0}" = 1 ] && gclog="-Xlog:gc*,safepoint:file=$res/$i-$name-gc.log:uptime"
  # XQ_JFR=1 records the run (every command's host times: the dev.xq.Command event; safepoints,
  # parks over 200 us, monitor waits over 100 us, deoptimisations: tail.jfc) and writes TailAnalysis's
  # report of where fg's slow tasks lost their time next to the table; the recording itself
  # comes back when it is small enough.
  jfr=""
  [ "${XQ_JFR:-0}" = 1 ] && jfr="-XX:StartFlightRecording:filename=/tmp/xq-jfr/$i-$name.jfr,settings=$kit/tail.jfc"
  # shellcheck disable=SC2086
  timeout 280 /tmp/jre/bin/java --enable-native-access=ALL-UNNAMED --sun-misc-unsafe-memory-access=allow \
    ${XQ_JAVA_OPTS--XX:+UseParallelGC -Xmn1g} $gclog $jfr \
    -Dxq.home="$kit" -Dxq.bundles="$kit/bundles" -jar "$kit/xq-node.jar" --bundles /tmp/xqhot \
    run xq:bench $line --wide --json "$res/$i-$name.json" > "$res/$i-$name.txt" 2>&1
  echo "rc=$?" >> "$res/$i-$name.txt"
  grep -v '^  \[' "$res/$i-$name.txt" | tail -30
  if [ -n "$jfr" ] && [ -f "/tmp/xq-jfr/$i-$name.jfr" ]; then
    /tmp/jre/bin/java -cp "$(ls "$kit"/bundles/dev.xq.bench-*.jar | head -1)" dev.xq.bench.tail.TailAnalysis \
      "/tmp/xq-jfr/$i-$name.jfr" "${XQ_JFR_QUEUE:-fg}" "${XQ_JFR_TASK:-20}" 12 > "$res/$i-$name-tail.txt" 2>&1
    cat "$res/$i-$name-tail.txt"
    # where the device idled while fg and bg shared it (each mode's pair of queues)
    /tmp/jre/bin/java -cp "$(ls "$kit"/bundles/dev.xq.bench-*.jar | head -1)" dev.xq.bench.tail.SwitchAnalysis \
      "/tmp/xq-jfr/$i-$name.jfr" fg bg > "$res/$i-$name-switch.txt" 2>&1
    cat "$res/$i-$name-switch.txt"
    # what fg's tasks met on arrival: when bg was suspended, which bg commands ran in fg's way
    /tmp/jre/bin/java -cp "$(ls "$kit"/bundles/dev.xq.bench-*.jar | head -1)" dev.xq.bench.tail.ArrivalAnalysis \
      "/tmp/xq-jfr/$i-$name.jfr" fg bg "${XQ_JFR_TASK:-20}" > "$res/$i-$name-arrival.txt" 2>&1
    cat "$res/$i-$name-arrival.txt"
    # timed parks that woke a millisecond or more late, per thread (the host's wake-ups)
    /tmp/jre/bin/java -cp "$(ls "$kit"/bundles/dev.xq.bench-*.jar | head -1)" dev.xq.bench.tail.ParkAnalysis \
      "/tmp/xq-jfr/$i-$name.jfr" > "$res/$i-$name-parks.txt" 2>&1
    cat "$res/$i-$name-parks.txt"
    [ "$(wc -c < "/tmp/xq-jfr/$i-$name.jfr")" -lt 15000000 ] && cp "/tmp/xq-jfr/$i-$name.jfr" "$out/" 2>/dev/null
  fi
done
tar -C "$res" -czf "$out/results.tar.gz" .
