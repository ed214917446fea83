#!/usr/bin/env bash
# Sync service load benchmark on loopback, on SQLite and on PostgreSQL (a throwaway cluster). Prints one JSON line per
# scenario and backend:
#   one_client           10,000 changes pushed by one device through SyncClient and pulled by a second (goal: < 5 s)
#   concurrent_clients   200 simulated clients (10 devices per organization), each pushing ROUNDS batches of BATCH
#                        changes and pulling after each push: changes pushed/pulled per second, p50/p95 latency
# Tunables: CLIENTS (200), ROUNDS (10), BATCH (20), SINGLE (10000). Needs Debian's postgresql for the second half.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CLIENTS=${CLIENTS:-200}
ROUNDS=${ROUNDS:-10}
BATCH=${BATCH:-20}
SINGLE=${SINGLE:-10000}
# Build outputs live outside the clone, as the Makefile keeps them.
TARGET=${CARGO_TARGET_DIR:-/var/cache/pactwise/target}
export CARGO_TARGET_DIR=$TARGET
cargo build --quiet --release -p pactwise-sync-server --bin pactwise-sync-server
BIN=$TARGET/release/pactwise-sync-server
ARGS=(--clients "$CLIENTS" --rounds "$ROUNDS" --batch "$BATCH" --single "$SINGLE")
export PACTWISE_LOG=${PACTWISE_LOG:-warn}
"$BIN" bench --database sqlite "${ARGS[@]}"
"$ROOT/crates/sync-server/tests/with-postgres.sh" bash -c "\"$BIN\" bench --database \"\$PACTWISE_BENCH_PG_URL\" ${ARGS[*]}"
