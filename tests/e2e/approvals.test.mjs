// The approvals inbox in the real app: a procurement run started through the CLI pauses for a person; the approval
// appears in the inbox, the user approves it with a reason, and the run finishes with the purchase agreement drafted.
import { test, after, afterEach } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import path from "node:path";
import { freshDataDir, launch, screenshot } from "./app.mjs";

const dataDir = freshDataDir("approvals");
const cli = process.env.PACTWISE_CLI ?? path.join(path.dirname(process.env.PACTWISE_APP), "pactwise");
let browser;

function pactwise(...args) {
  return JSON.parse(execFileSync(cli, ["--data-dir", dataDir, ...args, "--json"], { encoding: "utf8" }));
}

after(async () => {
  await browser?.deleteSession().catch(() => {});
});

afterEach(async (t) => {
  if (browser && t.passed === false) await screenshot(browser, "failure-approvals").catch(() => {});
});

test("a paused procurement run is approved from the inbox with a reason and finishes with the agreement drafted", async () => {
  const input = JSON.stringify({ request: "REQ-7 standing desks", budget: 10000, capabilities: ["office_furniture", "delivery"] });
  const started = pactwise("runs", "start", "procurement", "--input", input);
  assert.equal(started.run.status, "waiting", "the run pauses at the approval gate");

  browser = await launch(dataDir);
  await browser.keys(["Alt", "4"]);
  const row = await browser.$("[data-testid=approval-row]");
  await row.waitForDisplayed({ timeout: 15000 });
  assert.match(await row.getText(), /Choose the vendor for this purchase/);
  assert.match(await row.getText(), /due in 3 days/);
  await screenshot(browser, "10-approvals-inbox");

  // Keyboard: Enter opens it with the evidence as it was when the step paused.
  await browser.keys("Enter");
  const evidence = await browser.$("[data-testid=evidence]");
  await evidence.waitForDisplayed({ timeout: 10000 });
  assert.match(await evidence.getText(), /REQ-7 standing desks/);
  assert.match(await evidence.getText(), /Globex/);
  await browser.$("[data-testid=timeline]").waitForDisplayed({ timeout: 10000 });

  // 'a' starts an approval; with no reason it is refused where the user is looking and nothing is decided.
  await browser.keys("a");
  const reason = await browser.$("[data-testid=decision-reason]");
  await browser.waitUntil(async () => (await browser.execute(() => document.activeElement?.id)) === "decision-reason", {
    timeout: 5000,
    timeoutMsg: "'a' focuses the reason field",
  });
  await browser.$("[data-testid=decision-submit]").click();
  const error = await browser.$("[data-testid=decision-error]");
  await error.waitForDisplayed({ timeout: 5000 });
  assert.match(await error.getText(), /Give a reason to approve/);
  assert.equal(pactwise("inbox").approvals.length, 1, "nothing was decided");
  await screenshot(browser, "11-approval-needs-a-reason");

  await reason.setValue("Globex fits the budget and delivers");
  await browser.keys(["Control", "Enter"]);
  const outcome = await browser.$("[data-testid=decision-outcome]");
  await outcome.waitForDisplayed({ timeout: 20000 });
  assert.match(await outcome.getText(), /Approved: Procurement is finished/);
  await browser.$("[data-testid=inbox-empty]").waitForDisplayed({ timeout: 10000 });
  const agreement = await browser.$("[data-testid=agreement]");
  await agreement.waitForDisplayed({ timeout: 10000 });
  assert.match(await agreement.getText(), /Globex/);
  assert.match(await browser.$("[data-testid=decisions]").getText(), /Globex fits the budget and delivers/);
  await screenshot(browser, "12-approved-run-timeline");

  // The store agrees: the run finished and the decision carries the reason and the approver.
  const shown = pactwise("runs", "show", started.run.id);
  assert.equal(shown.run.status, "succeeded");
  assert.equal(shown.approvals[0].reason, "Globex fits the budget and delivers");
  assert.ok(shown.approvals[0].decided_by, "the approver is stamped from the session");
  assert.ok(shown.run.channels.agreement.text.includes("Globex"));
});
