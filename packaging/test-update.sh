# The signed-update test, step 5 of the install test (sourced by packaging/test-install.sh once pactwise-desk is
# installed in the chroot; uses its root, results, display, in_root, log and failures).
#
# A feed is served on loopback from the host (python's http.server); the installed app is pointed at it through the
# computer-wide setting IT would use (/etc/pactwise-desk/update.json) and driven through its real window over
# WebDriver (tauri-driver and WebKitWebDriver inside the chroot, tests/e2e/update.package.mjs on the host). What the
# feed offers, in turn:
#   the installed version, then an older one                     → "up to date", nothing installed;
#   a newer version whose bytes were changed after signing,
#   one signed by another key, one without a signature, and
#   one announcing a newer number than its signature names       → refused in words, the installed version unchanged;
#   the newer version, signed                                    → installed (dpkg-query shows it), then restarted.
# The newer version is the same release build repackaged with a higher Debian version (dpkg-deb -R, the control
# file's Version, dpkg-deb -b) and signed with the update key: the binary inside still calls itself the old version,
# which the test does not rely on. Screenshots: update-*.png in the results.
source "$(dirname "${BASH_SOURCE[0]}")/updates.sh"

update_test() {
	local work="$PACKAGE_CACHE/update-test" serve version newer deb port driver_port driver_bin
	rm -rf "$work" && mkdir -p "$work/feeds"
	serve="$work/serve" && mkdir -p "$serve"
	version=$(dpkg-deb -f "$desk_deb" Version)
	newer=$(echo "$version" | awk -F. -v OFS=. '{ $NF = $NF + 1; print }')
	local older
	older=$(echo "$version" | awk -F. -v OFS=. '{ if ($NF > 0) $NF = $NF - 1; else { $(NF - 1) = $(NF - 1) - 1; $NF = 9 } print }')

	log "update test: repackaging $version as $newer and signing it (feeds in $work)"
	dpkg-deb -R "$desk_deb" "$work/pkg"
	sed -i "s/^Version: .*/Version: $newer/" "$work/pkg/DEBIAN/control"
	deb="pactwise-desk_${newer}_amd64.deb"
	dpkg-deb -Zgzip --root-owner-group -b "$work/pkg" "$serve/$deb" > /dev/null
	rm -rf "$work/pkg"
	sign_update "$serve/$deb" "$newer"
	# The installed version's own package and signature (make package signed it), for "up to date".
	cp "$desk_deb" "$serve/current.deb"
	[ -f "$desk_deb.sig" ] || die "$desk_deb.sig is missing: make package signs the package"
	cp "$desk_deb.sig" "$serve/current.deb.sig"
	# Changed after signing: one byte in the middle, the good signature kept.
	cp "$serve/$deb" "$serve/tampered.deb"
	python3 - "$serve/tampered.deb" <<-'PY'
		import sys
		with open(sys.argv[1], "r+b") as f:
		    f.seek(0, 2); middle = f.tell() // 2; f.seek(middle); byte = f.read(1); f.seek(middle)
		    f.write(bytes([byte[0] ^ 0xFF]))
	PY
	# Signed, and bound to the right version, but with a key that is not the app's.
	mkdir -p "$work/other-key"
	(umask 077 && "$TAURI_CLI" signer generate --ci -p "" -w "$work/other-key/updater.key" > /dev/null)
	cp "$serve/$deb" "$serve/other-key.deb"
	sign_update "$serve/other-key.deb" "$newer" "$work/other-key/updater.key"

	port=$((8200 + RANDOM % 500))
	local url="http://127.0.0.1:$port"
	update_feed "$version" "$url/current.deb" "$serve/current.deb.sig" "The installed version" > "$work/feeds/equal.json"
	update_feed "$older" "$url/current.deb" "$serve/current.deb.sig" "An older version" > "$work/feeds/older.json"
	update_feed "$newer" "$url/tampered.deb" "$serve/$deb.sig" "Changed after signing" > "$work/feeds/tampered.json"
	update_feed "$newer" "$url/other-key.deb" "$serve/other-key.deb.sig" "Signed by another key" > "$work/feeds/other-key.json"
	update_feed "$newer" "$url/$deb" "" "No signature" > "$work/feeds/unsigned.json"
	# A newer number than the package's signature names (the signature itself is good): a tampered feed.
	update_feed "$(echo "$newer" | awk -F. -v OFS=. '{ $NF = $NF + 1; print }')" "$url/$deb" "$serve/$deb.sig" \
		"A version number the signature does not name" > "$work/feeds/wrong-version.json"
	update_feed "$newer" "$url/$deb" "$serve/$deb.sig" "$(printf 'Pactwise Desk %s.\nSigned by the Pactwise update key.' "$newer")" \
		> "$work/feeds/signed.json"
	cp "$work/feeds/equal.json" "$serve/latest.json"

	python3 -m http.server --bind 127.0.0.1 "$port" --directory "$serve" > "$results/update-feed-server.log" 2>&1 &
	extra_pids+=($!)

	# The computer-wide feed setting (crates/api/src/update.rs): plain HTTP is accepted for loopback only.
	mkdir -p "$root/etc/pactwise-desk"
	printf '{"feed": "%s/latest.json"}\n' "$url" > "$root/etc/pactwise-desk/update.json"

	# WebDriver inside the chroot: WebKitWebDriver from the mirror, the host's tauri-driver; sudo for the updater's
	# installer (it tries pkexec, then a graphical sudo, then sudo; the test runs as root, so sudo asks nothing).
	log "update test: apt-get install sudo webkit2gtk-driver (in the chroot, for the test only)"
	in_root env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends sudo webkit2gtk-driver \
		> "$results/apt-update-test.log" 2>&1 || { log "FAILED: installing the WebDriver tools (see apt-update-test.log)"; failures=$((failures + 1)); return; }
	driver_bin=$(command -v tauri-driver || echo "$HOME/.cargo/bin/tauri-driver")
	[ -x "$driver_bin" ] || { log "FAILED: tauri-driver is missing on the host (make setup installs it)"; failures=$((failures + 1)); return; }
	install -D -m 0755 "$driver_bin" "$root/opt/pactwise-e2e/tauri-driver"

	# The app opens on a set-up data dir (the welcome screen is the install test's first window, not this test's).
	in_root pactwise --data-dir /root/update-test-data org setup --name "Update Test Ltd" > "$results/update-setup.log" 2>&1 ||
		{ log "FAILED: setting up the update test's data dir (see update-setup.log)"; failures=$((failures + 1)); return; }

	driver_port=$((4800 + RANDOM % 400))
	setsid chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 DISPLAY="$display" \
		XDG_RUNTIME_DIR=/tmp PACTWISE_LOG=info OMP_THREAD_LIMIT=1 \
		/opt/pactwise-e2e/tauri-driver --port "$driver_port" --native-port $((driver_port + 1)) \
		> "$results/tauri-driver.log" 2>&1 &
	extra_groups+=($!)
	for _ in $(seq 1 100); do (exec 3<> "/dev/tcp/127.0.0.1/$driver_port") 2> /dev/null && break; sleep 0.1; done

	log "update test: driving the installed app (feed at $url/latest.json)"
	local line
	while IFS= read -r line; do
		log "$line"
		case "$line" in FAILED:*) failures=$((failures + 1)) ;; esac
	done < <(cd "$REPO_ROOT/tests/e2e" && DRIVER_PORT="$driver_port" CHROOT="$root" FEEDS="$work/feeds" SERVE="$serve" \
		OUT="$results" OLD_VERSION="$version" NEW_VERSION="$newer" DISPLAY="$display" node update.package.mjs 2> "$results/update-test.log" ||
		echo "FAILED: the update test stopped (see update-test.log)")
	log "update test: installed now: $(in_root dpkg-query -W -f='${Package} ${Version}' pactwise-desk)"
}

update_test
