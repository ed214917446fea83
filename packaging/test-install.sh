#!/usr/bin/env bash
# The install test (`make package-test`): the three .debs installed into a clean Debian 12 minbase chroot with apt (their
# dependencies from the Debian mirror this machine uses), the app started from the chroot under Xvfb on a fresh data
# dir and a screenshot of its first window taken, the service's --help run and its unit checked; then the signed-update
# test (packaging/test-update.sh): the installed app refuses tampered and unsigned updates and installs a signed one.
#
# Usage: packaging/test-install.sh DESK_DEB SYNC_DEB MODEL_DEB   (run as root; Xvfb, ImageMagick, debootstrap on the host)
# Output: $PACKAGE_CACHE/test/ (first-window.png, update-*.png, app.log, install logs, summary.txt).
set -euo pipefail
source "$(dirname "$0")/lib.sh"

desk_deb=$(readlink -f "${1:?give the desktop app .deb}")
sync_deb=$(readlink -f "${2:?give the sync service .deb}")
model_deb=$(readlink -f "${3:?give the embedding model .deb}")
[ "$(id -u)" -eq 0 ] || die "the install test makes a chroot: run it as root"
for tool in debootstrap Xvfb import xdpyinfo chroot mount; do
	command -v "$tool" >/dev/null || die "$tool is missing: run make setup (make package-test installs debootstrap)"
done

base="$PACKAGE_CACHE/chroot/bookworm-minbase"
root="$PACKAGE_CACHE/chroot/install-test"
results="$PACKAGE_CACHE/test"
started=$(date +%s)
rm -rf "$results" && mkdir -p "$results"
log() { echo "[$(($(date +%s) - started))s] $*" | tee -a "$results/summary.txt" >&2; }

# 1. A pristine minbase, made once (debootstrap from the host's mirror) and copied for every run so each run
#    starts clean.
read -r mirror suite < <(debian_mirror)
if [ ! -f "$base/.complete" ]; then
	log "making a Debian $suite minbase with debootstrap (once; packages cached in $PACKAGE_CACHE/debootstrap-cache)"
	rm -rf "$base" && mkdir -p "$base" "$PACKAGE_CACHE/debootstrap-cache"
	debootstrap --variant=minbase --cache-dir="$PACKAGE_CACHE/debootstrap-cache" "$suite" "$base" "$mirror" \
		> "$results/debootstrap.log" 2>&1 || die "debootstrap failed: see $results/debootstrap.log"
	touch "$base/.complete"
fi

mounts=()
extra_pids=()
extra_groups=()
cleanup() {
	local i
	for i in "${extra_groups[@]}"; do kill -- "-$i" 2>/dev/null || true; done
	for i in "${extra_pids[@]}"; do kill "$i" 2>/dev/null || true; done
	[ -n "${xvfb_pid:-}" ] && kill "$xvfb_pid" 2>/dev/null || true
	for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do umount -l "${mounts[i]}" 2>/dev/null || true; done
}
trap cleanup EXIT
bind() { mkdir -p "$root$2" && mount "${@:3}" --bind "$1" "$root$2" && mounts+=("$root$2"); }

if mount | grep -q " $root/"; then die "$root still has something mounted: unmount it first"; fi
rm -rf "$root" && cp -a "$base" "$root"
log "clean chroot at $root (from $base)"

