// The contract repository end to end, on two desktops of one organization through the real sync service:
// - Ann (admin) finalizes the demo licence in her app, with a new vendor; it appears in Contracts with its terms and
//   its renewal reminder; an extraction opens the contract at its verified quote;
// - the notice period is corrected (reopened and corrected on Ann's command line, on the same data directory) and the
//   reminder in the app moves with the notice deadline;
// - Ann starts the contract's lifecycle from Contracts (l) and its approval waits in the inbox;
// - a review report runs against the fake model on Ann's desktop and she signs it off; the service stamps it;
// - Bob's app, a second desktop, shows the contract, its vendor link and the report's sign-off after syncing.
import { test, before, after, afterEach } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { freshDataDir, launch, screenshot, startFakeModel } from "./app.mjs";
import { desktopCli, syncService } from "./service.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const licence = path.resolve(here, "../../fixtures/demo/software-license-northwind-tailspin.txt");
const script = path.resolve(here, "../../fixtures/repository/fake-model.json");
const service = syncService("repository-sync-server");
const ann = desktopCli(freshDataDir("repository-ann"));
const bob = desktopCli(freshDataDir("repository-bob"));
const PASSWORD = "a-long-password-for-the-e2e-test";
let annApp;
let bobApp;
let fake;
let keyStored = false;

before(async () => {
  service.admin(["create-org", "--slug", "alpha", "--name", "Alpha LLP"]);
  service.admin(["create-user", "--org", "alpha", "--email", "ann@alpha.example", "--role", "admin"], `${PASSWORD}\n`);
  const endpoint = await service.start();
  ann.run(["sync", "sign-in", "--server", endpoint, "--org", "alpha", "--email", "ann@alpha.example"], {
    PACTWISE_SYNC_PASSWORD: PASSWORD,
  });
  const added = ann.run(["members", "add", "--email", "bob@alpha.example", "--name", "Bob Reviewer", "--role", "reviewer"]);
  bob.run(["sync", "sign-in", "--code", "--server", endpoint, "--org", "alpha", "--email", "bob@alpha.example"], {
    PACTWISE_SYNC_CODE: added.code,
    PACTWISE_SYNC_PASSWORD: `${PASSWORD}-bob`,
  });
});

after(async () => {
  await annApp?.deleteSession().catch(() => {});
  await bobApp?.deleteSession().catch(() => {});
  fake?.kill("SIGTERM");
  service.stop();
  // The keychain is shared by every data directory of this test run: leave it as it was.
  if (keyStored) ann.text(["settings", "api-key", "--clear"]);
});

afterEach(async (t) => {
  if (t.passed === false) {
    if (annApp) await screenshot(annApp, "failure-repository-ann").catch(() => {});
    if (bobApp) await screenshot(bobApp, "failure-repository-bob").catch(() => {});
  }
});

const textOf = (app, selector) => app.execute((s) => document.querySelector(s)?.textContent ?? "", selector);

/** Opens Contracts (Alt+3) and the first contract's detail (Enter); resolves once `ready` matches its text. */
async function openContract(app, ready = /Notice to stop renewal/) {
  await app.keys(["Alt", "3"]);
  const count = await app.$("[data-testid=contracts-count]");
  await count.waitUntil(async function () {
    return (await this.getText()) === "1 contract";
  }, { timeout: 20000, timeoutMsg: "the finalized contract is listed" });
  await app.$("[data-testid=contracts-list]").click();
  await app.keys(["Enter"]);
  await app.waitUntil(async () => ready.test(await textOf(app, "[data-testid=contract-detail]")), {
    timeout: 15000,
    timeoutMsg: `the contract's detail shows ${ready}`,
  });
}

