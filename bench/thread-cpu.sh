#!/bin/bash
# CPU a bet by thread: a fresh `pitboss serve`, the load generator's closed loop against it, and
# each thread's CPU (`/proc/PID/task/*/stat`, user + system) over 8 s of it divided by the bets
# accepted meanwhile (`pitboss_bets_accepted_total`); also the machine's idle share, and on
# PostgreSQL the server's processes' CPU a bet (`pgrep -x postgres`).
#
#   bench/thread-cpu.sh target/release/pitboss                  # SQLite, 64 connections
#   CONNS=256 bench/thread-cpu.sh target/release/pitboss
#   SERVE_ARGS="--database-url postgres://127.0.0.1:5432/DB --origin bench.pitboss/pg" \
#     bench/thread-cpu.sh target/release/pitboss                # an empty database DB first
#
# Times move ±10 % between runs on a shared machine: interleave the binaries compared, or count
# instructions (`bench/callgrind.sh`). Env: CONNS (64), EXTRA_ENV, SERVE_ARGS, DATA
# (/tmp/pitboss-thread-cpu; emptied first), PORT (18080). More arguments go to the load generator.
set -u
BIN=$(realpath "$1"); shift
DATA=${DATA:-/tmp/pitboss-thread-cpu}
# shellcheck source=bench/serve-lib.sh
. "$(dirname "$0")/serve-lib.sh"
serve_fresh 0.1 300
"$REPO/bench/loadgen/target/release/pitboss-loadgen" --url "$URL" --admin-key $K --duration 14 \
  --warmup 2 --no-rate-pass --connections "${CONNS:-64}" "$@" > "$DATA.loadgen.txt" 2>&1 &
LP=$!
sleep 5
snapshot() {
  for t in /proc/$SP/task/*; do
    echo "$(tr ' ' _ < "$t/comm") $(awk '{print $14 + $15}' "$t/stat")"
  done
  curl -s "$URL/metrics" | awk '/^pitboss_bets_accepted_total/ {print "BETS", $2}'
  for p in $(pgrep -x postgres); do awk '{print $14 + $15}' "/proc/$p/stat" 2> /dev/null; done |
    awk '{s += $1} END {print "POSTGRES", s + 0}'
  head -1 /proc/stat
}
snapshot > "$DATA.s1"
sleep 8
snapshot > "$DATA.s2"
wait $LP
kill $SP; wait $SP 2> /dev/null
grep -E "closed loop" "$DATA.loadgen.txt" | head -1
python3 - "$DATA.s1" "$DATA.s2" <<'PY'
import collections, os, sys

def read(path):
    threads, bets, pg, cpu = collections.Counter(), 0.0, 0, []
    for line in open(path):
        name, *rest = line.split()
        if name == "BETS":
            bets = float(rest[0])
        elif name == "POSTGRES":
            pg = int(rest[0])
        elif name == "cpu":
            cpu = [int(x) for x in rest]
        else:
            threads[name] += int(rest[0])
    return threads, bets, pg, cpu

(a, ba, pa, ca), (b, bb, pb, cb) = read(sys.argv[1]), read(sys.argv[2])
bets, hz, secs = bb - ba, os.sysconf("SC_CLK_TCK"), 8.0
if bets <= 0:
    sys.exit("no bets accepted while sampling")
total = 0.0
for name in sorted(b, key=lambda k: a[k] - b[k]):
    us = (b[name] - a[name]) / hz * 1e6 / bets
    total += us
    if us > 0.5:
        print(f"{name:24s} {us:7.1f} µs a bet  {(b[name] - a[name]) / hz / secs * 100:5.1f} % of a core")
print(f"the service: {total:.1f} µs a bet, {bets / secs:.0f} bets/s")
if (pb - pa) / hz * 1e6 / bets >= 1.0:  # (an idle server beside SQLite shows a little)
    print(f"postgres processes: {(pb - pa) / hz * 1e6 / bets:.1f} µs a bet")
d = [y - x for x, y in zip(ca, cb)]
names = ["user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal"]
print("machine: " + ", ".join(f"{n} {100 * v / sum(d):.1f} %" for n, v in zip(names, d)))
PY
