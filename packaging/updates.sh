# Signed updates (ARCHITECTURE.md, "Packaging"): the update key, the configuration compiled into the release app, a
# package's signature and a feed entry. Sourced by the packaging scripts after lib.sh; also runnable:
#   packaging/updates.sh config                      the JSON `make package` compiles in (TAURI_CONFIG)
#   packaging/updates.sh sign FILE VERSION [KEY]     writes FILE.sig, bound to VERSION
#   packaging/updates.sh feed VERSION URL SIG NOTES  prints a feed (the updater's static JSON) for one .deb
#
# The key: PACTWISE_UPDATE_KEY_DIR (updater.key, updater.key.pub) if set, as a release does with the key from the
# CI's secret store; else $PACKAGE_CACHE/keys, where a local development key is generated on first use (0600). The
# private key is never in the repository and never in a package.
#
# The feed compiled in: PACTWISE_UPDATE_FEED, else a placeholder under the reserved .invalid domain (nothing answers
# there, so a development package says the server cannot be reached). IT may point an installation elsewhere in
# /etc/pactwise-desk/update.json (crates/api/src/update.rs).

UPDATE_KEY_DIR="${PACTWISE_UPDATE_KEY_DIR:-$PACKAGE_CACHE/keys}"
UPDATE_FEED_DEFAULT="https://updates.pactwise.invalid/desk/{{target}}/{{arch}}/latest.json"
TAURI_CLI="$REPO_ROOT/ui/node_modules/.bin/tauri"

# Makes the development key pair when there is none (the Tauri CLI's minisign keys, no password).
ensure_update_key() {
	[ -f "$UPDATE_KEY_DIR/updater.key" ] && [ -f "$UPDATE_KEY_DIR/updater.key.pub" ] && return 0
	[ -n "${PACTWISE_UPDATE_KEY_DIR:-}" ] && die "PACTWISE_UPDATE_KEY_DIR=$UPDATE_KEY_DIR has no updater.key and updater.key.pub"
	[ -x "$TAURI_CLI" ] || die "the Tauri CLI is missing ($TAURI_CLI): run make setup"
	echo "packaging: generating a development update key in $UPDATE_KEY_DIR (a release uses the CI's key)" >&2
	mkdir -p "$(dirname "$UPDATE_KEY_DIR")" && (umask 077 && mkdir -p "$UPDATE_KEY_DIR")
	(umask 077 && "$TAURI_CLI" signer generate --ci -p "" -w "$UPDATE_KEY_DIR/updater.key" > /dev/null) ||
		die "the update key could not be generated"
	chmod 0600 "$UPDATE_KEY_DIR/updater.key"
}

# The updater's part of the app's configuration: the public key (the contents of updater.key.pub, as the plugin
# takes it) and the feed.
update_config() {
	ensure_update_key
	python3 - "$UPDATE_KEY_DIR/updater.key.pub" "${PACTWISE_UPDATE_FEED:-$UPDATE_FEED_DEFAULT}" <<'PY'
import json, sys
pubkey = open(sys.argv[1]).read().strip()
print(json.dumps({"plugins": {"updater": {"pubkey": pubkey, "endpoints": [sys.argv[2]]}}}))
PY
}

# Signs FILE (FILE.sig), binding the signature to VERSION (the updater refuses a feed that announces another).
sign_update() {
	local file=$1 version=$2 key=${3:-$UPDATE_KEY_DIR/updater.key}
	[ "$key" = "$UPDATE_KEY_DIR/updater.key" ] && ensure_update_key
	rm -f "$file.sig"
	TAURI_SIGNING_PRIVATE_KEY_PASSWORD="${TAURI_SIGNING_PRIVATE_KEY_PASSWORD:-}" \
		"$TAURI_CLI" signer sign -f "$key" --app-version "$version" "$file" > /dev/null ||
		die "could not sign $file"
	[ -s "$file.sig" ] || die "signing $file wrote no $file.sig"
}

# A feed (the updater's static format) offering VERSION of the Linux .deb at URL with the signature in SIG ("" for
# none: the entry then has no signature at all).
update_feed() {
	python3 - "$@" <<'PY'
import datetime, json, sys
version, url, sig, notes = sys.argv[1:5]
entry = {"url": url}
if sig:
    entry["signature"] = open(sig).read().strip()
print(json.dumps({
    "version": version,
    "notes": notes,
    "pub_date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
    "platforms": {"linux-x86_64-deb": entry},
}, indent=2))
PY
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	set -euo pipefail
	source "$(dirname "$0")/lib.sh"
	UPDATE_KEY_DIR="${PACTWISE_UPDATE_KEY_DIR:-$PACKAGE_CACHE/keys}"
	TAURI_CLI="$REPO_ROOT/ui/node_modules/.bin/tauri"
	case "${1:-}" in
	config) update_config ;;
	sign) sign_update "${2:?FILE}" "${3:?VERSION}" "${4:-}" ;;
	feed) update_feed "${2:?VERSION}" "${3:?URL}" "${4?SIG}" "${5:-}" ;;
	*) die "usage: packaging/updates.sh config | sign FILE VERSION [KEY] | feed VERSION URL SIG NOTES" ;;
	esac
fi