test("finalize → Contracts → quote → corrected notice moves the reminder → lifecycle → a second desktop shows it all", async (t) => {
  if (!process.env.PACTWISE_MODEL_ENDPOINT) {
    // Under CI a missing prerequisite fails with its reason; it never passes by skipping.
    if (process.env.CI === "true") throw new Error("PACTWISE_MODEL_ENDPOINT is not set: run the test through tests/e2e/run.sh");
    return t.skip("run.sh sets PACTWISE_MODEL_ENDPOINT for the app and the CLI");
  }
  // Offline (no key yet): the licence is imported and pre-filled by rules; every critical item is confirmed.
  const id = ann.run(["import", licence]).imported[0].document.id;
  const review = ann.run(["pipeline", id]);
  for (const item of review.items.filter((i) => i.risk === "critical")) {
    ann.run(["correct", id, "--item", item.id, "--confirm", "--keep-despite-warnings"]);
  }

  // Ann finalizes in her app, from the review queue, with a new vendor.
  annApp = await launch(ann.dataDir);
  await annApp.keys(["Alt", "1"]);
  await annApp.waitUntil(async () => (await annApp.$$("[data-testid=queue-row]")).length === 1, {
    timeout: 15000,
    timeoutMsg: "the licence waits in the review queue",
  });
  await annApp.keys("Enter");
  await annApp.$("[data-testid=review]").waitForDisplayed({ timeout: 10000 });
  await annApp.waitUntil(async () => (await annApp.$$("[data-testid=checklist-item]")).length > 5, {
    timeout: 20000,
    timeoutMsg: "the checklist is drawn",
  });
  await annApp.keys("f");
  await annApp.$("[data-testid=finalize-dialog]").waitForDisplayed({ timeout: 5000 });
  await annApp.$("[data-testid=vendor-new]").click();
  await annApp.$("[data-testid=vendor-new-name]").setValue("Tailspin Software");
  await annApp.$("[data-testid=finalize-submit]").click();
  await annApp.$("[data-testid=finalized]").waitForDisplayed({ timeout: 15000 });
  await annApp.keys("Escape");
  // Bob's desktop receives the document while no model key is set (its own pipeline reads it offline).
  ann.run(["sync", "now"]);
  bob.run(["sync", "now"]);

  // Contracts: its terms, its vendor and its renewal reminder (60 days before the 90-day notice deadline).
  await openContract(annApp);
  const detail = await textOf(annApp, "[data-testid=contract-detail]");
  assert.match(detail, /Tailspin Software \(linked by a person\)/);
  assert.match(detail, /Notice of non-renewal by: 3 May 2029/);
  assert.match(await textOf(annApp, "[data-testid=contract-reminder]"), /^Renewal reminder: 4 March 2029/);
  await screenshot(annApp, "70-repository-contract");

  // The notice extraction opens the contract at its verified quote.
  await annApp.$("[data-testid=contract-field][data-field=renewal_notice]").click();
  await annApp.waitUntil(
    async () =>
      annApp.execute(() =>
        Array.from(document.querySelectorAll('[data-page="1"] mark.current, [data-page="1"] .mark.current')).some((m) =>
          /notice of non-renewal|ninety \(90\) days/.test(m.textContent),
        ),
      ),
    { timeout: 15000, timeoutMsg: "the contract opens with the notice quote marked on page 1" },
  );
  await screenshot(annApp, "71-repository-at-quote");

  // The notice period was misread: reopened and corrected to 45 days, finalized again with the same vendor.
  const vendor = ann.run(["vendors", "list"]).find((v) => v.name === "Tailspin Software");
  assert.ok(vendor, "the vendor Ann created at finalize");
  ann.run(["reopen", id, "--reason", "the notice period was misread"]);
  ann.run([
    "correct", id, "--item", "license.term.nonrenewal_notice", "--status", "present",
    "--quote", "payable within forty-five (45) days", "--page", "1",
    "--note", "the notice period is 45 days", "--keep-despite-warnings",
  ]);
  ann.run(["finalize", id, "--vendor-id", vendor.id]);
  await openContract(annApp, /Notice of non-renewal by: 17 June 2029/);
  assert.match(
    await textOf(annApp, "[data-testid=contract-reminder]"),
    /^Renewal reminder: 18 April 2029/,
    "the reminder moved with the deadline: 60 days before 17 June 2029",
  );
  await screenshot(annApp, "72-repository-reminder-moved");

  // Lifecycle from the contract (l): its approval waits in the inbox.
  await annApp.keys("l");
  const notice = await annApp.$("[data-testid=lifecycle-notice]");
  await notice.waitForDisplayed({ timeout: 15000 });
  assert.doesNotMatch(await notice.getText(), /could not|refused|error/i, await notice.getText());
  const runs = ann.run(["runs", "list"]).runs.filter((r) => r.graph === "contract_lifecycle");
  assert.equal(runs.length, 1, "one lifecycle run, started from the contract");
  assert.ok(JSON.stringify(runs[0]).includes(id), `the run names the contract: ${JSON.stringify(runs[0])}`);
  await screenshot(annApp, "73-repository-lifecycle");

  // A review report against the fake model; Ann signs it off; the service stamps the sign-off.
  fake = await startFakeModel(script);
  ann.text(["settings", "api-key"], "sk-ant-e2e-fake-key");
  keyStored = true;
  ann.run(["report", licence]);
  const inbox = ann.run(["inbox"]).approvals;
  const signOff = inbox.find((a) => /Sign off the contract review report/.test(a.title));
  assert.ok(signOff, `the report's sign-off waits in Ann's inbox: ${JSON.stringify(inbox.map((a) => a.title))}`);
  ann.run(["approve", signOff.id, "--decision", "approve", "--reason", "Checked every clause against the contract"]);
  // The sign-off is a request until the service stamps it; Ann's desktop (the run's home) then resumes the run and
  // publishes its step. Both desktops sync until Bob's holds the stamped sign-off.
  const deadline = Date.now() + 30000;
  for (;;) {
    ann.run(["sync", "now"]);
    bob.run(["sync", "now"]);
    const reports = bob.run(["contracts", "show", id]).reports;
    if (reports.some((r) => r.signed_off_by)) break;
    if (Date.now() > deadline) throw new Error(`Bob's desktop never saw the sign-off: ${JSON.stringify(reports)}`);
    await new Promise((r) => setTimeout(r, 300));
  }
  bobApp = await launch(bob.dataDir, { second: true });
  await openContract(bobApp, /signed off by/);
  const onBob = await textOf(bobApp, "[data-testid=contract-detail]");
  assert.match(onBob, /Tailspin Software \(linked by a person\)/);
  assert.match(onBob, /Notice of non-renewal by: 17 June 2029/);
  assert.match(onBob, /Review report started .* · signed off by (Ann|ann@alpha\.example)/);
  assert.match(await textOf(bobApp, "[data-testid=contract-reminder]"), /^Renewal reminder: 18 April 2029/);
  await screenshot(bobApp, "74-repository-second-desktop");
});
