// Two desktop data directories syncing through a sync service started by the test: pactwise-sync-server on
// loopback with a temporary SQLite database and an organization made with its admin command. Desktop A is the
// command line (sign in, import, correct, sync now); desktop B is the real app, which signs in through Settings,
// shows "synced" in its status line, and opens the document with A's correction in force.
import { test, after, afterEach } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import readline from "node:readline";
import { fileURLToPath } from "node:url";
import { freshDataDir, launch, screenshot, waitForRows } from "./app.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const bin = path.dirname(process.env.PACTWISE_APP ?? "");
const cli = process.env.PACTWISE_CLI ?? path.join(bin, "pactwise");
const serverBin = path.join(bin, "pactwise-sync-server");
const fixture = path.resolve(here, "../../fixtures/demo/mutual-nda-northwind-contoso.txt");
const serverDir = freshDataDir("sync-server");
const dirA = freshDataDir("sync-a");
const dirB = freshDataDir("sync-b");
const database = `sqlite:${path.join(serverDir, "sync.sqlite3")}`;
const PASSWORD = "a-long-password-for-the-e2e-test";
let server;
let browser;
let signedInA = false;

/** The sync server's admin command; the password goes in on stdin. */
function admin(args, input = "") {
  return JSON.parse(execFileSync(serverBin, ["admin", "--database", database, ...args], { encoding: "utf8", input }));
}

/** The `pactwise` command on data directory A, as JSON. */
function desktopA(args, env = {}) {
  const out = execFileSync(cli, ["--data-dir", dirA, ...args, "--json"], {
    encoding: "utf8",
    env: { ...process.env, ...env },
  });
  return JSON.parse(out);
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

/** Starts the server and waits until its log says it listens. */
async function startServer() {
  const listen = `127.0.0.1:${await freePort()}`;
  server = spawn(serverBin, ["serve", "--listen", listen, "--database", database], {
    stdio: ["ignore", "ignore", "pipe"],
    env: { ...process.env, PACTWISE_LOG: "info" },
  });
  const log = fs.createWriteStream(path.join(process.env.E2E_OUTPUT ?? serverDir, "sync-server.log"));
  await new Promise((resolve, reject) => {
    const lines = readline.createInterface({ input: server.stderr });
    lines.on("line", (line) => {
      log.write(`${line}\n`);
      if (/listening/.test(line)) resolve();
    });
    server.once("exit", (code) => reject(new Error(`the sync server exited (${code})`)));
    setTimeout(() => reject(new Error("the sync server did not start within 30 s")), 30000).unref();
  });
  return `http://${listen}`;
}

/** A screenshot once the page has painted what the DOM holds (a capture right after a change can lag a frame). */
async function shot(name) {
  await browser.execute(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
  await screenshot(browser, name);
}

after(async () => {
  await browser?.deleteSession().catch(() => {});
  // The keychain is shared by every data directory of this test run: leave A's entry as it was.
  if (signedInA) {
    try {
      desktopA(["sync", "sign-out"]);
    } catch {
      // The server may be gone already; the token is removed from the keychain either way.
    }
  }
  server?.kill("SIGTERM");
});

afterEach(async (t) => {
  if (browser && t.passed === false) await screenshot(browser, "failure-sync").catch(() => {});
});

test("a document and its correction made on one desktop reach the other through the sync service", async () => {
  assert.ok(fs.existsSync(serverBin), `${serverBin} is missing: run make build`);
  admin(["create-org", "--slug", "alpha", "--name", "Alpha LLP"]);
  admin(["create-user", "--org", "alpha", "--email", "ann@alpha.example", "--role", "admin"], `${PASSWORD}\n`);
  admin(["create-user", "--org", "alpha", "--email", "bob@alpha.example", "--role", "reviewer"], `${PASSWORD}\n`);
  const endpoint = await startServer();

  // Desktop A, on the command line: sign in, import a contract, correct an item, sync.
  const signIn = desktopA(["sync", "sign-in", "--server", endpoint, "--org", "alpha", "--email", "ann@alpha.example"], {
    PACTWISE_SYNC_PASSWORD: PASSWORD,
  });
  signedInA = true;
  assert.equal(signIn.session.org_name, "Alpha LLP");
  const imported = desktopA(["import", fixture]);
  const id = imported.imported[0].document.id;
  const review = desktopA(["pipeline", id]);
  const item = review.items.find((i) => i.status !== "absent");
  assert.ok(item, "the pipeline answered an item that can be corrected");
  const note = "Checked by Ann on desktop A";
  desktopA(["correct", id, "--item", item.id, "--status", "absent", "--note", note]);
  const pushed = desktopA(["sync", "now"]);
  assert.equal(pushed.pushed, 2, "the document and the correction");
  assert.equal(pushed.files_uploaded, 1);
  assert.equal(pushed.status.phase, "synced");

  // Desktop B, the real app: sign in through Settings.
  browser = await launch(dirB);
  await browser.$("[data-testid=status-sync]").waitUntil(async function () {
    return (await this.getText()) === "Sync: local only";
  }, { timeout: 15000, timeoutMsg: "a new desktop is local only" });
  await browser.keys(["Alt", "7"]);
  const form = await browser.$("[data-testid=sync-form]");
  await form.waitForDisplayed({ timeout: 10000 });
  await browser.$("[data-testid=sync-server]").setValue(endpoint);
  await browser.$("[data-testid=sync-org]").setValue("alpha");
  await browser.$("[data-testid=sync-email]").setValue("bob@alpha.example");
  await browser.$("[data-testid=sync-password]").setValue(PASSWORD);
  await shot("sync-01-sign-in");
  await browser.$("[data-testid=sync-sign-in]").click();
  await browser.$("[data-testid=sync-state]").waitForDisplayed({ timeout: 20000 });
  await browser.$("[data-testid=status-session]").waitUntil(async function () {
    return /Alpha LLP · bob@alpha\.example \(reviewer\)/.test(await this.getText());
  }, { timeout: 10000, timeoutMsg: "the window works in the synced organization" });

  // The status line reaches "synced": pulled, file fetched, imported, pipeline run.
  await browser.$("[data-testid=status-sync]").waitUntil(async function () {
    return (await this.getText()) === "Sync: synced";
  }, { timeout: 90000, timeoutMsg: "the status line did not reach synced" });
  await shot("sync-02-synced");

  // The document is here under A's name; its review shows A's correction.
  await browser.keys(["Alt", "2"]);
  await waitForRows(browser, ["mutual-nda-northwind-contoso.txt"], 15000);
  await browser.$("[data-testid=open-review]").click();
  const row = await browser.$(`[data-item-id="${item.id}"]`);
  await row.waitForExist({ timeout: 30000 });
  await browser.waitUntil(async () => /Confirmed/.test(await row.getText()), {
    timeout: 10000,
    timeoutMsg: "the corrected item shows as a person's answer",
  });
  assert.match(await row.$("[data-testid=item-status]").getText(), /absent/i);
  await row.click();
  await browser.waitUntil(
    async () => (await browser.execute(() => document.querySelector(".note-text")?.textContent ?? "")).includes(note),
    { timeout: 10000, timeoutMsg: "A's note is shown with the item" },
  );
  await shot("sync-03-correction-on-b");
});
