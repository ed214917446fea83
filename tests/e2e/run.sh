#!/usr/bin/env bash
# End-to-end tests of the real desktop app: Xvfb (when there is no display) + tauri-driver + WebKitWebDriver,
# driven by WebdriverIO from node's test runner. Screenshots land in tests/e2e/output/. Arguments: test files to run
# (default: all).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
export PACTWISE_APP="${PACTWISE_APP:-${CARGO_TARGET_DIR:-$here/../../target}/debug/pactwise-desk}"
export E2E_OUTPUT="$here/output"
rm -rf "$E2E_OUTPUT"; mkdir -p "$E2E_OUTPUT"
[ -x "$PACTWISE_APP" ] || { echo "e2e: the app binary $PACTWISE_APP is missing; run make build" >&2; exit 1; }

driver_bin="$(command -v tauri-driver || echo "$HOME/.cargo/bin/tauri-driver")"
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT

if [ -z "${DISPLAY:-}" ]; then
  display=":$(( 90 + RANDOM % 9 ))"
  Xvfb "$display" -screen 0 1280x800x24 -nolisten tcp >"$E2E_OUTPUT/xvfb.log" 2>&1 &
  pids+=($!)
  export DISPLAY="$display"
  for _ in $(seq 1 50); do xdpyinfo >/dev/null 2>&1 && break; sleep 0.1; done
fi

# The app reaches the model through the fake server that assistant.test.mjs starts on this port; without a stored key
# (every other test) the model is simply offline.
export PACTWISE_MODEL_ENDPOINT="${PACTWISE_MODEL_ENDPOINT:-http://127.0.0.1:$(( 5600 + RANDOM % 400 ))}"

# The app's save dialogs answer with files in this folder instead of opening (a native dialog cannot be driven).
export PACTWISE_SAVE_DIR="$E2E_OUTPUT/saved"
# WebKit composites here, as it did before the app chose to paint directly (`choose_webkit_painting`): in the direct
# mode WebKitWebDriver's screenshot waits for a presentation update an idle page never sends, and hangs (seen in CI,
# 2 minutes per retry). The app's behaviour is the same in both modes; the viewer benchmark measures the direct one.
export WEBKIT_DISABLE_COMPOSITING_MODE=0
mkdir -p "$PACTWISE_SAVE_DIR"

# Two drivers: a test may drive two desktops at once (each driver starts its own app and WebKitWebDriver).
port=$(( 4444 + RANDOM % 500 ))
port2=$(( port + 500 ))
"$driver_bin" --port "$port" --native-port $(( port + 1000 )) >"$E2E_OUTPUT/tauri-driver.log" 2>&1 &
pids+=($!)
"$driver_bin" --port "$port2" --native-port $(( port2 + 1000 )) >"$E2E_OUTPUT/tauri-driver-2.log" 2>&1 &
pids+=($!)
export TAURI_DRIVER_PORT="$port" TAURI_DRIVER_PORT_2="$port2"
for p in "$port" "$port2"; do
  for _ in $(seq 1 100); do
    (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null && break
    sleep 0.1
  done
done

cd "$here"
# All test files, or those named (e.g. `tests/e2e/run.sh prep.test.mjs`).
if [ "$#" -gt 0 ]; then files=("$@"); else files=(./*.test.mjs); fi
node --test --test-concurrency=1 "${files[@]}"
