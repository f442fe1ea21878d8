#!/bin/sh
# The interposer's data cache misses per launch, counted by valgrind's cachegrind (deterministic,
# unlike timings on a shared VM): the C test overhead_cold (1 MiB of the program's memory touched
# between launches, as the driver and the framework do on a GPU host) runs its bench under
# cachegrind (2,000 launches x 6 rounds, XQ_LOG unset: the production path), and this prints, per
# run, the D1 read and write misses per launch in the interposer's functions and in code without
# symbols (libc, the vDSO), with the functions that miss most. CODE=1: the bench also runs 96 KiB
# of code between launches (xq-launch-bench's XQ_BENCH_CODE: the instruction caches a framework
# leaves), and the instruction-cache misses a launch (I1, the path's code lines fetched) are
# printed too (the interposer's functions only).
# Usage: cachegrind-launch.sh TARGET_DIR   (after build.sh TARGET_DIR and build-fakecuda.sh TARGET_DIR/fakecuda;
# needs valgrind: apt-get install -y valgrind)
set -eu
target=$(cd "${1:?usage: cachegrind-launch.sh TARGET_DIR}" && pwd)
command -v valgrind > /dev/null || { echo "cachegrind-launch.sh: valgrind not found (Debian: apt-get install -y valgrind)" >&2; exit 1; }
w=$(mktemp -d /tmp/xq-cachegrind-XXXXXX)
mkdir -p "$w/fakecuda"
cp -a "$target/fakecuda/." "$w/fakecuda/"
mv "$w/fakecuda/xq-launch-bench" "$w/fakecuda/real-bench"
cat > "$w/fakecuda/xq-launch-bench" <<EOS
#!/bin/sh
unset XQ_LOG
${CODE:+export XQ_BENCH_CODE=1}
exec valgrind --tool=cachegrind --cache-sim=yes --I1=32768,8,64 --D1=32768,8,64 --LL=1048576,16,64 --cachegrind-out-file=$w/out.\$\$ $w/fakecuda/real-bench 2000
EOS
chmod +x "$w/fakecuda/xq-launch-bench"
cp "$target/libxq-cuda.so" "$w/"
# the test's own checks fail under cachegrind (its runs are shorter, XQ_LOG unset): only the counts matter
"$w/fakecuda/xq-cuda-tests" "$w/libxq-cuda.so" "$w/fakecuda" overhead_cold > "$w/test.txt" 2>&1 || true
python3 - "$w"/out.* <<'PY'
import re, subprocess, sys
for f in sys.argv[1:]:
    out = subprocess.run(["cg_annotate", "--show=D1mr,D1mw,I1mr", "--threshold=0", "--auto=no", f],
                         capture_output=True, text=True).stdout
    launches = 6 * 2000
    r = w = i1 = 0
    per = {}
    for line in out.splitlines():
        if not re.search(r"interpose/src/main/c/|\?\?\?:", line):
            continue
        vals = [int(x.replace(",", "")) for x in re.findall(r"([0-9][0-9,]*)(?:\s*\([^)]*\))?", line.rsplit(None, 1)[0])] + [0, 0, 0]
        name = line.split()[-1].split(":")[-1]
        r += vals[0]; w += vals[1]
        if "interpose/src/main/c/" in line: i1 += vals[2]  # code without symbols includes the bench's code run
        per[name] = per.get(name, 0) + (vals[0] + vals[1]) / launches
    top = sorted(per.items(), key=lambda kv: -kv[1])[:6]
    print("D1 misses per launch: reads %.1f, writes %.1f (%s); I1 misses %.1f" % (r / launches, w / launches,
          ", ".join("%s %.1f" % kv for kv in top), i1 / launches))
PY
rm -rf "$w"
