// One organization on three desktops through the real sync service (pactwise-sync-server on loopback):
// - the buyer's desktop and the approver's desktop are two real apps, open at the same time (two drivers);
// - a third desktop is the command line of Ann, the organization's admin, who added the other two as members (each
//   signs in once with the one-time code she handed over).
// The buyer starts runs from the Runs area; the approver's app shows each request in its inbox and raises a native
// notification (received here by the test's own notification daemon on the session bus); decisions go to the service
// and come back stamped; the buyer's runs resume on the buyer's desktop; the third desktop reads the timelines.
import { test, before, after, afterEach } from "node:test";
import assert from "node:assert/strict";
import { freshDataDir, launch, screenshot, startNotificationDaemon } from "./app.mjs";
import { desktopCli, syncService } from "./service.mjs";

const service = syncService("desktops-sync-server");
const ann = desktopCli(freshDataDir("desktops-ann"));
const bea = desktopCli(freshDataDir("desktops-bea"));
const abe = desktopCli(freshDataDir("desktops-abe"));
const PASSWORD = "a-long-password-for-the-e2e-test";
let daemon;
let buyer;
let approver;

/** A screenshot once the page has painted what the DOM holds. */
async function shot(browser, name) {
  await browser.execute(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
  await screenshot(browser, name);
}

/** Syncs Ann's desktop until `found()` answers something (the other desktops move on their own). */
async function annSyncsUntil(found, what, timeout = 30000) {
  const deadline = Date.now() + timeout;
  for (;;) {
    ann.run(["sync", "now"]);
    const value = found();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`Ann's desktop did not see ${what} within ${timeout} ms`);
    await new Promise((r) => setTimeout(r, 300));
  }
}

/** Starts a run of `graph` from the buyer's Runs area; `fill` fills the form. Returns the run's title line. */
async function startFromRunsArea(graph, fill) {
  await buyer.keys(["Alt", "8"]);
  await buyer.$("[data-testid=new-run]").waitForDisplayed({ timeout: 15000 });
  await buyer.keys("n");
  await buyer.$("[data-testid=start-form]").waitForDisplayed({ timeout: 10000 });
  await buyer.$("[data-testid=start-graph]").selectByAttribute("value", graph);
  await buyer.waitUntil(async () => (await buyer.$("[data-testid=start-graph]").getValue()) === graph, {
    timeout: 5000,
    timeoutMsg: `the start form did not switch to ${graph}`,
  });
  await fill();
  await buyer.keys(["Control", "Enter"]);
  await buyer.$("[data-testid=run-now]").waitUntil(async function () {
    return /Waiting for a decision by/.test(await this.getText());
  }, { timeout: 20000, timeoutMsg: "the run did not reach its approval step" });
}

/** Opens the approver's inbox row whose text matches `title` and decides it with `reason` (keyboard: a/r, Ctrl+Enter). */
async function decideInApproverApp(title, key, reason) {
  await approver.keys(["Alt", "4"]);
  await approver.waitUntil(
    async () => {
      for (const row of await approver.$$("[data-testid=approval-row]")) if (title.test(await row.getText())) return true;
      return false;
    },
    { timeout: 20000, timeoutMsg: `the approver's inbox does not show ${title}` },
  );
  const rows = await approver.$$("[data-testid=approval-row]");
  let target = null;
  for (const row of rows) if (title.test(await row.getText())) target = row;
  assert.match(await target.getText(), /asked by Bea Buyer/);
  await target.click();
  await approver.$("[data-testid=approval-detail]").waitForDisplayed({ timeout: 10000 });
  await approver.keys(key);
  const field = await approver.$("[data-testid=decision-reason]");
  await approver.waitUntil(async () => (await approver.execute(() => document.activeElement?.id)) === "decision-reason", {
    timeout: 5000,
    timeoutMsg: `'${key}' focuses the reason field`,
  });
  await field.setValue(reason);
  await approver.keys(["Control", "Enter"]);
  // Sent as a request: said to be waiting until the service confirms it, then confirmed.
  const outcome = await approver.$("[data-testid=decision-outcome]");
  await outcome.waitUntil(async function () {
    return /confirmed by the sync service/.test(await this.getText());
  }, { timeout: 20000, timeoutMsg: "the approver's decision was not confirmed by the sync service" });
}

