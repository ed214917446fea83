#!/usr/bin/env bash
# The workflow engine beside its peer, in one go: the same procurement graph (research -> analysis -> a person's
# approval -> legal -> end), no model calls, the approval given programmatically, a file database in WAL mode with
# synchronous=FULL (every commit synced) on the same filesystem for both.
#   ours  `pactwise bench engine --runs N --concurrency C --json` (C = 1 and 50): runs_per_s, commits per run
#   peer  ../shared/bench/peers/langgraph_procurement.py with SqliteSaver (library default durability and
#         --durability sync); Python's sqlite3 keeps synchronous=FULL
# Each figure is repeated REPEAT times; one JSON line per figure with the median and the spread, then the ratios.
# The cost of one sync on the benchmark's filesystem is measured before and after: the goals (3x at concurrency 1,
# 30x at 50) assume it is ~3.7 ms; when the virtual disk makes syncs nearly free, LangGraph becomes CPU-bound and the
# concurrency-50 ratio becomes a ratio of CPU per run.
# Both engines run with bench/sync-shim (LD_PRELOAD), which counts their fsync/fdatasync calls (fsyncs_per_run, an
# independent check of commits per run; it includes each process's set-up and warm-up run). With SYNC_MIN_MS=3.7 it
# also makes every sync take at least that long, for both alike: the disk the goals were set on, when the one under
# the benchmark is faster. The figures say which disk they were taken on ("sync_min_ms").
# The peer's Python packages go into a venv under /var/cache/pactwise if they are not installed (pip uses the
# index configured on this machine).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PEERS=${PACTWISE_PEERS:-$ROOT/../shared/bench/peers}
RUNS=${RUNS:-200}
REPEAT=${REPEAT:-3}
VENV=${PACTWISE_PEER_VENV:-/var/cache/pactwise/peer-venv}
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
if [ ! -f "$PEERS/langgraph_procurement.py" ]; then
  echo "bench/engine.sh: $PEERS/langgraph_procurement.py is absent; set PACTWISE_PEERS" >&2
  exit 2
fi
if ! "$VENV/bin/python" -c "import langgraph.checkpoint.sqlite" 2>/dev/null; then
  echo "installing the peer's packages into $VENV" >&2
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet -r "$PEERS/requirements.txt"
fi
# PACTWISE_BENCH_BIN: an already built binary to measure instead (e.g. an earlier commit's, for a before/after).
if [ -n "${PACTWISE_BENCH_BIN:-}" ]; then
  BIN=$PACTWISE_BENCH_BIN
else
  cargo build --quiet --release -p pactwise-cli
  BIN=$TARGET/release/pactwise
fi
# Both databases live on the same (disk-backed) filesystem, never on a tmpfs where a sync costs nothing.
WORK=$(mktemp -d "${PACTWISE_BENCH_DIR:-/var/cache/pactwise}/engine-bench.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
cc -O2 -shared -fPIC -o "$WORK/sync_shim.so" "$ROOT/bench/sync-shim/sync_shim.c" -ldl
export SYNC_SHIM=$WORK/sync_shim.so

python3 - "$BIN" "$VENV/bin/python" "$PEERS/langgraph_procurement.py" "$WORK" "$RUNS" "$REPEAT" <<'PY'
import json, os, statistics, subprocess, sys, time
bin_, py, peer, work, runs, repeat = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]), int(sys.argv[6])

SYNC_MIN_MS = os.environ.get("SYNC_MIN_MS")
PROBE = """
import os, statistics, sys, time
path = sys.argv[1]
fd = os.open(path, os.O_CREAT | os.O_RDWR, 0o600)
try:
    os.write(fd, bytes(65536))
    os.fdatasync(fd)
    times = []
    for i in range(100):
        os.pwrite(fd, os.urandom(4096), (i % 16) * 4096)
        t = time.perf_counter()
        os.fdatasync(fd)
        times.append((time.perf_counter() - t) * 1000)
finally:
    os.close(fd)
    os.unlink(path)
print(round(statistics.median(times), 3))
"""

