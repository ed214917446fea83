#!/usr/bin/env bash
# Review workspace speed in the real app (release build by default), driven through WebDriver like the e2e tests.
# Prints one JSON line per figure (median, p90, min, max over the runs) with its goal beside it:
#   review_open_to_first_page_and_checklist_ms  from opening a 100-page contract's review (Enter in the queue) to
#                                               its first page image and the checklist drawn (goal < 1000 ms);
#                                               the first open (page renders not cached yet) is printed apart
#   item_select_to_quote_highlighted_ms         from selecting an item (j) to its quote highlighted on its page,
#                                               scrolled into view and painted (goal < 100 ms)
#   viewer_jump_to_page_50_text_shown_ms        in a 68-page CUAD PDF (VIEWER_PDF), from typing 50 in the page box
#   viewer_jump_to_page_50_image_shown_ms       to page 50's text layer shown, and to its rendered image decoded and
#                                               painted (goal < 300 ms); each run starts the app afresh with the
#                                               page renders cache emptied, so page 50 is rendered every time; the
#                                               peer is pdftoppm rendering the same page at the same scale
# The figures are the app's own performance marks (performance.measure), read through WebDriver.
# PROFILE=debug measures the debug build instead; OPENS and STEPS set the number of runs, JUMPS the viewer's;
# PARTS=viewer (or review) runs one part only. VIEWER_PDF is read in place (never copied into the repository).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PROFILE=${PROFILE:-release}
export OPENS=${OPENS:-6} STEPS=${STEPS:-30} PAGES=${PAGES:-100} JUMPS=${JUMPS:-6} PARTS=${PARTS:-review,viewer}
export VIEWER_PDF=${VIEWER_PDF:-${PACTWISE_SHARED_DATA:-$ROOT/../shared/data}/cuad/pdfs/zogenixinc-20190509-10-q-ex-10-2-11663313-ex-10-2-distributor-agreement.pdf}
export OMP_THREAD_LIMIT=1
# Build outputs live outside the clone, as the Makefile keeps them.
TARGET=${CARGO_TARGET_DIR:-/var/cache/pactwise/target}
export CARGO_TARGET_DIR=$TARGET
flag=(); [ "$PROFILE" = release ] && flag=(--release)
(cd "$ROOT/ui" && npm run build >/dev/null)
(cd "$ROOT" && cargo build --quiet "${flag[@]}" -p pactwise-desk -p pactwise-cli -p pactwise-extract)
BIN=$TARGET/$PROFILE
export PACTWISE_APP=$BIN/pactwise-desk
WORK=$(mktemp -d)
export VIEWER_SCALE_FILE="$WORK/viewer-scale"
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT

# A long contract we generate (numbered clauses), made into a text-layer PDF of $PAGES pages and imported by the CLI.
if [[ "$PARTS" == *review* ]]; then
mkdir -p "$WORK/texts"
python3 - "$WORK/texts/long-services-agreement.txt" <<'PY'
import sys
topics = [
    ("Services", "The Supplier shall perform the services described in Schedule {n} with reasonable skill and care, in accordance with good industry practice and the service levels agreed in writing."),
    ("Fees", "The Customer shall pay the fees set out in Schedule {n} within thirty (30) days of receipt of a valid invoice; late amounts bear interest at two percent above the base rate."),
    ("Confidentiality", "Each party shall keep confidential all information received from the other party under clause {n} and shall not disclose it except to its advisers bound by equal duties."),
    ("Liability", "Neither party's total liability under clause {n} shall exceed the fees paid in the twelve (12) months before the claim, except for fraud, death or personal injury."),
    ("Termination", "Either party may terminate under clause {n} on ninety (90) days' written notice, or at once if the other party commits a material breach that is not remedied within thirty days."),
    ("Data protection", "The Supplier shall process personal data under clause {n} only on the Customer's documented instructions and shall assist with requests from data subjects."),
    ("Governing law", "This Agreement and any dispute arising under clause {n} shall be governed by the laws of the State of New York, and the courts of New York County shall have jurisdiction."),
]
lines = ["MASTER SERVICES AGREEMENT", "", "This Master Services Agreement is made between Northwind Traders, Inc. and Fabrikam Services Ltd.", ""]
n = 1
while len(lines) < 6000:
    title, body = topics[n % len(topics)]
    lines.append(f"{n}. {title.upper()}")
    lines.append(body.format(n=n))
    lines.append("")
    n += 1
