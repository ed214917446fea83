// A real browser for the pages the service serves to vendors: Debian's Chromium driven through its chromedriver
// (both from `make setup`; nothing is downloaded at run time). `openBrowser(name)` starts chromedriver on a free
// loopback port and opens a WebdriverIO session with headless Chromium on a fresh profile under the test output;
// `close()` ends both. Without Chromium the test fails with the reason under CI=true and is skipped elsewhere.
import { remote } from "webdriverio";
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { freshDataDir, output } from "./app.mjs";

const CHROMIUM = process.env.PACTWISE_CHROMIUM ?? "/usr/bin/chromium";
const CHROMEDRIVER = process.env.PACTWISE_CHROMEDRIVER ?? "/usr/bin/chromedriver";

/** Why the browser cannot run here, or null when it can. */
export function browserMissing() {
  for (const [what, file] of [["Chromium", CHROMIUM], ["chromedriver", CHROMEDRIVER]]) {
    if (!fs.existsSync(file)) return `${what} is not installed at ${file}: run make setup (Debian's chromium and chromium-driver)`;
  }
  return null;
}

/** Fails under CI (a missing prerequisite is a failure there), else skips the test `t` with the reason. */
export function requireBrowser(t) {
  const missing = browserMissing();
  if (!missing) return true;
  if (process.env.CI === "true") throw new Error(missing);
  t.skip(missing);
  return false;
}

async function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

async function listening(port, timeoutMs) {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    const up = await new Promise((resolve) => {
      const socket = net.connect(port, "127.0.0.1", () => { socket.end(); resolve(true); });
      socket.once("error", () => resolve(false));
    });
    if (up) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`chromedriver did not listen on port ${port} within ${timeoutMs / 1000} s`);
}

/**
 * Starts chromedriver and a headless Chromium session; resolves to `{ browser, close, shot }`. With `bidi: true` the
 * session speaks WebDriver BiDi too, so a test can intercept the page's requests (`browser.mock`).
 */
export async function openBrowser(name, { bidi = false } = {}) {
  const missing = browserMissing();
  if (missing) throw new Error(missing);
  fs.mkdirSync(output, { recursive: true });
  const port = await freePort();
  const log = path.join(output, `${name}-chromedriver.log`);
  const driver = spawn(CHROMEDRIVER, [`--port=${port}`, "--allowed-ips=127.0.0.1", `--log-path=${log}`], { stdio: "ignore" });
  const exited = new Promise((_, reject) => driver.once("exit", (code) => reject(new Error(`chromedriver exited (${code}); see ${log}`))));
  exited.catch(() => {});
  await Promise.race([listening(port, 15000), exited]);
  const profile = path.join(output, `${name}-profile`);
  fs.rmSync(profile, { recursive: true, force: true });
  const args = ["--headless=new", `--user-data-dir=${profile}`, "--window-size=1280,1000", "--no-first-run",
    "--no-default-browser-check", "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-dev-shm-usage"];
  if (process.getuid?.() === 0) args.push("--no-sandbox");
  let browser;
  try {
    browser = await remote({
      hostname: "127.0.0.1",
      port,
      logLevel: "warn",
      connectionRetryCount: 1,
      capabilities: {
        browserName: "chrome",
        ...(bidi ? { webSocketUrl: true } : { "wdio:enforceWebDriverClassic": true }),
        "goog:chromeOptions": { binary: CHROMIUM, args },
      },
    });
  } catch (e) {
    driver.kill("SIGTERM");
    throw e;
  }
  await browser.setTimeout({ implicit: 0 });
  return {
    browser,
    /** A screenshot into E2E_OUTPUT once the page has painted what the DOM holds. */
    async shot(step) {
      await browser.execute(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
      await browser.saveScreenshot(path.join(output, `${name}-${step}.png`));
    },
    async close() {
      await browser.deleteSession().catch(() => {});
      driver.kill("SIGTERM");
    },
  };
}

// What the vendor page's tests share: the fixture files and the page's own steps.

/** The files and the package the test needs, from the example beside the service's binary. */
export function fixtures() {
  const example = path.join(path.dirname(process.env.PACTWISE_APP ?? ""), "examples", "source_e2e_fixture");
  assert.ok(
    fs.existsSync(example),
    `${example} is missing: run make build (it builds cargo build -p pactwise-sync-server --example source_e2e_fixture)`,
  );
  const dir = freshDataDir("vendor-files", { setUp: false });
  const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
  execFileSync(example, [dir, tomorrow]);
  const read = (name) => JSON.parse(fs.readFileSync(path.join(dir, name), "utf8"));
  return { dir, artifacts: read("artifacts.json"), opening: read("opening.json"), file: (name) => path.join(dir, name) };
}

export async function text(browser, selector) {
  return (await browser.$(selector)).getText();
}

/** Waits until the live region says something matching `pattern` and returns what it said. */
export async function waitForStatus(browser, pattern, timeout = 30000) {
  let seen = "";
  await browser.waitUntil(
    async () => {
      seen = await text(browser, "#status");
      return pattern.test(seen);
    },
    { timeout, timeoutMsg: `the status line never matched ${pattern}; it said: ${seen}` },
  );
  return seen;
}

export async function openTheTender(browser, title) {
  const link = await browser.$(`a=${title}`);
  await link.waitForClickable({ timeout: 10000 });
  await link.click();
  await (await browser.$("h2=Your submission")).waitForExist({ timeout: 10000 });
}

/** Fills the field whose label starts with `labelStart`. The page may re-render the form (new field ids) after a
 * submission, so the label is looked up again until its field exists. */
export async function fillByLabel(browser, labelStart, value) {
  let element = null;
  await browser.waitUntil(
    async () => {
      const input = await browser.execute((start) => {
        const label = Array.from(document.querySelectorAll("label")).find((l) => l.textContent.startsWith(start));
        return label ? label.htmlFor : null;
      }, labelStart);
      if (!input) return false;
      const found = await browser.$(`#${input}`);
      if (!(await found.isExisting())) return false;
      element = found;
      return true;
    },
    { timeout: 10000, timeoutMsg: `no field labelled "${labelStart}…"` },
  );
  try {
    await element.setValue(value);
  } catch {
    // Re-rendered between the look-up and the typing: look it up once more.
    const input = await browser.execute((start) => {
      const label = Array.from(document.querySelectorAll("label")).find((l) => l.textContent.startsWith(start));
      return label ? label.htmlFor : null;
    }, labelStart);
    assert.ok(input, `no field labelled "${labelStart}…"`);
    await (await browser.$(`#${input}`)).setValue(value);
  }
}

export async function chooseFiles(browser, files) {
  const input = await browser.$("input[type=file]");
  // Sending paths adds to a multiple input's selection: start from none, as a person choosing again does.
  await browser.execute((element) => { element.value = ""; }, input);
  await input.addValue(files.join("\n"));
  await browser.waitUntil(async () => (await browser.$$("li.file")).length === files.length, { timeout: 5000 });
}

export async function fileRow(browser, name) {
  return browser.execute((wanted) => {
    const row = Array.from(document.querySelectorAll("li.file")).find((li) => li.dataset.file === wanted);
    if (!row) return null;
    return {
      state: row.querySelector(".file-state").textContent,
      problem: row.querySelector(".problem").textContent,
      refused: row.classList.contains("refused"),
      progress: Number(row.querySelector("progress").value),
      max: Number(row.querySelector("progress").max),
    };
  }, name);
}
