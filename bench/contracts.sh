#!/usr/bin/env bash
# The Contracts area at scale (issue 20): the CUAD dev contracts imported and finalized offline into a fresh data
# directory, the list query timed (unfiltered, each filter, a search) beside a peer that scans extractions_json in
# Rust, again at 10,000 contracts, and the upcoming-dates view checked against dates computed independently.
# Prints one JSON line per figure. PROFILE=debug runs the unoptimised build (quicker to build, slower to run).
set -euo pipefail
cd "$(dirname "$0")/.."
DATA="${PACTWISE_SHARED_DATA:-../shared/data}"
PROFILE="${PROFILE:-release}"
REPS="${REPS:-30}"
SCALE="${SCALE:-10000}"
flag=(--release)
[ "$PROFILE" = "debug" ] && flag=()
cargo build "${flag[@]}" -p pactwise-api --example bench_contracts >&2
exec "${CARGO_TARGET_DIR:-target}/$PROFILE/examples/bench_contracts" --cuad "$DATA/cuad" --reps "$REPS" --scale "$SCALE" "$@"
