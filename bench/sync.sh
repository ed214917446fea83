#!/usr/bin/env bash
# Sync service load benchmark on loopback, on SQLite and on PostgreSQL (a throwaway cluster). Prints one JSON line per
# scenario and backend:
#   one_client           10,000 changes pushed by one device through SyncClient and pulled by a second (goal: < 5 s)
#   concurrent_clients   200 simulated clients (10 devices per organization), each pushing ROUNDS batches of BATCH
#                        changes and pulling after each push: changes pushed/pulled per second, p50/p95 latency
#   propagation          two devices running the desktop's sync loop: device A writes, time until device B applied
#                        it; SAMPLES writes with the push channel, the same SAMPLES (same gaps) with the poll alone
#                        every POLL_MS; push_p50/p95_ms beside poll_p50/p95_ms on one line
# Tunables: CLIENTS (200), ROUNDS (10), BATCH (20), SINGLE (10000), SAMPLES (20), POLL_MS (3000; the desktop polls
# every 30000, and a poll's wait grows with it: about half the interval at p50), ONLY (comma-separated scenarios,
# default all). Needs Debian's postgresql for the second half.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CLIENTS=${CLIENTS:-200}
ROUNDS=${ROUNDS:-10}
BATCH=${BATCH:-20}
SINGLE=${SINGLE:-10000}
SAMPLES=${SAMPLES:-20}
POLL_MS=${POLL_MS:-3000}
ONLY=${ONLY:-}
# Build outputs live outside the clone, as the Makefile keeps them.
TARGET=${CARGO_TARGET_DIR:-/var/cache/pactwise/target}
export CARGO_TARGET_DIR=$TARGET
cargo build --quiet --release -p pactwise-sync-server --bin pactwise-sync-server
BIN=$TARGET/release/pactwise-sync-server
ARGS=(--clients "$CLIENTS" --rounds "$ROUNDS" --batch "$BATCH" --single "$SINGLE" --samples "$SAMPLES" --poll-ms "$POLL_MS")
if [ -n "$ONLY" ]; then ARGS+=(--only "$ONLY"); fi
export PACTWISE_LOG=${PACTWISE_LOG:-warn}
"$BIN" bench --database sqlite "${ARGS[@]}"
"$ROOT/crates/sync-server/tests/with-postgres.sh" bash -c "\"$BIN\" bench --database \"\$PACTWISE_BENCH_PG_URL\" ${ARGS[*]}"