before(async () => {
  service.admin(["create-org", "--slug", "alpha", "--name", "Alpha LLP"]);
  service.admin(["create-user", "--org", "alpha", "--email", "ann@alpha.example", "--role", "admin"], `${PASSWORD}\n`);
  const endpoint = await service.start();
  ann.run(["sync", "sign-in", "--server", endpoint, "--org", "alpha", "--email", "ann@alpha.example"], {
    PACTWISE_SYNC_PASSWORD: PASSWORD,
  });
  // Ann adds the buyer and the approver; each signs in once with the code she hands over and a password they choose.
  for (const [desk, email, name, role] of [
    [bea, "bea@alpha.example", "Bea Buyer", "buyer"],
    [abe, "abe@alpha.example", "Abe Approver", "approver"],
  ]) {
    const added = ann.run(["members", "add", "--email", email, "--name", name, "--role", role]);
    assert.ok(added.code, "a one-time code to hand over");
    desk.run(["sync", "sign-in", "--code", "--server", endpoint, "--org", "alpha", "--email", email], {
      PACTWISE_SYNC_CODE: added.code,
      PACTWISE_SYNC_PASSWORD: `${PASSWORD}-${role}`,
    });
  }
  daemon = await startNotificationDaemon();
  buyer = await launch(bea.dataDir);
  approver = await launch(abe.dataDir, { second: true });
  for (const [app, who] of [[buyer, /Bea Buyer|bea@alpha\.example/], [approver, /Abe Approver|abe@alpha\.example/]]) {
    await app.$("[data-testid=status-session]").waitUntil(async function () {
      return /Alpha LLP/.test(await this.getText()) && who.test(await this.getText());
    }, { timeout: 20000, timeoutMsg: "the app works in the synced organization as its member" });
  }
});

after(async () => {
  await buyer?.deleteSession().catch(() => {});
  await approver?.deleteSession().catch(() => {});
  daemon?.stop();
  service.stop();
});

afterEach(async (t) => {
  if (t.passed === false) {
    if (buyer) await screenshot(buyer, `failure-desktops-buyer`).catch(() => {});
    if (approver) await screenshot(approver, `failure-desktops-approver`).catch(() => {});
  }
});