open(sys.argv[1], "w").write("\n".join(lines) + "\n")
PY
"$BIN/pactwise-extract" long-pdf "$WORK/long.pdf" --from "$WORK/texts" --pages "$PAGES" 2>/dev/null
fi
export BENCH_DATA_DIR="$WORK/data"
# Each data dir is set up as a first run would leave it (else the app opens on its welcome screen).
if [[ "$PARTS" == *review* ]]; then
  "$BIN/pactwise" --data-dir "$BENCH_DATA_DIR" org setup --name "Bench Ltd" --json >/dev/null
  "$BIN/pactwise" --data-dir "$BENCH_DATA_DIR" import "$WORK/long.pdf" --json >/dev/null
fi
if [[ "$PARTS" == *viewer* ]]; then
  [ -f "$VIEWER_PDF" ] || { echo "the viewer benchmark needs VIEWER_PDF ($VIEWER_PDF is missing); PARTS=review skips it" >&2; exit 2; }
  export VIEWER_DATA_DIR="$WORK/viewer-data"
  "$BIN/pactwise" --data-dir "$VIEWER_DATA_DIR" org setup --name "Bench Ltd" --json >/dev/null
  "$BIN/pactwise" --data-dir "$VIEWER_DATA_DIR" import "$VIEWER_PDF" --json >/dev/null
fi

if [ -z "${DISPLAY:-}" ]; then
  display=":$(( 60 + RANDOM % 9 ))"
  Xvfb "$display" -screen 0 1280x800x24 -nolisten tcp >/dev/null 2>&1 &
  pids+=($!)
  export DISPLAY="$display"
  for _ in $(seq 1 50); do xdpyinfo >/dev/null 2>&1 && break; sleep 0.1; done
fi
driver_bin="$(command -v tauri-driver || echo "$HOME/.cargo/bin/tauri-driver")"
port=$(( 5444 + RANDOM % 500 ))
"$driver_bin" --port "$port" --native-port $(( port + 1000 )) >"$WORK/tauri-driver.log" 2>&1 &
pids+=($!)
export TAURI_DRIVER_PORT="$port"
for _ in $(seq 1 100); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done
echo "{\"figure\": \"machine\", \"profile\": \"$PROFILE\", \"pages\": $PAGES, \"cores\": $(getconf _NPROCESSORS_ONLN), \"load_average_1m\": $(cut -d' ' -f1 /proc/loadavg)}"
node "$ROOT/bench/review-ui.mjs"
if [[ "$PARTS" == *viewer* ]]; then
  # The peer: pdftoppm rendering page 50 alone at the scale the app asked for (PNG to a file, as the app caches it).
  scale=$(cat "$WORK/viewer-scale" 2>/dev/null || echo 1.25)
  dpi=$(python3 -c "print(round(72 * $scale))")
  times=()
  for _ in $(seq 1 "$JUMPS"); do
    t0=$(date +%s%N); pdftoppm -f 50 -l 50 -r "$dpi" -png "$VIEWER_PDF" "$WORK/peer" >/dev/null; t1=$(date +%s%N)
    times+=($(( (t1 - t0) / 1000 )))
  done
  python3 - "$scale" "${times[@]}" <<'PY'
import json, sys
scale, us = float(sys.argv[1]), sorted(int(x) / 1000 for x in sys.argv[2:])
at = lambda q: us[min(len(us) - 1, int(q * len(us)))]
print(json.dumps({"figure": "peer_pdftoppm_page_50_png_ms", "runs": len(us), "median_ms": round(at(0.5), 1),
                  "p90_ms": round(at(0.9), 1), "min_ms": round(us[0], 1), "max_ms": round(us[-1], 1), "scale": scale}))
PY
fi
