#!/bin/sh
# GPU machine (issue 40): does host load shaped like the interposer's trackers slow a bare,
# launch-bound latency-critical tenant's launching? The tenant (KIND, default decode) runs alone,
# no MPS, no interposer, ROUNDS times each way, the ways' order rotated round by round:
#   quiet   nothing else on the host
#   nap5    THREADS threads napping 5 us at a time on a futex (a tracker whose launchers wait on a
#           limit, memop completions)
#   nap50   THREADS threads napping 50 us at a time (a tracker with work in flight otherwise)
#   spin    THREADS threads spinning (processes in a spinning synchronize, as under native sharing)
# Per run: P50/P99 of the latency and the host's part (until the last launch), and the loaders' CPU.
# Usage: [KIND=decode] [THREADS=3] [ROUNDS=2] [SECS=8] sh bench/gpu/host-noise.sh OUTDIR
set -u
out=${1:?usage: host-noise.sh OUTDIR}
mkdir -p "$out"
S=${SECS:-8} T=${THREADS:-3} K=${KIND:-decode}
cc -O2 -pthread -o "$out/napper" bench/gpu/napper.c || { echo "host-noise: cc failed"; exit 1; }
ways="quiet nap5 nap50 spin"
for r in $(seq "${ROUNDS:-2}"); do
  set -- $ways
  i=1; while [ $i -lt "$r" ]; do x=$1; shift; set -- "$@" "$x"; i=$((i + 1)); done
  for w in "$@"; do
    lp=
    case $w in
      nap5) "$out/napper" "$T" 5000 & lp=$! ;;
      nap50) "$out/napper" "$T" 50000 & lp=$! ;;
      spin) "$out/napper" "$T" 0 & lp=$! ;;
    esac
    python3 -u bench/torch/family/tenant.py --kind "$K" --seconds "$S" ${TENANT_ARGS:-} > "$out/$w-$r.txt" 2> "$out/$w-$r.err"
    if [ -n "$lp" ]; then
      ps -o pcpu= -p "$lp" > "$out/$w-$r.cpu" 2>/dev/null
      kill "$lp"; wait "$lp" 2>/dev/null
    fi
  done
done
python3 - "$out" <<'PY'
import json, os, sys
d = sys.argv[1]
def pct(v, q):
    v = sorted(v)
    k = (len(v) - 1) * q / 100.0
    f = int(k); c = min(f + 1, len(v) - 1)
    return v[f] + (v[c] - v[f]) * (k - f)
rows = {}
for f in sorted(os.listdir(d)):
    if not f.endswith(".txt"):
        continue
    try:
        j = json.loads([l for l in open(os.path.join(d, f)).read().splitlines() if l.startswith("{")][-1])
        lat, host = j["lat_ms"], j["host_ms"]
    except Exception as e:
        print(f"{f}: no result ({e})")
        continue
    w, r = f[:-4].rsplit("-", 1)
    cpu = ""
    try:
        cpu = open(os.path.join(d, f"{w}-{r}.cpu")).read().strip() + " % CPU (loaders)"
    except OSError:
        pass
    rows.setdefault(w, []).append((pct(lat, 50), pct(lat, 99), pct(host, 50), pct(host, 99)))
    print(f"{w:6s} round {r}: n {len(lat)} lat P50/P99 {pct(lat, 50):7.3f}/{pct(lat, 99):7.3f} ms, host {pct(host, 50):7.3f}/{pct(host, 99):7.3f} {cpu}")
q = rows.get("quiet")
for w, v in rows.items():
    if not q or w == "quiet":
        continue
    for i, name in enumerate(("lat P50", "lat P99", "host P50", "host P99")):
        qs = sorted(x[i] for x in q)
        ws = sorted(x[i] for x in v)
        print(f"{w:6s} over quiet, {name}: median {ws[len(ws) // 2] / qs[len(qs) // 2]:.3f} (runs {', '.join(f'{x:.2f}' for x in ws)} against {', '.join(f'{x:.2f}' for x in qs)})")
PY
