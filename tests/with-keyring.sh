#!/usr/bin/env bash
# Runs a command inside a private D-Bus session with an unlocked gnome-keyring, so code that uses the OS keychain
# (Secret Service) can be tested on a headless machine (TOOLCHAIN.md); the tests see PACTWISE_KEYRING_TESTS=1.
# The keychain is checked before the command runs (a secret stored, read back and removed). When there is none:
# under CI (CI set to anything but empty, 0 or false) this fails with the reason, so keychain tests cannot pass by
# skipping; elsewhere it says so and runs the command without one (the keychain tests then say they skipped).
set -euo pipefail
if [ "$#" -eq 0 ]; then
  echo "usage: tests/with-keyring.sh COMMAND [ARGS...]" >&2
  exit 2
fi

in_ci() { case "${CI:-}" in "" | 0 | false | FALSE | False) return 1 ;; *) return 0 ;; esac; }

# No keychain: fail under CI, else run the command without one.
no_keychain() {
  if in_ci; then
    echo "with-keyring: no OS keychain for the tests: $1. Under CI the keychain tests must run, so this fails;" \
      "run make setup (it installs dbus, gnome-keyring and libsecret-tools)." >&2
    exit 1
  fi
  echo "with-keyring: no OS keychain: $1; running without one (the keychain tests skip, saying so)." >&2
  unset PACTWISE_KEYRING_TESTS
  exec "${COMMAND[@]}"
}
COMMAND=("$@")

if [ "${WITH_KEYRING_INSIDE:-}" = 1 ]; then
  # Inside the private D-Bus session: unlock a keyring in the throwaway XDG_DATA_HOME, then prove it works.
  unset WITH_KEYRING_INSIDE
  if ! printf pactwise-test | gnome-keyring-daemon --unlock --components=secrets >/dev/null; then
    no_keychain "gnome-keyring-daemon could not unlock a keyring"
  fi
  if command -v secret-tool >/dev/null; then
    probe=(service pactwise-with-keyring probe "$$")
    # A daemon just started may not have its unlocked keyring ready for the first store on a busy machine (it then
    # asks for a prompt it cannot show; seen on a machine busy with builds): the probe is tried for about ten seconds
    # before the keychain counts as missing.
    kept=0
    for delay in 0.1 0.2 0.4 0.8 1 1.5 2 2 2; do
      if printf probe | secret-tool store --label=pactwise-with-keyring "${probe[@]}" 2>/dev/null &&
        [ "$(secret-tool lookup "${probe[@]}" 2>/dev/null)" = probe ]; then
        kept=1
        break
      fi
      printf pactwise-test | gnome-keyring-daemon --unlock --components=secrets >/dev/null 2>&1 || true
      sleep "$delay"
    done
    if [ "$kept" != 1 ]; then
      no_keychain "the Secret Service did not keep a secret (secret-tool store/lookup failed 9 times over 10 s)"
    fi
    secret-tool clear "${probe[@]}" 2>/dev/null || true
  elif in_ci; then
    no_keychain "secret-tool is missing, so the keychain cannot be checked"
  fi
  export PACTWISE_KEYRING_TESTS=1
  exec "${COMMAND[@]}"
fi

for tool in dbus-run-session dbus-daemon gnome-keyring-daemon; do
  command -v "$tool" >/dev/null || no_keychain "$tool is not installed (or not on PATH)"
done
# The test keyring lives in a throwaway directory, never in the person's own keyrings.
XDG_DATA_HOME="$(mktemp -d)"
export XDG_DATA_HOME WITH_KEYRING_INSIDE=1
exec dbus-run-session -- "$0" "$@"
