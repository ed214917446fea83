#!/usr/bin/env bash
# Builds the desktop app's .deb with Tauri's bundler from the release binaries `make package` built: the app
# (/usr/bin/pactwise-desk), the CLI (/usr/bin/pactwise) and libpdfium under /usr/lib/pactwise/ (where crates/extract's
# locate_pdfium looks beside the installed program), checked against its SHA-256 first. The embedding model is the
# package pactwise-desk-model (packaging/build-model-deb.sh), which this one depends on at the model's version.
# Dependencies: what the binaries link against (runtime_depends), Tesseract's English data and the model. The
# bundler writes gzip; the package is repacked with xz (smaller, as the other two), then signed with the update key
# (packaging/updates.sh) for the updater: its signature beside it (.deb.sig) and a feed entry offering it
# (.update.json). Prints the .deb's path; the package lands in $PACKAGE_CACHE/out/.
#
# Env: PACTWISE_PDFIUM_PATH and PDFIUM_SHA256 (the Makefile's); PACTWISE_UPDATE_KEY_DIR and PACTWISE_UPDATE_FEED
# (updates.sh); PACTWISE_UPDATE_URL, where the feed entry says the .deb is served.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/updates.sh"

: "${PACTWISE_PDFIUM_PATH:?set by the Makefile}" "${PDFIUM_SHA256:?set by the Makefile}" "${PACTWISE_EMBED_MODEL_DIR:?set by the Makefile}"
app="$CARGO_TARGET_DIR/release/pactwise-desk"
cli="$CARGO_TARGET_DIR/release/pactwise"
stage="$PACKAGE_CACHE/stage/desk"
out="$PACKAGE_CACHE/out"
version=$(workspace_version)

# Checked copies of what the package ships: a file that does not match its checksum stops the build.
rm -rf "$stage" && mkdir -p "$stage" "$out"
echo "$PDFIUM_SHA256  $PACTWISE_PDFIUM_PATH" | sha256sum -c --quiet ||
	die "$PACTWISE_PDFIUM_PATH is not the libpdfium we ship (checksum differs): run make setup"
cp "$PACTWISE_PDFIUM_PATH" "$stage/libpdfium.so"
# The CLI ships without its symbol table (the bundler copies the app's binary as cargo built it).
install -m 0755 "$cli" "$stage/pactwise" && strip --strip-unneeded "$stage/pactwise"

# The app must carry this update key (make package compiles updates.sh's configuration in through TAURI_CONFIG):
# a package whose app trusts another key could never be updated by packages signed with this one.
update_config > "$stage/updater.json"
pubkey=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["plugins"]["updater"]["pubkey"])' "$stage/updater.json")
grep -qaF "$pubkey" "$app" ||
	die "$app was not built with the update key in $UPDATE_KEY_DIR: build it with make package (TAURI_CONFIG)"

depends=$(runtime_depends "$app" "$cli")
# Read at run time, not linked, so named here: Tesseract's English data, and the root certificates the HTTPS clients
# (the model API, the sync service) trust; without them both stay offline (found by the install test).
depends="$depends, tesseract-ocr-eng, ca-certificates, pactwise-desk-model (= $(model_package_version))"

# Bundling switched on for this target only (tauri.conf.json keeps it off so `make build` never bundles), with what
# only this build knows: the dependencies and the checked files. The rest of the bundle section is tauri.conf.json's.
python3 - "$stage/tauri.package.json" "$stage/updater.json" "$depends" "$stage" <<'PY'
import json, sys
path, updater, depends, stage = sys.argv[1:]
files = {
    "/usr/bin/pactwise": f"{stage}/pactwise",
    "/usr/lib/pactwise/libpdfium.so": f"{stage}/libpdfium.so",
}
config = {
    "bundle": {
        "active": True,
        "targets": ["deb"],
        "linux": {
            "deb": {
                # Tauri's bundler adds these two itself.
                "depends": [d for d in (d.strip() for d in depends.split(","))
                            if d and d not in ("libwebkit2gtk-4.1-0", "libgtk-3-0")],
                "files": files,
            }
        },
    },
    # The same updater configuration as compiled into the app (the bundler reads it; the .deb is signed below).
    **json.load(open(updater)),
}
with open(path, "w") as f:
    json.dump(config, f, indent=2)
PY

cd "$REPO_ROOT"
ui/node_modules/.bin/tauri bundle --bundles deb --config "$stage/tauri.package.json" >&2
built="$CARGO_TARGET_DIR/release/bundle/deb/Pactwise Desk_${version}_amd64.deb"
[ -f "$built" ] || die "the bundler did not write $built"
deb="$out/pactwise-desk_${version}_amd64.deb"
# Repacked with xz: the same tree and control data, about a quarter smaller than the bundler's gzip.
repack="$stage/repack"
rm -rf "$repack" && dpkg-deb -R "$built" "$repack"
dpkg-deb --root-owner-group -Zxz --build "$repack" "$deb" >&2
rm -rf "$repack"
# Signed for the updater (bound to its version) after the repack, so the signature covers the file shipped, and the
# feed entry a release publishes for it.
sign_update "$deb" "$version"
update_feed "$version" "${PACTWISE_UPDATE_URL:-https://updates.pactwise.invalid/desk/$(basename "$deb")}" "$deb.sig" \
	"Pactwise Desk $version" > "${deb%.deb}.update.json"
echo "$deb"
