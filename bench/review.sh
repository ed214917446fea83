#!/usr/bin/env bash
# Review benchmarks, in one go (release builds):
#   offline    the offline review (keyword classifier, rule evaluator, verification, fields) of every CUAD text,
#              in process, with the quality figures of `pactwise eval cuad` (total seconds, median per contract)
#   model      one contract's model-path review against the fake model server at a fixed latency per call: wall time
#              against the critical path of its calls, uncached input tokens (from the fake's request log, which
#              simulates the prompt cache) against the contract's tokens plus the checklist's
#   retrieval  the assistant's passage index over every CUAD text: build time, search latency median and p95
# Needs ../shared/data (or PACTWISE_SHARED_DATA). LATENCY_MS sets the fake server's latency (default 300).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DATA=${PACTWISE_SHARED_DATA:-$ROOT/../shared/data}
LATENCY_MS=${LATENCY_MS:-300}
export OMP_THREAD_LIMIT=1
if [ ! -d "$DATA/cuad/contracts" ]; then
  echo "bench/review.sh: $DATA/cuad/contracts is absent; set PACTWISE_SHARED_DATA" >&2
  exit 2
fi
# Build outputs live outside the clone, as the Makefile keeps them.
TARGET=${CARGO_TARGET_DIR:-/var/cache/pactwise/target}
export CARGO_TARGET_DIR=$TARGET
cargo build --quiet --release -p pactwise-cli --bin pactwise
cargo build --quiet --release -p pactwise-api --example bench_review_model
cargo build --quiet --release -p pactwise-assistant --example bench_retrieval
echo "== offline review of $(ls "$DATA/cuad/contracts" | wc -l) CUAD contracts (pactwise eval cuad)"
"$TARGET/release/pactwise" eval cuad "$DATA/cuad" | tail -n 2
echo "== model path, one contract, fake server at ${LATENCY_MS} ms per call"
CONTRACT=$(ls -S "$DATA"/cuad/contracts/*.txt | sed -n 100p)
"$TARGET/release/examples/bench_review_model" "$CONTRACT" --latency-ms "$LATENCY_MS"
echo "== retrieval over every CUAD text"
"$TARGET/release/examples/bench_retrieval" "$DATA/cuad/contracts"
