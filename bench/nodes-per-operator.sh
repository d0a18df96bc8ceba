#!/usr/bin/env bash
# Issue 17: several nodes with a log per operator. Accepted bets/s with one, two and three
# `pitboss serve --node-url auto --log-per-operator` nodes on one PostgreSQL database, next to
# the actix-web floor, in one run. Each pass starts its nodes on a fresh database; the load
# generator's connection i goes to node i mod N and plays for operator i mod OPS, and each
# operator's log is written by the node its first table was opened through (connection i
# opens its table first, in order), so:
#   N = OPS: every request reaches the node that writes its operator's log (a load balancer
#            that sends each operator to its node);
#   N > OPS: requests also reach nodes that pass them on (a load balancer that knows nothing).
#
#   cargo build --release && (cd bench/loadgen && cargo build --release)
#   bash bench/nodes-per-operator.sh [SECONDS per pass, default 10]
#
# Prints the loadgen rows; RESULTS.md ("Several nodes with a log per operator") keeps them.
set -euo pipefail
cd "$(dirname "$0")/.."
DUR=${1:-10}
BIN=${PITBOSS:-target/release/pitboss}
LG=bench/loadgen/target/release/pitboss-loadgen
ADMIN=pb_00000000000000aa_00000000000000000000000000000000000000000000000000000000000000aa
PG=postgres://127.0.0.1:5432
DATA=$(mktemp -d)
PIDS=()
DB=
stop_nodes() {
  for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  PIDS=()
  if [ -n "$DB" ]; then
    psql "$PG/test" -q -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" >/dev/null 2>&1 || true
  fi
  DB=
}
cleanup() { stop_nodes; rm -rf "$DATA"; }
trap cleanup EXIT

# node N listens on 127.0.0.1:1840N.
node() {
  local n=$1
  PITBOSS_ADMIN_KEY=$ADMIN PITBOSS_RTP_ROUNDS=0 PITBOSS_LIMIT_KEY_RPS=0 \
  PITBOSS_LIMIT_OPERATOR_RPS=0 PITBOSS_LOG=warn PITBOSS_LOG_PER_OPERATOR=true \
    "$BIN" --plans game_plans serve --bind "127.0.0.1:1840$n" --node-url auto \
    --data-dir "$DATA/$DB" --database-url "$PG/$DB" --origin "pitboss.bench/$DB" \
    >"$DATA/out$n" 2>"$DATA/err$n" &
  PIDS[$n]=$!
  for _ in $(seq 1 300); do
    grep -q "listening on" "$DATA/out$n" && return 0
    sleep 0.05
  done
  echo "node $n did not start"; cat "$DATA/err$n"; exit 1
}

# pass LABEL NODES OPERATORS
pass() {
  DB=pitboss_opnodes_$$_$RANDOM
  psql "$PG/test" -q -c "CREATE DATABASE $DB"
  mkdir -p "$DATA/$DB"
  local urls=""
  for n in $(seq 1 "$2"); do
    node "$n"
    urls="$urls${urls:+,}http://127.0.0.1:1840$n"
  done
  echo "== $1"
  "$LG" --url "$urls" --admin-key "$ADMIN" --operators "$3" --duration "$DUR" --warmup 2 \
    --no-rate-pass | grep -v "^\s*$"
  # Where each operator's log is written, and what each node passed on.
  for n in $(seq 1 "$2"); do
    m=$(curl -s -m 2 "http://127.0.0.1:1840$n/metrics")
    echo "   node $n: service log writer $(echo "$m" | awk '/^pitboss_node_writer /{print $2}'), operators' logs $(echo "$m" | grep -c '^pitboss_operator_log_entries{' || true), passed on $(echo "$m" | awk '/^pitboss_node_forwarded_total\{outcome="answered"\}/{print $2}')"
  done
  stop_nodes
}

echo "== floor"
"$LG" --targets floor --duration "$DUR" --warmup 2 --no-rate-pass | grep -v "^\s*$"
pass "1 node, 3 operators (three logs, one node)" 1 3
pass "2 nodes, 2 operators (each operator sent to the node that writes its log)" 2 2
pass "3 nodes, 3 operators (each operator sent to the node that writes its log)" 3 3
pass "3 nodes, 2 operators (two thirds of each operator's requests passed on)" 3 2
pass "1 node, 3 operators again" 1 3
