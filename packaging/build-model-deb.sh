#!/usr/bin/env bash
# Builds the embedding model's .deb (pactwise-desk-model, Architecture: amd64) with dpkg-deb from a staged tree: the
# model's files and the ONNX Runtime library that runs them under /usr/lib/pactwise/models/all-minilm-l6-v2/ (where
# crates/embed's locate_model_dir looks beside the installed program), each checked against its SHA-256 first. A
# package of its own that the app's package depends on (as Debian ships Tesseract's language data): an update of the
# app does not carry 50 MB of unchanged model and runtime. Its version is the model's (lib.sh's model_package_version), not
# the app's. Prints the .deb's path; the package lands in $PACKAGE_CACHE/out/.
#
# Env: PACTWISE_EMBED_MODEL_DIR (the Makefile's).
set -euo pipefail
source "$(dirname "$0")/lib.sh"

: "${PACTWISE_EMBED_MODEL_DIR:?set by the Makefile}"
stage="$PACKAGE_CACHE/stage/desk-model"
out="$PACKAGE_CACHE/out"
version=$(model_package_version)
models="$stage/usr/lib/pactwise/models/all-minilm-l6-v2"

rm -rf "$stage" && mkdir -p "$stage/DEBIAN" "$models" "$out"
# The model files' checksums have one home, crates/embed's MODEL_FILES; read them from there.
count=0
while read -r name sum; do
	echo "$sum  $PACTWISE_EMBED_MODEL_DIR/$name" | sha256sum -c --quiet ||
		die "$PACTWISE_EMBED_MODEL_DIR/$name is not the model file we ship (checksum differs): run make setup"
	install -m 0644 "$PACTWISE_EMBED_MODEL_DIR/$name" "$models/$name"
	count=$((count + 1))
done < <(sed -n '/^pub const MODEL_FILES/,/^\];/s/^ *("\([^"]*\)", "\([0-9a-f]\{64\}\)"),$/\1 \2/p' "$REPO_ROOT/crates/embed/src/lib.rs")
[ "$count" -ge 3 ] || die "could not read the model's files and checksums from crates/embed/src/lib.rs"

size=$(du -sk --exclude=DEBIAN "$stage" | cut -f1)
sed -e "s/@VERSION@/$version/" -e "s/@INSTALLED_SIZE@/$size/" "$REPO_ROOT/packaging/desk-model/control.in" \
	> "$stage/DEBIAN/control"
(cd "$stage" && find . -path ./DEBIAN -prune -o -type f -printf '%P\n' | LC_ALL=C sort | xargs md5sum) \
	> "$stage/DEBIAN/md5sums"

deb="$out/pactwise-desk-model_amd64.deb"
dpkg-deb --root-owner-group -Zxz --build "$stage" "$deb" >&2
echo "$deb"
