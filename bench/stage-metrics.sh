#!/bin/bash
# A fresh `pitboss serve` on SQLite (or PostgreSQL: SERVE_ARGS="--database-url … --origin …"),
# the load generator against it, and the writer's stage histograms from two scrapes of
# /metrics 8 s apart, as means and as the buckets holding p50/p90/p99/p99.9.
#
#   bench/stage-metrics.sh target/release/pitboss            # closed loop, 12 s
#   RATE=3500 bench/stage-metrics.sh target/release/pitboss  # closed loop, then 3,500 req/s
#
# Env: EXTRA_ENV (more `NAME=value` for the service), SERVE_ARGS, RATE, DUR (seconds, 12),
# DATA (data directory, /tmp/pitboss-stage-metrics; emptied first), PORT (18080).
# Needs the load generator built: (cd bench/loadgen && cargo build --release).
set -u
BIN=$(realpath "$1"); shift
DATA=${DATA:-/tmp/pitboss-stage-metrics}
# shellcheck source=bench/serve-lib.sh
. "$(dirname "$0")/serve-lib.sh"
fresh_data
start_service
wait_ready 0.1 300
DUR=${DUR:-12}
if [ -n "${RATE:-}" ]; then MODE="--rate $RATE"; S1=15; S2=23; else MODE="--no-rate-pass"; S1=4; S2=12; fi
# shellcheck disable=SC2086
"$REPO/bench/loadgen/target/release/pitboss-loadgen" --url $URL --admin-key $K \
  --duration "$DUR" --warmup 2 $MODE "$@" > "$DATA.loadgen.txt" 2>&1 &
LP=$!
sleep $S1; curl -s $URL/metrics > "$DATA.m1"
sleep $((S2 - S1)); curl -s $URL/metrics > "$DATA.m2"
wait $LP
kill $SP; wait $SP 2> /dev/null
grep -E '^\|' "$DATA.loadgen.txt" | tail -3
python3 - "$DATA.m1" "$DATA.m2" <<'PY'
import collections, re, sys

def load(path):
    sums, buckets = {}, collections.defaultdict(dict)
    for line in open(path):
        if line.startswith('#'):
            continue
        m = re.match(r'(\S+)_bucket\{(.*)le="([^"]+)"\}\s+(\S+)', line.strip())
        if m:
            buckets[(m.group(1), m.group(2).rstrip(','))][float(m.group(3))] = float(m.group(4))
            continue
        m = re.match(r'(\S+?)(\{.*\})?\s+(\S+)$', line.strip())
        if m:
            sums[(m.group(1), m.group(2) or '')] = float(m.group(3))
    return sums, buckets

(a, ab), (b, bb) = load(sys.argv[1]), load(sys.argv[2])
for (name, labels), v in sorted(b.items()):
    if not name.endswith('_sum') or not any(s in name for s in ('writer', 'http_request')):
        continue
    count = name[:-4] + '_count'
    n = b.get((count, labels), 0) - a.get((count, labels), 0)
    if n <= 0:
        continue
    mean = (v - a.get((name, labels), 0)) / n
    unit = ' ms' if 'seconds' in name else ''
    scale = 1e3 if 'seconds' in name else 1
    line = f"{name[:-4]}{labels}: {n:.0f}, mean {mean * scale:.3f}{unit}"
    for (hname, hlabels), hb in bb.items():
        if hname == name[:-4] and ('{' + hlabels + '}' == labels or (not hlabels and not labels)):
            les = sorted(hb)
            cum = [hb[le] - ab.get((hname, hlabels), {}).get(le, 0) for le in les]
            total = cum[-1]
            qs = []
            for q in (0.5, 0.9, 0.99, 0.999):
                le = next(le for le, c in zip(les, cum) if c >= q * total)
                qs.append(f"p{q * 100:g} ≤ {le * scale:g}")
            line += "; " + ", ".join(qs)
    print(line)
PY