# The chroot installs from where this machine installs: its apt sources and its Acquire settings, its resolver.
rm -f "$root/etc/apt/sources.list"
cp /etc/apt/sources.list.d/*.sources "$root/etc/apt/sources.list.d/" 2>/dev/null || cp /etc/apt/sources.list "$root/etc/apt/"
grep -l '^Acquire::' /etc/apt/apt.conf.d/* 2>/dev/null | xargs -r cp -t "$root/etc/apt/apt.conf.d/"
cp /etc/resolv.conf "$root/etc/resolv.conf"

mkdir -p "$root/proc" "$root/sys" "$root/dev"
mount -t proc proc "$root/proc" && mounts+=("$root/proc")
bind /sys /sys -o ro
bind /dev /dev
mount -t tmpfs -o mode=1777 shm "$root/dev/shm" && mounts+=("$root/dev/shm")
cp "$desk_deb" "$sync_deb" "$model_deb" "$root/tmp/"
in_root() { chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 "$@"; }

# 2. Both packages installed with apt: their dependencies come from the mirror.
log "apt-get update"
in_root apt-get update > "$results/apt-update.log" 2>&1 || die "apt-get update failed in the chroot: see $results/apt-update.log"
log "apt-get install ./$(basename "$desk_deb") ./$(basename "$sync_deb") ./$(basename "$model_deb")"
in_root env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
	"/tmp/$(basename "$desk_deb")" "/tmp/$(basename "$sync_deb")" "/tmp/$(basename "$model_deb")" \
	> "$results/apt-install.log" 2>&1 ||
	die "installing the packages failed: see $results/apt-install.log"
log "installed: $(in_root dpkg-query -W -f='${Package} ${Version}, ' pactwise-desk pactwise-desk-model pactwise-sync-server)"
in_root apt-get clean

# 3. What the packages put in place.
check() { if "$@"; then log "ok: ${*: -1}"; else log "FAILED: $*"; failures=$((failures + 1)); fi; }
failures=0
check test -x "$root/usr/bin/pactwise-desk"
check test -x "$root/usr/bin/pactwise"
check test -f "$root/usr/lib/pactwise/libpdfium.so"
check test -f "$root/usr/lib/pactwise/models/all-minilm-l6-v2/model.onnx"
check test -f "$root/usr/lib/pactwise/models/all-minilm-l6-v2/libonnxruntime.so.1.31.1"
check test -f "$root/usr/share/tesseract-ocr/5/tessdata/eng.traineddata"
# The installed CLI finds the packaged libpdfium and model with no PACTWISE_* variable set and nothing under
# /usr/local (pactwise_extract::locate_pdfium, pactwise_embed::locate_model_dir): a one-page PDF written here is
# imported (its text read by pdfium) and found by a search that uses the model ("hybrid"; "bm25" without it).
python3 - "$root/tmp/sample.pdf" <<'PY'
import sys
text = b"SERVICES AGREEMENT. Either party may terminate this Agreement on ninety days written notice."
stream = b"BT /F1 11 Tf 72 720 Td (" + text + b") Tj ET"
objs = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream"]
out, offsets = b"%PDF-1.4\n", []
for number, body in enumerate(objs, 1):
    offsets.append(len(out))
    out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
xref = len(out)
out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objs) + 1) + b"".join(b"%010d 00000 n \n" % o for o in offsets)
out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objs) + 1, xref)
open(sys.argv[1], "wb").write(out)
PY
if [ -e "$root/usr/local/lib/pactwise" ]; then log "FAILED: /usr/local/lib/pactwise exists in the chroot"; failures=$((failures + 1)); fi
in_root pactwise --data-dir /root/cli-data --json import /tmp/sample.pdf > "$results/cli-import.json" 2> "$results/cli-import.log" || true
if grep -q '"page_count":1' "$results/cli-import.json" && grep -q '"extraction_error":null' "$results/cli-import.json"; then
	log "ok: the installed CLI read a PDF with the packaged libpdfium"
else
	log "FAILED: the installed CLI could not read a PDF (see cli-import.json, cli-import.log)"; failures=$((failures + 1))
fi
in_root pactwise --data-dir /root/cli-data --json search terminate > "$results/cli-search.json" 2>&1 || true
if grep -q '"mode":"hybrid"' "$results/cli-search.json"; then
	log "ok: the installed CLI searched by meaning with the packaged embedding model"
else
	log "FAILED: the installed CLI did not use the embedding model (see cli-search.json)"; failures=$((failures + 1))
fi

check in_root getent passwd pactwise-sync > /dev/null
# Owner by number: the host's passwd does not know the chroot's users.
key_mode=$(stat -c '%a %u' "$root/etc/pactwise-sync/source.key" 2>/dev/null || echo missing)
if [ "$key_mode" = "600 $(in_root id -u pactwise-sync 2>/dev/null)" ]; then log "ok: the Source key was made at install (0600, pactwise-sync)"; else
	log "FAILED: the Source key is $key_mode (want 600 pactwise-sync)"; failures=$((failures + 1)); fi
grep -q '^PACTWISE_SYNC_LISTEN=127.0.0.1:' "$root/etc/pactwise-sync/pactwise-sync.env" &&
	log "ok: the service listens on loopback by default" || { log "FAILED: default listen address"; failures=$((failures + 1)); }
if in_root pactwise-sync-server --help > "$results/sync-server-help.txt" 2>&1; then log "ok: pactwise-sync-server --help"; else
	log "FAILED: pactwise-sync-server --help"; failures=$((failures + 1)); fi
unit=/lib/systemd/system/pactwise-sync-server.service
check test -f "$root$unit"
if command -v systemd-analyze >/dev/null; then
	# The minbase has no systemd, so the installed unit is verified by the host's (Debian 12's) systemd, with its
	# ExecStart pointed at the binary inside the chroot.
	mkdir -p "$results/unit"
	sed "s|^ExecStart=/usr/bin/|ExecStart=$root/usr/bin/|" "$root$unit" > "$results/unit/$(basename "$unit")"
	if systemd-analyze verify "$results/unit/$(basename "$unit")" > "$results/unit-verify.txt" 2>&1 &&
		! grep -q . "$results/unit-verify.txt"; then
		log "ok: systemd-analyze verify $unit"
	else
		log "FAILED: systemd-analyze verify $unit (see unit-verify.txt)"; failures=$((failures + 1))
	fi
fi

# 4. The app from the chroot under Xvfb (the host's server; its socket bound into the chroot), on a fresh data dir,
#    with a session bus for the keychain client. The first window is screenshotted once it is mapped and painted.
display=:$((90 + RANDOM % 9))
Xvfb "$display" -screen 0 1280x800x24 -nolisten tcp > "$results/xvfb.log" 2>&1 &
xvfb_pid=$!
for _ in $(seq 1 100); do DISPLAY=$display xdpyinfo > /dev/null 2>&1 && break; sleep 0.1; done
bind /tmp/.X11-unix /tmp/.X11-unix
app_started=$(date +%s%N)
# Its own process group (setsid), so the app and the WebKit processes it starts are stopped together by its id.
# HOME is fresh: the data dir is the default one under it, as for a person's first start.
setsid chroot "$root" /usr/bin/env -i PATH=/usr/bin:/bin HOME=/root LANG=C.UTF-8 DISPLAY="$display" \
	XDG_RUNTIME_DIR=/tmp PACTWISE_LOG=info OMP_THREAD_LIMIT=1 \
	/usr/bin/pactwise-desk > "$results/app.log" 2>&1 &
app_pid=$!
window=""
for _ in $(seq 1 300); do
	window=$(DISPLAY=$display xwininfo -root -tree 2>/dev/null | awk '/"Pactwise Desk"/ { print $1; exit }')
	[ -n "$window" ] && break
	kill -0 "$app_pid" 2>/dev/null || break
	sleep 0.1
done
if [ -z "$window" ]; then
	log "FAILED: the app's window never appeared (see app.log)"; failures=$((failures + 1))
else
	log "ok: the app's window is mapped ($(( ($(date +%s%N) - app_started) / 1000000 )) ms after start)"
	# The page renders after the window maps: wait until the screen is not one flat colour and then until two
	# screenshots in a row are the same (the first view has loaded), at most 20 s.
	previous=""
	for _ in $(seq 1 100); do
		DISPLAY=$display import -window root "$results/first-window.png" 2>/dev/null
		if [ "$(convert "$results/first-window.png" -format '%k' info: 2>/dev/null || echo 1)" -gt 8 ]; then
			current=$(identify -format '%#' "$results/first-window.png" 2>/dev/null || true)
			[ -n "$current" ] && [ "$current" = "$previous" ] && break
			previous=$current
		fi
		sleep 0.3
	done
	log "screenshot: $results/first-window.png ($(convert "$results/first-window.png" -format '%wx%h, %k colours' info:))"
fi
kill -- "-$app_pid" 2>/dev/null || true
wait "$app_pid" 2>/dev/null || true
for _ in $(seq 1 50); do kill -0 -- "-$app_pid" 2>/dev/null || break; sleep 0.1; done
kill -KILL -- "-$app_pid" 2>/dev/null || true
cp "$root/root/.local/share/pactwise/logs/pactwise-desk.log" "$results/pactwise-desk.log" 2>/dev/null || true
if grep -q "window ready" "$results/pactwise-desk.log" 2>/dev/null; then log "ok: the app logged 'window ready' on a fresh data dir"; else
	log "FAILED: no 'window ready' in the app's log"; failures=$((failures + 1)); fi

# 5. Signed updates against a feed on loopback, through the app's window.
source "$(dirname "$0")/test-update.sh"

log "done in $(($(date +%s) - started)) s with $failures failure(s)"
[ "$failures" -eq 0 ]
