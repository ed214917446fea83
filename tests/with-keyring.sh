#!/usr/bin/env bash
# Runs a command inside a private D-Bus session with an unlocked gnome-keyring, so code that uses the OS keychain
# (Secret Service) can be tested on a headless machine (TOOLCHAIN.md). Falls back to running the command as is.
set -euo pipefail
if command -v dbus-run-session >/dev/null && command -v gnome-keyring-daemon >/dev/null; then
  export PACTWISE_KEYRING_TESTS=1
  # The test keyring lives in a throwaway directory, never in the person's own keyrings.
  XDG_DATA_HOME="$(mktemp -d)"
  export XDG_DATA_HOME
  exec dbus-run-session -- bash -c 'printf pactwise-test | gnome-keyring-daemon --unlock --components=secrets >/dev/null; exec "$@"' keyring "$@"
fi
echo "with-keyring: no dbus-run-session or gnome-keyring-daemon; keychain tests are skipped" >&2
exec "$@"
