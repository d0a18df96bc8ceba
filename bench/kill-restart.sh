#!/bin/bash
# A start after SIGKILL under load: a fresh `pitboss serve` on SQLite, the closed loop for 12 s,
# SIGKILL, a new `pitboss serve` on the same data directory, and the time until /readyz
# answers 200. Prints the WAL's size at the kill.
#
#   bench/kill-restart.sh target/release/pitboss
#
# Env: DATA (/tmp/pitboss-kill-restart), and EXTRA_ENV, SERVE_ARGS, PORT (`serve-lib.sh`).
set -u
BIN=$(realpath "$1")
DATA=${DATA:-/tmp/pitboss-kill-restart}
# shellcheck source=bench/serve-lib.sh
. "$(dirname "$0")/serve-lib.sh"
fresh_data
start_service
wait_ready 0.1 300
"$REPO/bench/loadgen/target/release/pitboss-loadgen" --url $URL --admin-key $K \
  --duration 20 --warmup 1 --no-rate-pass > "$DATA.loadgen.txt" 2>&1 &
LP=$!
sleep 12
echo "WAL at the kill: $(stat -c %s "$DATA/pitboss.sqlite-wal") bytes"
kill -9 $SP; wait $SP 2> /dev/null
kill $LP 2> /dev/null; wait $LP 2> /dev/null
t0=$(date +%s.%N)
start_service
wait_ready 0.01 3000
t1=$(date +%s.%N)
echo "ready $(echo "$t1 - $t0" | bc) s after the new start"
kill $SP; wait $SP 2> /dev/null
