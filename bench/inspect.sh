#!/usr/bin/env bash
# The file inspector beside its peer, on the same files, one core each:
#   ours  crates/inspect/examples/inspect_files (release): the whole default-deny inspection (type from bytes,
#         polyglots, lopdf parse of every object and object stream, action/annotation/link allowlists)
#   peer  bench/inspect_peer.py: pdfid's keyword triage (counts active-content names in the bytes; no parsing)
# Files: CUAD's 356 contract PDFs (real documents; both should accept them: ours by verdict, the peer by not
# flagging), then the PDFs of the generated hostile corpus (every one must be refused by ours; the peer's count of
# flagged files is printed beside it). Then the whole hostile corpus (every kind) through ours.
# The peer's package goes into a venv under /var/cache/pactwise if it is not installed (pip uses the index
# configured on this machine).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DATA=${PACTWISE_SHARED_DATA:-$ROOT/../shared/data}
VENV=${PACTWISE_PDFID_VENV:-/var/cache/pactwise/peer-venv-pdfid}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-/var/cache/pactwise/target}
if [ ! -d "$DATA/cuad/pdfs" ]; then
  echo "bench/inspect.sh: $DATA/cuad/pdfs is absent; set PACTWISE_SHARED_DATA" >&2
  exit 2
fi
if ! "$VENV/bin/python" -c "import pdfid" 2>/dev/null; then
  echo "installing the peer's package into $VENV" >&2
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet "pdfid==1.1.3"
fi
cargo build --quiet --release -p pactwise-inspect --example inspect_files
OURS=$CARGO_TARGET_DIR/release/examples/inspect_files
CORPUS=$(mktemp -d)
trap 'rm -rf "$CORPUS"' EXIT
"$OURS" --dump "$CORPUS"
mkdir -p "$CORPUS/pdf"
find "$CORPUS" -maxdepth 1 -name '*.pdf' -exec mv -t "$CORPUS/pdf" {} +
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "== CUAD contract PDFs (real documents)"
taskset -c 0 "$OURS" "$DATA/cuad/pdfs" | head -5
taskset -c 0 "$VENV/bin/python" "$ROOT/bench/inspect_peer.py" "$DATA/cuad/pdfs"
echo "== hostile corpus, PDFs only ($(ls "$CORPUS/pdf" | wc -l) files)"
taskset -c 0 "$OURS" "$CORPUS/pdf" | head -12
taskset -c 0 "$VENV/bin/python" "$ROOT/bench/inspect_peer.py" "$CORPUS/pdf"
echo "== hostile corpus, every kind (ours)"
taskset -c 0 "$OURS" --corpus
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
