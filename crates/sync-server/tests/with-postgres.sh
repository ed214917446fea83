#!/usr/bin/env bash
# Run a command with a throwaway PostgreSQL cluster on loopback (Debian's postgresql package), exporting
# PACTWISE_TEST_PG_URL (a superuser URL without a database name) and PACTWISE_BENCH_PG_URL (an empty database).
# The cluster lives in a temp dir and is stopped and removed when the command ends.
#   crates/sync-server/tests/with-postgres.sh cargo test -p pactwise-sync-server
set -euo pipefail
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
if [ -z "$bin" ] || [ ! -x "$bin/initdb" ]; then
    echo "PostgreSQL is not installed: run 'make setup' (or apt-get install -y postgresql)" >&2
    exit 1
fi
dir=$(mktemp -d /tmp/pactwise-pg-XXXXXX)
as_pg=()
if [ "$(id -u)" -eq 0 ]; then
    chown postgres:postgres "$dir"
    as_pg=(runuser -u postgres --)
fi
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"${as_pg[@]}" "$bin/initdb" -D "$dir/data" -U postgres --auth=trust --no-sync >/dev/null
"${as_pg[@]}" "$bin/pg_ctl" -D "$dir/data" -l "$dir/log" -w -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c max_connections=300" start >/dev/null
cleanup() {
    "${as_pg[@]}" "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
    rm -rf "$dir"
}
trap cleanup EXIT
"$bin/createdb" -h 127.0.0.1 -p "$port" -U postgres bench
export PACTWISE_TEST_PG_URL="postgres://postgres@127.0.0.1:$port"
export PACTWISE_BENCH_PG_URL="postgres://postgres@127.0.0.1:$port/bench"
"$@"
