#!/usr/bin/env bash
# The release build's footprint, each figure beside its goal (issue 24): the release binaries' sizes, the .debs'
# sizes (from `make package`), cold start to first paint, and the memory of all the app's processes idle after
# opening the queue and one 100-page contract. Prints JSON lines.
#   cold start: a new app process on a data dir holding the contract, from the process's start (its /proc start
#               time) to WebKit's first-contentful-paint (Paint Timing, read through WebDriver); the backend's
#               "window ready" log line is printed beside it. Caches are warm (the page cache is not dropped).
#   memory:     PSS (shared pages divided among the processes sharing them) summed over the app and every process
#               under it (WebKit's web and network processes), read from /proc/PID/smaps_rollup.
# The contract is generated and made into a text-layer PDF as bench/review-ui.sh does. RUNS starts (default 5),
# IDLE_SECONDS after opening the review (default 10), LONG_IDLE_SECONDS (default 180: past the model's release),
# PAGES (default 100). SMAPS_DIR=DIR keeps each process's /proc/PID/smaps at the long idle (where its memory is).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
export RUNS=${RUNS:-5} IDLE_SECONDS=${IDLE_SECONDS:-10} PAGES=${PAGES:-100}
export OMP_THREAD_LIMIT=1
TARGET=${CARGO_TARGET_DIR:-/var/cache/pactwise/target}
export CARGO_TARGET_DIR=$TARGET
PACKAGE_CACHE=${PACKAGE_CACHE:-/var/cache/pactwise/package}
BIN=$TARGET/release
export PACTWISE_APP=$BIN/pactwise-desk
WORK=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT

# Only makes the contract's PDF, so any build of it will do (the debug one when no release one was built).
EXTRACT=${PACTWISE_EXTRACT:-$BIN/pactwise-extract}
[ -x "$EXTRACT" ] || EXTRACT=$TARGET/debug/pactwise-extract
for bin in "$BIN/pactwise-desk" "$BIN/pactwise" "$BIN/pactwise-sync-server" "$EXTRACT"; do
	[ -x "$bin" ] || { echo "footprint: $bin is missing: run make package (and cargo build -p pactwise-extract)" >&2; exit 2; }
done
size_json() { python3 -c 'import json, os, sys; print(json.dumps({"figure": sys.argv[1], "file": os.path.basename(sys.argv[2]), "bytes": os.path.getsize(sys.argv[2]), "mb": round(os.path.getsize(sys.argv[2]) / 1e6, 1), **({"goal_mb": float(sys.argv[3])} if len(sys.argv) > 3 else {})}))' "$@"; }
echo "{\"figure\": \"machine\", \"cores\": $(getconf _NPROCESSORS_ONLN), \"load_average_1m\": $(cut -d' ' -f1 /proc/loadavg)}"
size_json release_binary_bytes "$BIN/pactwise-desk"
size_json release_binary_bytes "$BIN/pactwise"
size_json release_binary_bytes "$BIN/pactwise-sync-server"
for deb in "$PACKAGE_CACHE"/out/pactwise-desk_*.deb; do [ -f "$deb" ] && size_json deb_bytes "$deb" 60; done
for deb in "$PACKAGE_CACHE"/out/pactwise-desk-model_*.deb; do [ -f "$deb" ] && size_json deb_bytes "$deb"; done
for deb in "$PACKAGE_CACHE"/out/pactwise-sync-server_*.deb; do [ -f "$deb" ] && size_json deb_bytes "$deb"; done
# What the app's .deb holds, by part (installed bytes), to show where its size goes.
for deb in "$PACKAGE_CACHE"/out/pactwise-desk_*.deb; do
	[ -f "$deb" ] || continue
	dpkg-deb -c "$deb" | awk '
		{ size = $3; path = $6 }
		path ~ /models\// { parts["embedding model"] += size; next }
		path ~ /libpdfium/ { parts["libpdfium"] += size; next }
		path ~ /bin\/pactwise-desk$/ { parts["app binary"] += size; next }
		path ~ /bin\/pactwise$/ { parts["CLI binary"] += size; next }
		{ parts["other"] += size }
		END { printf "{\"figure\": \"deb_contents_installed_mb\""; for (p in parts) printf ", \"%s\": %.1f", p, parts[p] / 1e6; print "}" }'
done

# The 100-page contract, as bench/review-ui.sh makes it, imported into a fresh data dir by the CLI.
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
"$EXTRACT" long-pdf "$WORK/long.pdf" --from "$WORK/texts" --pages "$PAGES" 2>/dev/null
export BENCH_DATA_DIR="$WORK/data"
"$BIN/pactwise" --data-dir "$BENCH_DATA_DIR" org setup --name "Footprint Ltd" --json >/dev/null
"$BIN/pactwise" --data-dir "$BENCH_DATA_DIR" import "$WORK/long.pdf" --json >/dev/null

if [ -z "${DISPLAY:-}" ]; then
	display=":$((60 + RANDOM % 9))"
	Xvfb "$display" -screen 0 1280x800x24 -nolisten tcp >/dev/null 2>&1 &
	pids+=($!)
	export DISPLAY="$display"
	for _ in $(seq 1 50); do xdpyinfo >/dev/null 2>&1 && break; sleep 0.1; done
fi
driver_bin="$(command -v tauri-driver || echo "$HOME/.cargo/bin/tauri-driver")"
port=$((5444 + RANDOM % 500))
"$driver_bin" --port "$port" --native-port $((port + 1000)) >"$WORK/tauri-driver.log" 2>&1 &
pids+=($!)
export TAURI_DRIVER_PORT="$port" TAURI_DRIVER_PID=$!
for _ in $(seq 1 100); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done
node "$ROOT/bench/footprint.mjs"
