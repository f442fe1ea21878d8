#!/bin/sh
# GPU machine: an A/B of runtime bundles on one machine, runs taken in turn (machines differ from
# call to call by as much as the effects sought: the host's CPU ticked 4.95 to 9.85 ms in session 39).
# Usage: AB="wait old wait old" sh bench/gpu/ab-run.sh OUT
#   each name V is .ab/runtime-V.jar (a dev.xq.runtime bundle, git-ignored: carry .ab), copied over
#   node/target/bundles' runtime before its run, and .ab/libxq-cuda-V.so, where there is one, over
#   interpose/target/libxq-cuda.so (an A/B of the interposer too; put one for every name then); the first run has every mode (standalone, native,
#   xq), the others xq only (their ratios: against the first's). AB_MIX: the mix (default
#   bulk+gemm+gemm; custom=... as mix-run.sh; several ';'-separated, each run going through all). Every run's results in OUT/ab-results.tgz; each
#   run's xq figures (LC P50/P99/max, BE iterations per second) printed as it ends, and at the end
#   every run's LC P99 / the first run's standalone P99 and BE rate / its native rate (the tenants'
#   own P99, as the bench judges; also in ab-summary.txt), with the LC requests over twice the
#   run's median among the first 16 and the rest (the first requests after a warm-up apart).
#   OUT/ab-results.tgz is written again after every run, so a call cut short keeps the runs done.
set -u
out=${1:?usage: ab-run.sh OUTDIR}
res=/tmp/xq-ab
rm -rf "$res"; mkdir -p "$res" "$out"
b=node/target/bundles/dev.xq.runtime-0.1.0-SNAPSHOT.jar
cp "$b" "$res/runtime-as-carried.jar"
so=interpose/target/libxq-cuda.so
cp "$so" "$res.libxq-cuda.so"
k=0
for v in ${AB:?AB names the bundles in order}; do
  k=$((k+1))
  cp ".ab/runtime-$v.jar" "$b" || exit 1
  if [ -f ".ab/libxq-cuda-$v.so" ]; then cp ".ab/libxq-cuda-$v.so" "$so" || exit 1; fi
  m=xq; [ "$k" = 1 ] && m=standalone,native,xq
  MIXES="${AB_MIX:-bulk+gemm+gemm}" SECS="${SECS:-12}" MODES=$m TMO="${TMO:-110}" sh bench/gpu/mix-run.sh "$res/$k-$v" > "$res/$k-$v.txt" 2>&1
  (cd "$res/$k-$v" && tar xzf mix-results.tgz && rm -f mix-results.tgz clocks-*.csv)
  echo "== run $k: $v"
  grep -E "done \(|^trace:" "$res/$k-$v.txt"
  for j in "$res/$k-$v"/logs-*/*/xq/*.json; do
    python3 - "$j" <<'PY'
import json, os, sys
d = json.load(open(sys.argv[1]))
n = os.path.basename(os.path.dirname(os.path.dirname(sys.argv[1]))) + " " + os.path.basename(sys.argv[1])[:-5]
if "lat_ms" in d:
    s = sorted(d["lat_ms"])
    print("  %s P50 %.1f P99 %.1f max %.1f ms" % (n, s[len(s) // 2], s[int(0.99 * (len(s) - 1))], s[-1]))
else:
    print("  %s %.2f it/s" % (n, d.get("it_per_s", 0.0)))
PY
  done
  # what is done so far, under OUT after every run: a device call cut short returns it
  tar -C "$res" -czf "$out/ab-results.tgz" .
done
cp "$res/runtime-as-carried.jar" "$b"
cp "$res.libxq-cuda.so" "$so"
rm -f "$res.libxq-cuda.so"
# every run judged against the first one's standalone and native: LC P99 / standalone P99, BE rate / native
python3 - "$res" <<'PY' | tee "$res/ab-summary.txt"
import glob, json, os, sys
res = sys.argv[1]
runs = sorted(glob.glob(os.path.join(res, "[0-9]*-*")), key=lambda d: int(os.path.basename(d).split("-")[0]))
runs = [d for d in runs if os.path.isdir(d)]
base = {}
for m in glob.glob(os.path.join(runs[0], "mix-*.json")) if runs else []:
    for mix in json.load(open(m)).get("mixes", []):
        for t in mix.get("tenants", []):
            if t.get("role") == "lc":
                base[(mix["name"], t["name"])] = ("lc", t.get("p99_ms", {}).get("standalone"))
            else:
                base[(mix["name"], t["name"])] = ("be", t.get("it_per_s", {}).get("native"))
print("against run 1's standalone (LC P99) and native (BE rate):")
for d in runs:
    for j in sorted(glob.glob(os.path.join(d, "logs-*", "*", "xq", "*.json"))):
        mix = os.path.basename(os.path.dirname(os.path.dirname(j)))
        name = os.path.basename(j)[:-5]
        x = json.load(open(j))
        kind, ref = base.get((mix, name), (None, None))
        if not ref:
            continue
        v = x.get("p99_ms") if kind == "lc" else x.get("it_per_s")
        if v is not None:
            extra = ""
            if kind == "lc" and x.get("lat_ms"):
                # the first requests apart (a service's first ones after its warm-up): how many of
                # the first 16 and of the rest took over twice the run's median
                lat = x["lat_ms"]
                med = sorted(lat)[len(lat) // 2]
                extra = "   over 2 x P50: first 16 %d, rest %d" % (sum(1 for t in lat[:16] if t > 2 * med),
                                                                 sum(1 for t in lat[16:] if t > 2 * med))
            print("  %-10s %-24s %-10s %s %.2f%s" % (os.path.basename(d), mix, name,
                                                     "P99/standalone" if kind == "lc" else "rate/native", v / ref, extra))
PY
tar -C "$res" -czf "$out/ab-results.tgz" .