def shim_env(count_file):
    env = dict(os.environ, LD_PRELOAD=os.environ["SYNC_SHIM"], SYNC_COUNT_FILE=count_file)
    if not SYNC_MIN_MS:
        env.pop("SYNC_MIN_MS", None)
    return env

def counted(count_file):
    try:
        with open(count_file) as f:
            return sum(int(line) for line in f if line.strip())
    finally:
        if os.path.exists(count_file):
            os.unlink(count_file)

def sync_ms():
    # What one sync costs on the benchmark's filesystem right now (with the shim, as the engines see it): 100 times a
    # 4 KiB write in place + fdatasync (what both SQLites do at a WAL commit). On a shared virtual disk it swings;
    # every ratio below depends on it.
    out = subprocess.run([sys.executable, "-c", PROBE, os.path.join(work, "sync-probe")], check=True,
                         capture_output=True, text=True, env=shim_env(os.path.join(work, "probe-count")))
    counted(os.path.join(work, "probe-count"))
    return float(out.stdout.strip())

print(json.dumps({"figure": "machine", "cores": os.cpu_count(), "load_average_1m": round(os.getloadavg()[0], 2),
                  "runs": runs, "repeat": repeat, "filesystem_dir": work,
                  "sync_min_ms": float(SYNC_MIN_MS) if SYNC_MIN_MS else None, "fdatasync_ms_median": sync_ms()}))

def ours(concurrency):
    count_file = os.path.join(work, "ours-count")
    out = subprocess.run([bin_, "bench", "engine", "--runs", str(runs), "--concurrency", str(concurrency),
                          "--dir", os.path.join(work, "ours"), "--json"], check=True, capture_output=True, text=True,
                         env=shim_env(count_file))
    report = json.loads(out.stdout)
    report["fsyncs_per_run"] = round(counted(count_file) / runs, 3)
    return report

def langgraph(*extra):
    count_file = os.path.join(work, "peer-count")
    env = dict(shim_env(count_file), PEER_OUT=os.path.join(work, "peer"))
    out = subprocess.run([py, peer, str(runs), *extra], check=True, capture_output=True, text=True, env=env)
    report = json.loads(out.stdout.strip().splitlines()[-1])
    report["fsyncs_per_run"] = round(counted(count_file) / runs, 3)
    return report

def figure(name, fn):
    samples = [fn() for _ in range(repeat)]
    rates = [s["runs_per_s"] for s in samples]
    last = samples[-1]
    line = {"figure": name, "runs_per_s_median": round(statistics.median(rates), 2),
            "runs_per_s_min": min(rates), "runs_per_s_max": max(rates)}
    for key in ("commits_per_run", "fsyncs_per_run", "checkpoints_per_run", "sqlite_synchronous", "journal_mode", "durability",
                "all_agreements_drafted", "version"):
        if key in last:
            line[key] = last[key]
    if "checkpoints_written" in last and "checkpoints_per_run" not in last:
        line["checkpoints_per_run"] = round(last["checkpoints_written"] / runs, 2)
    print(json.dumps(line), flush=True)
    return line["runs_per_s_median"]

ours_1 = figure("pactwise_concurrency_1", lambda: ours(1))
ours_50 = figure("pactwise_concurrency_50", lambda: ours(50))
peer_default = figure("langgraph_sqlitesaver_default", lambda: langgraph())
peer_sync = figure("langgraph_sqlitesaver_sync", lambda: langgraph("--durability", "sync"))
best_peer = max(peer_default, peer_sync)
print(json.dumps({"figure": "machine_after", "load_average_1m": round(os.getloadavg()[0], 2),
                  "fdatasync_ms_median": sync_ms()}))
print(json.dumps({"figure": "ratio", "vs": "the faster LangGraph figure", "langgraph_runs_per_s": best_peer,
                  "sync_min_ms": float(SYNC_MIN_MS) if SYNC_MIN_MS else None,
                  "concurrency_1": round(ours_1 / best_peer, 2), "goal_concurrency_1": 3,
                  "concurrency_50": round(ours_50 / best_peer, 2), "goal_concurrency_50": 30}))
PY
