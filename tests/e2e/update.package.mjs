// The signed-update test of the installed package (packaging/test-update.sh runs it on the host, as root): drives the
// app installed in the Debian chroot through tauri-driver there, swaps the feed served on loopback between checks,
// and asks dpkg in the chroot what is installed. Prints one "ok: …" or "FAILED: …" line per check on stdout.
//
// Env: DRIVER_PORT, CHROOT, FEEDS (the prepared feeds), SERVE (the served folder; latest.json is the feed),
// OUT (screenshots), OLD_VERSION, NEW_VERSION, DISPLAY (the Xvfb the app shows on).
import { remote } from "webdriverio";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";

const env = (name) => process.env[name] ?? (() => { throw new Error(`${name} is not set`); })();
const [port, root, feeds, serve, out] = ["DRIVER_PORT", "CHROOT", "FEEDS", "SERVE", "OUT"].map(env);
const [oldVersion, newVersion] = [env("OLD_VERSION"), env("NEW_VERSION")];
const REFUSED = "This update was not signed by Pactwise, so it was not installed. Nothing changed.";

let failed = 0;
const ok = (what) => console.log(`ok: ${what}`);
const fail = (what) => {
  failed += 1;
  console.log(`FAILED: ${what}`);
};
const expect = (condition, what, seen) => (condition ? ok(what) : fail(`${what} (saw: ${seen})`));

const installed = () =>
  execFileSync("chroot", [root, "dpkg-query", "-W", "-f=${Version}", "pactwise-desk"], { encoding: "utf8" }).trim();
const appPids = () =>
  execFileSync("ps", ["-eo", "pid=,args="], { encoding: "utf8" })
    .split("\n")
    .filter((l) => /\s\/usr\/bin\/pactwise-desk(\s|$)/.test(l))
    .map((l) => l.trim().split(/\s+/)[0]);
const useFeed = (name) => fs.copyFileSync(path.join(feeds, `${name}.json`), path.join(serve, "latest.json"));

const browser = await remote({
  hostname: "127.0.0.1",
  port: Number(port),
  logLevel: "warn",
  connectionRetryCount: 2,
  capabilities: {
    "wdio:enforceWebDriverClassic": true,
    "tauri:options": { application: "/usr/bin/pactwise-desk", args: ["--data-dir", "/root/update-test-data"] },
  },
});
/** A screenshot with `testid` (what the step is about) scrolled into view. */
const shot = async (name, testid) => {
  if (testid) await browser.$(`[data-testid=${testid}]`).scrollIntoView({ block: "center" }).catch(() => {});
  // scrollIntoView also scrolls the document itself, which moves the whole frame up: put it back.
  await browser.execute(() => window.scrollTo(0, 0));
  await browser.saveScreenshot(path.join(out, `update-${name}.png`));
};
const text = async (testid) => {
  const el = await browser.$(`[data-testid=${testid}]`);
  return (await el.isExisting()) ? (await el.getText()).trim() : null;
};

/** Checks the feed now offered; resolves with what the section shows. */
async function check(feed) {
  useFeed(feed);
  await browser.$("[data-testid=update-check]").click();
  // The button is disabled while checking: wait for the answer (status, offer or error).
  await browser.waitUntil(
    async () => (await browser.$("[data-testid=update-check]").isEnabled()) && !(await browser.$("p*=Checking for updates").isExisting()),
    { timeout: 30000, timeoutMsg: `the check of the ${feed} feed did not finish` },
  );
  return { status: await text("update-status"), offer: await text("update-offer"), error: await text("update-error") };
}

/** Installs the offered version; resolves with the refusal or the installed message. */
async function install() {
  await browser.$("[data-testid=update-install]").click();
  await browser.waitUntil(
    async () => (await text("update-error")) !== null || (await text("update-installed")) !== null,
    { timeout: 180000, timeoutMsg: "the install neither finished nor was refused" },
  );
  return { error: await text("update-error"), installed: await text("update-installed") };
}

