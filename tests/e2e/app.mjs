// Helpers shared by the end-to-end tests: start the real app through tauri-driver, find things, take screenshots.
import { remote } from "webdriverio";
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import readline from "node:readline";

export const output = process.env.E2E_OUTPUT ?? path.resolve("output");

/** The CLI beside the app under test. */
export const cli = process.env.PACTWISE_CLI ?? path.join(path.dirname(process.env.PACTWISE_APP ?? ""), "pactwise");

/**
 * A fresh data directory for one test file; the app is started on it with --data-dir. It is set up as the welcome
 * screen would leave it ("My organization"), unless `setUp: false` (the welcome screen's own test, or a folder that is
 * not a data directory).
 */
export function freshDataDir(name, { setUp = true } = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `pactwise-e2e-${name}-`));
  if (setUp) execFileSync(cli, ["--data-dir", dir, "org", "setup", "--name", "My organization"], { encoding: "utf8" });
  return dir;
}

/**
 * Starts the app (a new process) on `dataDir` and returns the WebDriver session. `second: true` starts it through
 * the second driver run.sh starts, so a test can drive two desktops at once; `application` starts another program
 * that execs the app (a wrapper that changes its environment).
 */
export async function launch(dataDir, { second = false, ready = "nav[aria-label=Areas]", application = process.env.PACTWISE_APP } = {}) {
  const port = second ? process.env.TAURI_DRIVER_PORT_2 : process.env.TAURI_DRIVER_PORT;
  if (second && !port) throw new Error("TAURI_DRIVER_PORT_2 is not set: run the test through tests/e2e/run.sh");
  const browser = await remote({
    hostname: "127.0.0.1",
    port: Number(port ?? 4444),
    logLevel: "warn",
    connectionRetryCount: 2,
    capabilities: {
      "wdio:enforceWebDriverClassic": true,
      "tauri:options": { application, args: ["--data-dir", dataDir] },
    },
  });
  await browser.setTimeout({ implicit: 0 });
  await browser.$(ready).waitForExist({ timeout: 20000 });
  return browser;
}

export async function screenshot(browser, name) {
  fs.mkdirSync(output, { recursive: true });
  await browser.saveScreenshot(path.join(output, `${name}.png`));
}

export async function rows(browser) {
  return browser.$$("[data-testid=document-row]");
}

export async function rowNames(browser) {
  return browser.execute(() =>
    Array.from(document.querySelectorAll("[data-testid=document-row] td.name")).map((td) => td.textContent.trim()),
  );
}

/** Waits until the documents table shows exactly `names` (any order), or the empty state for []. */
export async function waitForRows(browser, names, timeout = 10000) {
  const want = [...names].sort().join("|");
  let seen = "";
  await browser.waitUntil(
    async () => {
      seen = (await rowNames(browser)).sort().join("|");
      return seen === want;
    },
    { timeout, timeoutMsg: `expected rows [${want}], saw [${seen}]` },
  );
}

/**
 * Starts the fake model server (`pactwise-fake-model`, beside the app) with `script` on the port of
 * PACTWISE_MODEL_ENDPOINT, which run.sh picks and the app is pointed at. An earlier test's server may still be
 * letting go of the port, so a start that fails is tried again (20 times at most). Returns the child process.
 */
export async function startFakeModel(script) {
  const endpoint = process.env.PACTWISE_MODEL_ENDPOINT;
  const bin = path.join(path.dirname(process.env.PACTWISE_APP), "pactwise-fake-model");
  const port = new URL(endpoint).port;
  for (let attempt = 0; attempt < 20; attempt++) {
    const child = spawn(bin, ["--script", script, "--port", port], { stdio: ["ignore", "pipe", "inherit"] });
    const first = await new Promise((resolve) => {
      readline.createInterface({ input: child.stdout }).once("line", resolve);
      child.once("exit", () => resolve(null));
    });
    if (first) {
      const listening = JSON.parse(first).endpoint;
      if (listening !== endpoint) {
        child.kill("SIGTERM");
        throw new Error(`the fake model server listens on ${listening}, not on ${endpoint}`);
      }
      return child;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`the fake model server could not listen on ${endpoint}`);
}

/**
 * Starts the test's notification daemon (`notification-daemon.py`) on the test run's session bus, where the app's
 * notifications go. Returns { notifications, waitFor(predicate, timeout), stop() }: `notifications` grows as the
 * app sends them.
 */
export async function startNotificationDaemon() {
  const script = path.join(path.dirname(new URL(import.meta.url).pathname), "notification-daemon.py");
  const child = spawn("/usr/bin/python3", [script], { stdio: ["ignore", "pipe", "inherit"] });
  const notifications = [];
  const waiters = new Set();
  const ready = new Promise((resolve, reject) => {
    child.once("exit", (code) => reject(new Error(`the notification daemon exited (${code}); is python3-dbus installed?`)));
    readline.createInterface({ input: child.stdout }).on("line", (line) => {
      const record = JSON.parse(line);
      if (record.ready) return resolve();
      notifications.push(record);
      for (const w of waiters) w();
    });
  });
  await ready;
  return {
    notifications,
    async waitFor(predicate, timeout = 20000) {
      const found = () => notifications.find(predicate);
      if (found()) return found();
      return new Promise((resolve, reject) => {
        const check = () => {
          const n = found();
          if (n) {
            waiters.delete(check);
            clearTimeout(timer);
            resolve(n);
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`no such notification within ${timeout} ms; received: ${JSON.stringify(notifications)}`));
        }, timeout);
        waiters.add(check);
      });
    },
    stop() {
      child.kill("SIGTERM");
    },
  };
}
