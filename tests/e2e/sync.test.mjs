// Two desktop data directories syncing through a sync service started by the test: pactwise-sync-server on
// loopback with a temporary SQLite database and an organization made with its admin command. Desktop A is the
// command line (sign in, import, correct, sync now); desktop B is the real app, which signs in through Settings,
// shows "synced" in its status line, and opens the document with A's correction in force.
import { test, after, afterEach } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { freshDataDir, launch, screenshot, waitForRows } from "./app.mjs";
import { desktopCli, syncService } from "./service.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const fixture = path.resolve(here, "../../fixtures/demo/mutual-nda-northwind-contoso.txt");
const service = syncService("sync-server");
const cliA = desktopCli(freshDataDir("sync-a"));
const dirB = freshDataDir("sync-b");
const PASSWORD = "a-long-password-for-the-e2e-test";
let browser;
let signedInA = false;

/** The `pactwise` command on data directory A, as JSON. */
const desktopA = (args, env = {}) => cliA.run(args, env);

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
  service.stop();
});

afterEach(async (t) => {
  if (browser && t.passed === false) await screenshot(browser, "failure-sync").catch(() => {});
});

test("a document and its correction made on one desktop reach the other through the sync service", async () => {
  const admin = (args, input) => service.admin(args, input);
  admin(["create-org", "--slug", "alpha", "--name", "Alpha LLP"]);
  admin(["create-user", "--org", "alpha", "--email", "ann@alpha.example", "--role", "admin"], `${PASSWORD}\n`);
  admin(["create-user", "--org", "alpha", "--email", "bob@alpha.example", "--role", "reviewer"], `${PASSWORD}\n`);
  const endpoint = await service.start();

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