try {
  await browser.setWindowSize(1280, 800).catch(() => {});
  await browser.$("nav[aria-label=Areas]").waitForExist({ timeout: 60000 });
  await browser.keys(["Alt", "7"]); // Settings
  const section = await browser.$("[data-testid=update-settings]");
  await section.waitForExist({ timeout: 10000 });
  await section.scrollIntoView();
  // Opening Settings checks once by itself (the installed version was offered: up to date).
  await browser.waitUntil(async () => (await text("update-current")) === oldVersion, { timeout: 30000 });
  ok(`Settings → Updates shows the installed version ${oldVersion}`);

  // (b) The installed version, then an older one: up to date, nothing installed.
  for (const feed of ["equal", "older"]) {
    const seen = await check(feed);
    expect(seen.status?.includes("is up to date") && !seen.offer && !seen.error, `a feed offering the ${feed} version answers "up to date"`, JSON.stringify(seen));
    expect(installed() === oldVersion, `after the ${feed} feed, ${oldVersion} is still installed`, installed());
  }
  await shot("up-to-date", "update-status");

  // (a) Refusals: the offer is shown, the install refused in words, the installed version unchanged.
  for (const [feed, what] of [
    ["tampered", "a package changed after signing"],
    ["other-key", "a package signed by another key"],
    ["wrong-version", "a feed announcing a version its signature does not name"],
  ]) {
    const seen = await check(feed);
    if (!seen.offer) {
      fail(`the ${feed} feed's newer version is offered (saw: ${JSON.stringify(seen)})`);
      continue;
    }
    if (feed === "tampered") await shot("offered", "update-offer");
    const result = await install();
    expect(result.error === REFUSED && !result.installed, `${what} is refused with "${REFUSED}"`, JSON.stringify(result));
    expect(installed() === oldVersion, `after ${what}, ${oldVersion} is still installed`, installed());
    if (feed === "tampered") await shot("refused", "update-error");
  }
  // No signature at all: refused as soon as the feed is read.
  const unsigned = await check("unsigned");
  expect(unsigned.error === REFUSED && !unsigned.offer, "a feed whose update has no signature is refused", JSON.stringify(unsigned));
  expect(installed() === oldVersion, `after the unsigned feed, ${oldVersion} is still installed`, installed());

  // (c) The signed newer version: offered with its notes, downloaded, verified and installed.
  const signed = await check("signed");
  expect(signed.offer?.includes(`Pactwise Desk ${newVersion}`) && signed.offer?.includes("Signed by the Pactwise update key"),
    `the signed ${newVersion} is offered with its notes`, JSON.stringify(signed));
  await shot("signed-offered", "update-offer");
  const result = await install();
  expect(result.installed?.includes(`${newVersion} is installed`) && !result.error, `the signed ${newVersion} is installed`, JSON.stringify(result));
  expect(installed() === newVersion, `dpkg-query shows pactwise-desk ${newVersion}`, installed());
  await shot("installed", "update-installed");

  // Restart now: the app starts again from the updated package.
  const before = appPids();
  // The app exits while the click is answered, which ends the WebDriver session: that is the restart, not a failure.
  await browser.$("[data-testid=update-restart]").click().catch((e) => {
    if (!/session|crash/i.test(e.message)) throw e;
  });
  let after = [];
  for (let i = 0; i < 100; i++) {
    await new Promise((r) => setTimeout(r, 200));
    after = appPids().filter((p) => !before.includes(p));
    if (after.length > 0) break;
  }
  expect(after.length > 0, "Restart now starts the app again from the updated package", `processes before ${before}, after ${appPids()}`);
  // Its window maps again (the new process, not under WebDriver).
  const mapped = () =>
    execFileSync("xwininfo", ["-root", "-tree"], { encoding: "utf8", env: { ...process.env, DISPLAY: env("DISPLAY") } })
      .includes('"Pactwise Desk"');
  let shown = false;
  for (let i = 0; i < 100 && !shown; i++) {
    await new Promise((r) => setTimeout(r, 200));
    const old = appPids().filter((p) => before.includes(p));
    shown = after.length > 0 && old.length === 0 && mapped();
  }
  expect(shown, "the restarted app's window is shown (the old process has exited)", "no window named Pactwise Desk");
} catch (e) {
  fail(`the update test stopped: ${e.message.split("\n")[0]}`);
  await shot("stopped").catch(() => {});
} finally {
  await browser.deleteSession().catch(() => {});
}
process.exit(failed === 0 ? 0 : 1);
