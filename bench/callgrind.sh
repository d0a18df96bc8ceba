#!/bin/bash
# Instructions a bet, exactly: the service under valgrind's callgrind (every instruction
# counted, not sampled), driven by the load generator's closed loop (8 connections, 15 s
# measured after 3 s of warm-up), then the bets accepted read from /metrics.
#
#   bench/callgrind.sh target/release/pitboss /tmp/cg-new.out     # prints the bets accepted
#   bench/callgrind.sh BIN OUT --players 5000                      # more arguments: the load generator's
#   bench/callgrind-compare.py /tmp/cg-old.out OLD_BETS /tmp/cg-new.out NEW_BETS 'Writer::process$' …
#
# On these shared 2-core machines the CPU time of a thread moves by ±10 % from run to run;
# instruction counts move by a few per cent (the batches' sizes differ a little), so a cut of
# a few per cent in one function shows here when it cannot in `bench/loadgen`. Counts include
# the start (plan loading) in the totals; compare functions of the hot path.
# Env: DATA (data directory, /tmp/pitboss-callgrind; emptied first), PORT (18080).
# Needs valgrind and the load generator built: (cd bench/loadgen && cargo build --release).
set -u
REAL=$(realpath "$1"); OUT=$(realpath -m "$2"); shift 2
DATA=${DATA:-/tmp/pitboss-callgrind}
WRAP=$(mktemp)
cat > "$WRAP" <<W
#!/bin/bash
exec valgrind --tool=callgrind --callgrind-out-file=$OUT --dump-instr=no --collect-jumps=no "$REAL" "\$@"
W
chmod +x "$WRAP"
BIN=$WRAP
# shellcheck source=bench/serve-lib.sh
. "$(dirname "$0")/serve-lib.sh"
serve_fresh 0.5 600
"$REPO/bench/loadgen/target/release/pitboss-loadgen" --url "$URL" --admin-key $K --duration 15 \
  --warmup 3 --no-rate-pass --connections 8 "$@" > "$DATA.loadgen.txt" 2>&1
BETS=$(curl -s "$URL/metrics" | awk '/^pitboss_bets_accepted_total/ {print $2}')
kill $SP; wait $SP 2> /dev/null
rm -f "$WRAP"
grep -E "closed loop" "$DATA.loadgen.txt" | head -1
echo "bets accepted: $BETS (profile: $OUT)"
