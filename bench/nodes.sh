#!/usr/bin/env bash
# Issue 17: accepted bets/s with one, two and three `pitboss serve` nodes on one PostgreSQL
# database, next to the actix-web floor, in one run; then the time a standby takes to take the
# log over after the writer's SIGKILL and after its SIGSTOP (the lease running out).
#
#   cargo build --release && (cd bench/loadgen && cargo build --release)
#   bash bench/nodes.sh [SECONDS per pass, default 10]
#
# Prints the loadgen rows and the take-over times; RESULTS.md ("Several nodes") keeps them.
set -euo pipefail
cd "$(dirname "$0")/.."
DUR=${1:-10}
BIN=${PITBOSS:-target/release/pitboss}
LG=bench/loadgen/target/release/pitboss-loadgen
ADMIN=pb_00000000000000aa_00000000000000000000000000000000000000000000000000000000000000aa
DB=pitboss_nodes_$$
PG=postgres://127.0.0.1:5432
DATA=$(mktemp -d)
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  psql "$PG/test" -q -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" >/dev/null 2>&1 || true
  rm -rf "$DATA"
}
trap cleanup EXIT
psql "$PG/test" -q -c "CREATE DATABASE $DB"

# node N listens on 127.0.0.1:1830N; waits until it writes or stands by.
node() {
  local n=$1
  PITBOSS_ADMIN_KEY=$ADMIN PITBOSS_RTP_ROUNDS=0 PITBOSS_LIMIT_KEY_RPS=0 \
  PITBOSS_LIMIT_OPERATOR_RPS=0 PITBOSS_LOG=warn \
    "$BIN" --plans game_plans serve --bind "127.0.0.1:1830$n" --node-url auto \
    --data-dir "$DATA" --database-url "$PG/$DB" --origin "pitboss.bench/$DB" \
    >"$DATA/out$n" 2>"$DATA/err$n" &
  PIDS[$n]=$!
  for _ in $(seq 1 300); do
    grep -q "listening on\|standby: the log is written" "$DATA/out$n" && return 0
    sleep 0.05
  done
  echo "node $n did not start"; cat "$DATA/err$n"; exit 1
}
status() { curl -s -m 1 "http://127.0.0.1:1830$1/healthz" | sed 's/.*"status":"\([a-z]*\)".*/\1/'; }

node 1; node 2; node 3
A=http://127.0.0.1:18301 B=http://127.0.0.1:18302 C=http://127.0.0.1:18303
pass() {
  echo "== $1"
  "$LG" --url "$2" --admin-key "$ADMIN" --duration "$DUR" --warmup 2 --no-rate-pass | grep -v "^\s*$"
}
echo "== floor"
"$LG" --targets floor --duration "$DUR" --warmup 2 --no-rate-pass | grep -v "^\s*$"
pass "1 node (the writer)" "$A"
pass "2 nodes (writer, standby)" "$A,$B"
pass "3 nodes (writer, two standbys)" "$A,$B,$C"
pass "standbys only" "$B,$C"
pass "1 node again" "$A"

# Take-over: SIGKILL of the writer (same host: its process is seen gone).
t0=$(date +%s.%N); kill -9 "${PIDS[1]}"
while [ "$(status 2)" != ok ] && [ "$(status 3)" != ok ]; do sleep 0.01; done
t1=$(date +%s.%N)
echo "take-over after SIGKILL: $(echo "$t1 - $t0" | bc) s"
# Take-over after SIGSTOP: the lease must run out (3 s), as for a node on another host.
w=2; [ "$(status 3)" = ok ] && w=3
o=$((5 - w))
t0=$(date +%s.%N); kill -STOP "${PIDS[$w]}"
while [ "$(status $o)" != ok ]; do sleep 0.01; done
t1=$(date +%s.%N)
echo "take-over after SIGSTOP (lease 3 s): $(echo "$t1 - $t0" | bc) s"
kill -CONT "${PIDS[$w]}"
for _ in $(seq 1 100); do kill -0 "${PIDS[$w]}" 2>/dev/null || break; sleep 0.05; done
rc=0; wait "${PIDS[$w]}" 2>/dev/null || rc=$?
echo "the stopped writer, run again, exited with $rc"
