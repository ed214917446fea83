#!/usr/bin/env bash
# Embedding throughput beside its peer: ours (`crates/embed`'s `throughput` example, release) and ONNX Runtime's own
# Python binding (bench/embed_peer.py) embed the same ~500-character passages of CUAD text with the same model files
# and every core. Prints both lines; run it on an otherwise idle machine.
#   LIMIT  passages (1000 unless set)
# The peer's packages go into a venv under /var/cache/pactwise if they are not there (pip uses the index the machine
# is configured with); the model's folder is the one `make setup` installs (PACTWISE_EMBED_MODEL_DIR to change it).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DATA=${PACTWISE_SHARED_DATA:-$ROOT/../shared/data}
LIMIT=${LIMIT:-1000}
MODEL_DIR=${PACTWISE_EMBED_MODEL_DIR:-/usr/local/lib/pactwise/models/all-minilm-l6-v2}
VENV=${PACTWISE_EMBED_PEER_VENV:-/var/cache/pactwise/peer-venv-onnxruntime}
[ -d "$DATA/cuad/contracts" ] || { echo "bench/embed.sh: $DATA/cuad/contracts is absent; set PACTWISE_SHARED_DATA" >&2; exit 2; }
if [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -c 'import onnxruntime, tokenizers, numpy' 2>/dev/null; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet "onnxruntime==1.31.1" "tokenizers==0.23.3" "numpy==2.4.6"
fi
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-/var/cache/pactwise/target}
cargo build --quiet --release -p pactwise-embed --example throughput
echo "machine: $(nproc) cores, load average $(cut -d' ' -f1 /proc/loadavg)"
PACTWISE_EMBED_MODEL_DIR=$MODEL_DIR "$CARGO_TARGET_DIR/release/examples/throughput" "$DATA/cuad/contracts" "$LIMIT"
"$VENV/bin/python" "$ROOT/bench/embed_peer.py" "$MODEL_DIR" "$DATA/cuad/contracts" "$LIMIT" side-by-side
"$VENV/bin/python" "$ROOT/bench/embed_peer.py" "$MODEL_DIR" "$DATA/cuad/contracts" "$LIMIT" batch=4
