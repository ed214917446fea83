#!/usr/bin/env bash
# Builds the sync service's .deb (pactwise-sync-server) with dpkg-deb from a staged tree: the release binary, its
# systemd unit, the default settings in /etc/pactwise-sync/ (a conffile) and the maintainer scripts in
# packaging/sync-server/ (postinst makes the pactwise-sync user, /var/lib/pactwise-sync and the Source key).
# Prints the .deb's path; the package lands in $PACKAGE_CACHE/out/.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

here="$REPO_ROOT/packaging/sync-server"
binary="$CARGO_TARGET_DIR/release/pactwise-sync-server"
stage="$PACKAGE_CACHE/stage/sync-server"
out="$PACKAGE_CACHE/out"
version=$(workspace_version)

rm -rf "$stage" && mkdir -p "$stage/DEBIAN" "$stage/usr/bin" "$stage/lib/systemd/system" "$stage/etc/pactwise-sync" "$out"
install -m 0755 "$binary" "$stage/usr/bin/pactwise-sync-server"
strip --strip-unneeded "$stage/usr/bin/pactwise-sync-server"
install -m 0644 "$here/pactwise-sync-server.service" "$stage/lib/systemd/system/pactwise-sync-server.service"
install -m 0640 "$here/pactwise-sync.env" "$stage/etc/pactwise-sync/pactwise-sync.env"
for script in postinst prerm postrm; do install -m 0755 "$here/$script" "$stage/DEBIAN/$script"; done
echo /etc/pactwise-sync/pactwise-sync.env > "$stage/DEBIAN/conffiles"

depends=$(runtime_depends "$binary")
size=$(du -sk --exclude=DEBIAN "$stage" | cut -f1)
sed -e "s/@VERSION@/$version/" -e "s/@DEPENDS@/$depends/" -e "s/@INSTALLED_SIZE@/$size/" "$here/control.in" \
	> "$stage/DEBIAN/control"
(cd "$stage" && find . -path ./DEBIAN -prune -o -type f -printf '%P\n' | LC_ALL=C sort | xargs md5sum) \
	> "$stage/DEBIAN/md5sums"

deb="$out/pactwise-sync-server_${version}_amd64.deb"
dpkg-deb --root-owner-group -Zxz --build "$stage" "$deb" >&2
echo "$deb"