test("a procurement run started in the buyer's app is approved in the approver's app and finishes at home", async () => {
  await startFromRunsArea("procurement", async () => {
    await buyer.$("#f-request").setValue("REQ-21 standing desks for the Leeds office");
    await buyer.$("#f-budget").setValue("10000");
    await buyer.$("#f-capabilities").setValue("office_furniture, delivery");
  });
  await shot(buyer, "30-desktops-buyer-run-waiting");

  // The approver's desktop: a native notification, and the request in the inbox with who asked.
  const notice = await daemon.waitFor((n) => /Choose the vendor for this purchase/.test(`${n.summary} ${n.body}`));
  assert.match(notice.summary, /Approval needed|new approvals/);
  await decideInApproverApp(/Choose the vendor for this purchase/, "a", "Globex fits the budget and delivers in time");
  await shot(approver, "31-desktops-approver-confirmed");

  // The buyer's run resumed on the buyer's desktop and finished, with the approver's name and reason.
  await buyer.$("[data-testid=run-status]").waitUntil(async function () {
    return (await this.getText()) === "finished";
  }, { timeout: 30000, timeoutMsg: "the buyer's run did not finish after the approval" });
  const decisions = await buyer.$("[data-testid=decisions]").getText();
  assert.match(decisions, /Approved by Abe Approver/);
  assert.match(decisions, /Globex fits the budget and delivers in time/);
  await buyer.$("[data-testid=agreement]").waitForDisplayed({ timeout: 10000 });
  await shot(buyer, "32-desktops-buyer-run-finished");

  // The third desktop (Ann's command line) reads the finished run's timeline with the approver's name.
  const run = await annSyncsUntil(() => {
    const found = ann.run(["runs", "list"]).runs.find((r) => r.graph === "procurement" && r.status === "succeeded");
    return found ?? null;
  }, "the finished procurement run");
  const shown = ann.run(["runs", "show", run.id]);
  assert.equal(shown.run.status, "succeeded");
  assert.equal(shown.approvals[0].decided_by_name, "Abe Approver");
  assert.equal(shown.approvals[0].reason, "Globex fits the budget and delivers in time");
  assert.equal(shown.run.started_by_name, "Bea Buyer");
  assert.ok(shown.events.length > 0, "the timeline came with the run");
  const told = ann.text(["runs", "show", run.id]);
  assert.match(told, /Abe Approver/, "the timeline as a person reads it names the approver");
  assert.doesNotMatch(told, /"|\{/, "no JSON for a person");
});

test("a second run is rejected from the approver's desktop and the reason is on the buyer's timeline", async () => {
  await startFromRunsArea("procurement", async () => {
    await buyer.$("#f-request").setValue("REQ-22 a second set of desks");
    await buyer.$("#f-budget").setValue("12000");
    await buyer.$("#f-capabilities").setValue("office_furniture");
  });
  await decideInApproverApp(/Choose the vendor for this purchase/, "r", "Over this quarter's budget; ask again in January");
  await buyer.$("[data-testid=run-status]").waitUntil(async function () {
    return /rejected|finished|ended/.test(await this.getText());
  }, { timeout: 30000, timeoutMsg: "the buyer's second run did not end after the rejection" });
  const decisions = await buyer.$("[data-testid=decisions]").getText();
  assert.match(decisions, /Rejected by Abe Approver/);
  assert.match(decisions, /Over this quarter's budget; ask again in January/);
  await shot(buyer, "33-desktops-buyer-run-rejected");
});

test("vendor onboarding's four-eyes steps are decided by two different members on two desktops", async () => {
  await startFromRunsArea("vendor_onboarding", async () => {
    await buyer.$('[id="f-vendor.name"]').setValue("Initech Ltd");
    await buyer.$('[id="f-vendor.tax_id"]').setValue("GB-99-1234");
    for (const box of await buyer.$$('[data-field="vendor.documents"] input[type=checkbox]')) await box.click();
    await buyer.$('[id="f-vendor.sanctions_hit"]').click();
  });
  await shot(buyer, "34-desktops-onboarding-waiting");

  // Ann (admin) decides the compliance review on her desktop.
  const compliance = await annSyncsUntil(
    () => ann.run(["inbox"]).approvals.find((a) => /Compliance review/.test(a.title)) ?? null,
    "the compliance review",
  );
  ann.run(["approve", compliance.id, "--decision", "approve", "--reason", "A false positive: different company"]);
  ann.run(["sync", "now"]);

  // The next step: Ann decided the first, so four-eyes refuses her, at once and in words.
  const approval = await annSyncsUntil(
    () => ann.run(["inbox"]).approvals.find((a) => /Approve the new vendor/.test(a.title)) ?? null,
    "the vendor approval step",
  );
  let refusal = null;
  try {
    ann.run(["approve", approval.id, "--decision", "approve", "--reason", "me again"]);
  } catch (e) {
    refusal = e.refusal;
  }
  assert.ok(refusal, "Ann may not decide the second four-eyes step of the run");
  assert.equal(refusal.code, "forbidden");
  assert.match(refusal.message, /^four-eyes rule: you already decided another step of this run; someone else must decide this one/);

  // Abe decides it in his app; the run finishes on the buyer's desktop with both names.
  await decideInApproverApp(/Approve the new vendor/, "a", "Documents complete and screened");
  await buyer.$("[data-testid=run-status]").waitUntil(async function () {
    return (await this.getText()) === "finished";
  }, { timeout: 30000, timeoutMsg: "the onboarding run did not finish" });
  const decisions = await buyer.$("[data-testid=decisions]").getText();
  assert.match(decisions, /Approved by ann@alpha\.example/);
  assert.match(decisions, /Approved by Abe Approver/);
  await shot(buyer, "35-desktops-onboarding-finished-by-two");
});
