# Shared by the packaging scripts (sourced, not run). Bash.

# Where packages, staging trees and the install test's chroot live: outside the clone.
PACKAGE_CACHE="${PACKAGE_CACHE:-/var/cache/pactwise/package}"
CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-/var/cache/pactwise/target}"
REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

die() { echo "packaging: $*" >&2; exit 1; }

# The workspace's version (Cargo.toml's [workspace.package]), the version of every package built here.
workspace_version() {
	sed -n '/^\[workspace.package\]/,/^\[/s/^version *= *"\([^"]*\)".*/\1/p' "$REPO_ROOT/Cargo.toml" | head -n1
}

# The model package's version: the model's own, not the app's (the checksum of its files and runtime, crates/embed's
# MODEL_FILES), so an app that keeps its model, and the app's in-app update, need no new model package.
model_package_version() {
	local sums
	sums=$(sed -n '/^pub const MODEL_FILES/,/^\];/s/^ *([^,]*, "\([0-9a-f]\{64\}\)"),$/\1/p' \
		"$REPO_ROOT/crates/embed/src/lib.rs")
	[ -n "$sums" ] || die "could not read the model's checksums from crates/embed/src/lib.rs"
	echo "2.0+$(echo "$sums" | sha256sum | cut -c1-12)"
}

# The Debian packages that hold the shared libraries BINARY... link against directly (their ELF NEEDED entries, found
# where ldd resolves them), comma-separated, sorted, without duplicates. Libraries loaded at run time (libpdfium) are
# not among them; they are shipped.
runtime_depends() {
	local binary lib path packages=()
	for binary in "$@"; do
		[ -x "$binary" ] || die "$binary is missing: build it first"
		while read -r lib; do
			path=$(ldd "$binary" | awk -v l="$lib" '
				$1 == l && $3 ~ /^\// { print $3; exit }
				$1 ~ /^\// && $1 ~ ("/" l "$") { print $1; exit }')
			[ -n "$path" ] || die "$binary needs $lib, which ldd does not find on this machine"
			packages+=("$(package_of "$path")") || exit 1
		done < <(objdump -p "$binary" | awk '$1 == "NEEDED" { print $2 }')
	done
	printf '%s\n' "${packages[@]}" | sort -u | paste -sd, | sed 's/,/, /g'
}

# The Debian package that installed FILE (merged /usr: the path as given, resolved, or without its /usr).
package_of() {
	local candidate owner
	for candidate in "$1" "$(readlink -f "$1")" "${1#/usr}" "$(readlink -f "$1" | sed 's,^/usr,,')"; do
		owner=$(dpkg -S "$candidate" 2>/dev/null | head -n1 | cut -d: -f1)
		[ -n "$owner" ] && { echo "$owner"; return 0; }
	done
	die "no Debian package holds $1"
}

# The Debian mirror and suite this machine installs from, read from its apt sources (deb822 files first, then
# sources.list): prints "URI SUITE" of the first main archive entry (not the security archive).
debian_mirror() {
	local file
	for file in /etc/apt/sources.list.d/*.sources; do
		[ -f "$file" ] || continue
		awk '
			/^[[:space:]]*$/ { if (uri != "" && suite != "" && uri !~ /security/) { print uri, suite; found = 1; exit } uri = ""; suite = ""; next }
			/^URIs:/ { uri = $2 } /^Suites:/ { suite = $2 }
			END { if (!found && uri != "" && suite != "" && uri !~ /security/) print uri, suite }' "$file" | head -n1 | grep . && return 0
	done
	if [ -f /etc/apt/sources.list ]; then
		awk '$1 == "deb" && $2 !~ /security/ { i = 2; if ($2 ~ /^\[/) { while ($i !~ /\]$/) i++; i++ } print $i, $(i + 1); exit }' \
			/etc/apt/sources.list | grep . && return 0
	fi
	die "no Debian mirror found in /etc/apt/sources.list.d/*.sources or /etc/apt/sources.list"
}
