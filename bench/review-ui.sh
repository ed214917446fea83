#!/usr/bin/env bash
# Review workspace speed in the real app (release build by default), driven through WebDriver like the e2e tests.
# Prints one JSON line per figure (median, p90, min, max over the runs) with its goal beside it:
#   review_open_to_first_page_and_checklist_ms  from opening a 100-page contract's review (Enter in the queue) to
#                                               its first page image and the checklist drawn (goal < 1000 ms);
#                                               the first open (page renders not cached yet) is printed apart
#   item_select_to_quote_highlighted_ms         from selecting an item (j) to its quote highlighted on its page,
#                                               scrolled into view and painted (goal < 100 ms)
# The figures are the app's own performance marks (performance.measure), read through WebDriver.
# PROFILE=debug measures the debug build instead; OPENS and STEPS set the number of runs.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PROFILE=${PROFILE:-release}
export OPENS=${OPENS:-6} STEPS=${STEPS:-30} PAGES=${PAGES:-100}
export OMP_THREAD_LIMIT=1
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
flag=(); [ "$PROFILE" = release ] && flag=(--release)
(cd "$ROOT/ui" && npm run build >/dev/null)
(cd "$ROOT" && cargo build --quiet "${flag[@]}" -p pactwise-desk -p pactwise-cli -p pactwise-extract)
BIN=$TARGET/$PROFILE
export PACTWISE_APP=$BIN/pactwise-desk
WORK=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT

# A long contract we generate (numbered clauses), made into a text-layer PDF of $PAGES pages and imported by the CLI.
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
export BENCH_DATA_DIR="$WORK/data"
"$BIN/pactwise" --data-dir "$BENCH_DATA_DIR" import "$WORK/long.pdf" --json >/dev/null

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
echo "{\"figure\": \"machine\", \"profile\": \"$PROFILE\", \"pages\": $PAGES, \"cores\": $(nproc), \"load_average_1m\": $(cut -d' ' -f1 /proc/loadavg)}"
node "$ROOT/bench/review-ui.mjs"
