#!/bin/bash
# A start after SIGKILL under load: a fresh `pitboss serve` on SQLite, the closed loop for 12 s,
# SIGKILL, a new `pitboss serve` on the same data directory, and the time until /readyz
# answers 200. Prints the WAL's size at the kill.
#
#   bench/kill-restart.sh target/release/pitboss
#
# Env: EXTRA_ENV (more `NAME=value` for the service), DATA (/tmp/pitboss-kill-restart), PORT.
set -u
BIN=$(realpath "$1")
REPO=$(cd "$(dirname "$0")/.." && pwd)
K=pb_00000000000000aa_00000000000000000000000000000000000000000000000000000000000000aa
DATA=${DATA:-/tmp/pitboss-kill-restart}
PORT=${PORT:-18080}
URL=http://127.0.0.1:$PORT
rm -rf "$DATA"; mkdir -p "$DATA"
start() {
  # shellcheck disable=SC2086
  env PITBOSS_RTP_ROUNDS=0 PITBOSS_LIMIT_KEY_RPS=0 PITBOSS_LIMIT_OPERATOR_RPS=0 \
    PITBOSS_ADMIN_KEY=$K ${EXTRA_ENV:-} \
    "$BIN" serve --plans "$REPO/game_plans" --bind 127.0.0.1:$PORT --data-dir "$DATA" \
    >> "$DATA.serve.log" 2>&1 &
  SP=$!
}
start
for _ in $(seq 1 300); do curl -sf $URL/readyz > /dev/null && break; sleep 0.1; done
"$REPO/bench/loadgen/target/release/pitboss-loadgen" --url $URL --admin-key $K \
  --duration 20 --warmup 1 --no-rate-pass > "$DATA.loadgen.txt" 2>&1 &
LP=$!
sleep 12
echo "WAL at the kill: $(stat -c %s "$DATA/pitboss.sqlite-wal") bytes"
kill -9 $SP; wait $SP 2> /dev/null
kill $LP 2> /dev/null; wait $LP 2> /dev/null
t0=$(date +%s.%N)
start
for _ in $(seq 1 3000); do curl -sf $URL/readyz > /dev/null && break; sleep 0.01; done
t1=$(date +%s.%N)
echo "ready $(echo "$t1 - $t0" | bc) s after the new start"
kill $SP; wait $SP 2> /dev/null
