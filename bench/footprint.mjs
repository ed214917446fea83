// Driven by bench/footprint.sh: starts the release app RUNS times on BENCH_DATA_DIR (one imported 100-page contract)
// and reads when each start painted; then, in the last start, opens the queue and the contract's review, waits
// IDLE_SECONDS (and again until LONG_IDLE_SECONDS) and sums the memory (PSS) of the app and every process it started
// (WebKit's web and network processes). Prints JSON lines.
import fs from "node:fs";
import { launch } from "../tests/e2e/app.mjs";

const runs = Number(process.env.RUNS ?? 5);
const idleSeconds = Number(process.env.IDLE_SECONDS ?? 10);
const driverPid = Number(process.env.TAURI_DRIVER_PID);
const app = fs.realpathSync(process.env.PACTWISE_APP);
const logFile = `${process.env.BENCH_DATA_DIR}/logs/pactwise-desk.log`;

const ticks = 100; // USER_HZ on Linux
const bootSeconds = Number(/^btime (\d+)$/m.exec(fs.readFileSync("/proc/stat", "utf8"))[1]);

function processes() {
  const all = [];
  for (const pid of fs.readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
      const rest = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      let exe = "";
      try {
        exe = fs.readlinkSync(`/proc/${pid}/exe`);
      } catch {}
      all.push({ pid: Number(pid), ppid: Number(rest[1]), start: Number(rest[19]), exe, name: stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")")) });
    } catch {}
  }
  return all;
}

/** The app this driver started last (a descendant of tauri-driver running PACTWISE_APP) and every process under it. */
function appTree() {
  const all = processes();
  const under = (root) => {
    const out = [root];
    for (let i = 0; i < out.length; i++) out.push(...all.filter((p) => p.ppid === out[i].pid));
    return out;
  };
  const apps = under(all.find((p) => p.pid === driverPid)).filter((p) => p.exe === app);
  if (apps.length === 0) throw new Error("the app's process was not found under tauri-driver");
  const newest = apps.sort((a, b) => b.start - a.start)[0];
  return { app: newest, tree: under(newest) };
}

const pssKb = (pid) => Number(/^Pss:\s+(\d+) kB$/m.exec(fs.readFileSync(`/proc/${pid}/smaps_rollup`, "utf8"))[1]);
// Whether a process has Mesa's OpenGL loaded (its drivers and the LLVM they link): the window's process should not.
const loadsOpengl = (pid) => /\/dri\/|libLLVM/.test(fs.readFileSync(`/proc/${pid}/maps`, "utf8"));
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const toPaint = [];
const toWindowReady = [];
let last;
for (let i = 0; i < runs; i++) {
  const browser = await launch(process.env.BENCH_DATA_DIR);
  await browser.$("[data-testid=queue-row]").waitForDisplayed({ timeout: 20000 });
  const { app: proc } = appTree();
  const startedMs = (bootSeconds + proc.start / ticks) * 1000;
  // The page's first contentful paint (Paint Timing, set by WebKit), on the wall clock through timeOrigin.
  const paint = await browser.execute(() => {
    const fcp = performance.getEntriesByType("paint").find((e) => e.name === "first-contentful-paint")
      ?? performance.getEntriesByType("paint")[0];
    return fcp ? performance.timeOrigin + fcp.startTime : null;
  });
  if (paint === null) throw new Error("WebKit reported no paint entry");
  toPaint.push(paint - startedMs);
  // The backend's "window ready" line (Tauri's setup done), the last one in the log.
  const ready = fs.readFileSync(logFile, "utf8").split("\n").filter((l) => l.includes("window ready")).at(-1);
  toWindowReady.push(Date.parse(ready.split(/\s+/)[0]) - startedMs);
  if (i < runs - 1) await browser.deleteSession().catch(() => {});
  else last = browser;
}
const stat = (xs) => ({ median_ms: Math.round(median(xs)), min_ms: Math.round(Math.min(...xs)), max_ms: Math.round(Math.max(...xs)) });
console.log(JSON.stringify({ figure: "cold_start_to_first_paint_ms", runs, ...stat(toPaint), goal_ms: 1500, mark: "WebKit first-contentful-paint since the process started" }));
console.log(JSON.stringify({ figure: "start_to_window_ready_log_ms", runs, ...stat(toWindowReady), mark: "the backend's 'window ready' log line since the process started" }));

const idleAtQueue = appTree().tree.reduce((sum, p) => sum + pssKb(p.pid), 0);
await last.keys("Enter");
await last.waitUntil(
  () => last.execute(() => performance.getEntriesByName("review:open-to-first-page-and-checklist", "measure").length > 0),
  { timeout: 60000, timeoutMsg: "the contract's review did not open" },
);
await new Promise((r) => setTimeout(r, idleSeconds * 1000));
const { tree } = appTree();
const per = tree.map((p) => ({ name: p.name, pss_mb: Math.round(pssKb(p.pid) / 1024), opengl: loadsOpengl(p.pid) }));
const total = tree.reduce((sum, p) => sum + pssKb(p.pid), 0);
console.log(JSON.stringify({ figure: "idle_memory_pss_mb", after: "queue opened", total_mb: Math.round(idleAtQueue / 1024), goal_mb: 300 }));
console.log(JSON.stringify({ figure: "idle_memory_pss_mb", after: `queue and a ${process.env.PAGES}-page contract's review opened, then ${idleSeconds} s idle`, total_mb: Math.round(total / 1024), goal_mb: 300, processes: per }));
// Longer idle (LONG_IDLE_SECONDS, default 180): past the time after which the desktop releases the unused embedding
// model (pactwise_api::MODEL_IDLE, 2 min, looked at every 30 s).
const longIdleSeconds = Number(process.env.LONG_IDLE_SECONDS ?? 180);
if (longIdleSeconds > idleSeconds) {
  await new Promise((r) => setTimeout(r, (longIdleSeconds - idleSeconds) * 1000));
  const later = appTree().tree;
  console.log(JSON.stringify({
    figure: "idle_memory_pss_mb",
    after: `queue and a ${process.env.PAGES}-page contract's review opened, then ${longIdleSeconds} s idle`,
    total_mb: Math.round(later.reduce((sum, p) => sum + pssKb(p.pid), 0) / 1024),
    goal_mb: 300,
    processes: later.map((p) => ({ name: p.name, pss_mb: Math.round(pssKb(p.pid) / 1024), opengl: loadsOpengl(p.pid) })),
  }));
  // SMAPS_DIR: each process's /proc/PID/smaps at that moment, to see where its memory is (a diagnosis, not a figure).
  if (process.env.SMAPS_DIR) {
    fs.mkdirSync(process.env.SMAPS_DIR, { recursive: true });
    for (const p of later) fs.writeFileSync(`${process.env.SMAPS_DIR}/${p.name}-${p.pid}.smaps`, fs.readFileSync(`/proc/${p.pid}/smaps`));
  }
}
await last.deleteSession().catch(() => {});
