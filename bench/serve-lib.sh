# Sourced by the bench scripts that run the service themselves (`stage-metrics.sh`,
# `kill-restart.sh`): set BIN (the `pitboss` binary) and DATA (its data directory) first.
# Env: EXTRA_ENV (more `NAME=value` for the service), SERVE_ARGS (more `serve` flags), PORT.
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# The admin key the service is started with, and the load generator's.
K=pb_00000000000000aa_00000000000000000000000000000000000000000000000000000000000000aa
PORT=${PORT:-18080}
URL=http://127.0.0.1:$PORT

# An empty data directory and an empty service log ($DATA.serve.log).
fresh_data() {
  rm -rf "$DATA" && mkdir -p "$DATA" && : > "$DATA.serve.log"
}

# `pitboss serve` on $DATA with the bench's settings (no RTP rounds, no request limits), in the
# background, its output appended to $DATA.serve.log; its pid in SP.
start_service() {
  # shellcheck disable=SC2086
  env PITBOSS_RTP_ROUNDS=0 PITBOSS_LIMIT_KEY_RPS=0 PITBOSS_LIMIT_OPERATOR_RPS=0 \
    PITBOSS_ADMIN_KEY=$K ${EXTRA_ENV:-} \
    "$BIN" serve --plans "$REPO/game_plans" --bind 127.0.0.1:$PORT --data-dir "$DATA" \
    ${SERVE_ARGS:-} >> "$DATA.serve.log" 2>&1 &
  SP=$!
}

# Waits until /readyz answers 200, polling every `$1` seconds up to `$2` times.
wait_ready() {
  for _ in $(seq 1 "$2"); do curl -sf "$URL/readyz" > /dev/null && return 0; sleep "$1"; done
  return 1
}

# An empty data directory and a fresh service, ready: `wait_ready $1 $2`; if it does not become
# ready, the end of its log and exit 1.
serve_fresh() {
  fresh_data
  start_service
  wait_ready "$1" "$2" || { echo "the service did not become ready"; tail "$DATA.serve.log"; exit 1; }
}
