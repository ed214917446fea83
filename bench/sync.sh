#!/usr/bin/env bash
# Sync service load benchmark on loopback, on SQLite and on PostgreSQL (a throwaway cluster). Prints one JSON line per
# scenario and backend:
#   one_client           10,000 changes pushed by one device through SyncClient and pulled by a second (goal: < 5 s)
#   concurrent_clients   200 simulated clients (10 devices per organization), each pushing ROUNDS batches of BATCH
#                        changes and pulling after each push: changes pushed/pulled per second, p50/p95 latency
#   propagation          two devices running the desktop's sync loop: device A writes, time until device B applied
#                        it; SAMPLES writes with the push channel, the same SAMPLES (same gaps) with the poll alone
#                        every POLL_MS; push_p50/p95_ms beside poll_p50/p95_ms on one line
#   decisions            DESKTOPS desktops connected to the service run as its own process (`serve`): a buyer's
#                        desktop (pactwise_api::Api) starts procurement runs, an approver's (Api) decides them; time
#                        from decide_approval to the run no longer waiting at home, p50/p95 (goal p95 < 1 s); the
#                        service's memory idle and connected (VmRSS from /proc), per connected desktop; the others are
#                        SyncClient loops over in-memory replicas; beside it the same decisions with the poll alone
#                        (crates/api/examples/bench_decisions.rs)
# Tunables: CLIENTS (200), ROUNDS (10), BATCH (20), SINGLE (10000), SAMPLES (20 writes for propagation; 30 decisions
# unless set), POLL_MS (3000; the desktop polls every 30000, and a poll's wait grows with it: about half the interval
# at p50), DESKTOPS (200), ONLY (comma-separated scenarios, default all). Needs Debian's postgresql for the second half.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CLIENTS=${CLIENTS:-200}
ROUNDS=${ROUNDS:-10}
BATCH=${BATCH:-20}
SINGLE=${SINGLE:-10000}
DECISION_SAMPLES=${SAMPLES:-30}
SAMPLES=${SAMPLES:-20}
POLL_MS=${POLL_MS:-3000}
DESKTOPS=${DESKTOPS:-200}
ONLY=${ONLY:-}
# Build outputs live outside the clone, as the Makefile keeps them.
TARGET=${CARGO_TARGET_DIR:-/var/cache/pactwise/target}
export CARGO_TARGET_DIR=$TARGET
export PACTWISE_LOG=${PACTWISE_LOG:-warn}
BIN=$TARGET/release/pactwise-sync-server
# The service's own scenarios run in its `bench` subcommand; `decisions` needs desktops (pactwise-api), so it is an
# example of that crate driving the `serve` binary.
SERVICE_ONLY=()
DECISIONS=1
if [ -n "$ONLY" ]; then
    DECISIONS=0
    IFS=, read -r -a wanted <<<"$ONLY"
    for s in "${wanted[@]}"; do
        if [ "$s" = decisions ]; then DECISIONS=1; else SERVICE_ONLY+=("$s"); fi
    done
fi
cargo build --quiet --release -p pactwise-sync-server --bin pactwise-sync-server
if [ -z "$ONLY" ] || [ ${#SERVICE_ONLY[@]} -gt 0 ]; then
    ARGS=(--clients "$CLIENTS" --rounds "$ROUNDS" --batch "$BATCH" --single "$SINGLE" --samples "$SAMPLES" --poll-ms "$POLL_MS")
    if [ -n "$ONLY" ]; then ARGS+=(--only "$(IFS=,; echo "${SERVICE_ONLY[*]}")"); fi
    "$BIN" bench --database sqlite "${ARGS[@]}"
    "$ROOT/crates/sync-server/tests/with-postgres.sh" bash -c "\"$BIN\" bench --database \"\$PACTWISE_BENCH_PG_URL\" ${ARGS[*]}"
fi
if [ "$DECISIONS" = 1 ]; then
    cargo build --quiet --release -p pactwise-api --example bench_decisions
    DRIVER=$TARGET/release/examples/bench_decisions
    DARGS=(--server-bin "$BIN" --desktops "$DESKTOPS" --samples "$DECISION_SAMPLES" --poll-ms "$POLL_MS")
    "$DRIVER" --database sqlite "${DARGS[@]}"
    "$ROOT/crates/sync-server/tests/with-postgres.sh" bash -c "\"$DRIVER\" --database \"\$PACTWISE_BENCH_PG_URL\" ${DARGS[*]}"
fi
