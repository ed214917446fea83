// The Runs area in the real app: a procurement run started from its form (a bad form first: the field is named and
// nothing starts), then seen waiting for a decision, in words, and in the approvals inbox.
import { test, after, afterEach } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import path from "node:path";
import { freshDataDir, launch, screenshot } from "./app.mjs";

const dataDir = freshDataDir("runs");
const cli = process.env.PACTWISE_CLI ?? path.join(path.dirname(process.env.PACTWISE_APP), "pactwise");
let browser;

function pactwise(...args) {
  return JSON.parse(execFileSync(cli, ["--data-dir", dataDir, ...args, "--json"], { encoding: "utf8" }));
}

after(async () => {
  await browser?.deleteSession().catch(() => {});
});

afterEach(async (t) => {
  if (browser && t.passed === false) await screenshot(browser, "failure-runs").catch(() => {});
});

test("a procurement run started from the Runs area waits for a decision, told in words", async () => {
  browser = await launch(dataDir);
  await browser.keys(["Alt", "8"]);
  await browser.$("[data-testid=runs-empty]").waitForDisplayed({ timeout: 15000 });

  // Keyboard: 'n' opens the start form on its first workflow, procurement.
  await browser.keys("n");
  const form = await browser.$("[data-testid=start-form]");
  await form.waitForDisplayed({ timeout: 10000 });
  assert.equal(await browser.$("[data-testid=start-graph]").getValue(), "procurement");
  await browser.$("#f-request").setValue("REQ-7 standing desks for the new office");
  await browser.$("#f-budget").setValue("ten thousand");
  await browser.$("#f-capabilities").setValue("office_furniture, delivery");
  await screenshot(browser, "20-runs-start-form");

  // A bad budget: the backend names the field, marks it, keeps what was typed, and starts nothing.
  await browser.keys(["Control", "Enter"]);
  const error = await browser.$("[data-testid=start-error]");
  await error.waitForDisplayed({ timeout: 10000 });
  assert.match(await error.getText(), /^Budget: must be an amount/);
  assert.equal(await browser.$("#f-budget").getAttribute("aria-invalid"), "true");
  assert.equal(await browser.$("#f-request").getValue(), "REQ-7 standing desks for the new office");
  assert.equal(pactwise("runs", "list").runs.length, 0, "nothing started");
  await screenshot(browser, "21-runs-bad-budget");

  await browser.$("#f-budget").setValue("10000");
  await browser.keys(["Control", "Enter"]);
  await browser.$("[data-testid=run-story]").waitForDisplayed({ timeout: 20000 });
  const now = await browser.$("[data-testid=run-now]");
  await now.waitForDisplayed({ timeout: 10000 });
  const text = await now.getText();
  assert.match(text, /Waiting for a decision by .+: Choose the vendor for this purchase/);
  assert.match(text, /since \d/);
  const timeline = await browser.$("[data-testid=timeline]").getText();
  assert.match(timeline, /Started by /);
  assert.match(timeline, /Shortlist by budget and capabilities: done/);
  assert.doesNotMatch(timeline, /choose_vendor|super-?step|checkpoint|\{/);
  const row = await browser.$("[data-testid=run-row]");
  assert.match(await row.getText(), /Procurement/);
  assert.match(await row.getText(), /waiting/);
  await screenshot(browser, "22-runs-procurement-waiting-for-approval");

  // The store agrees, and the approval is in the inbox with its shortlist as a table.
  const runs = pactwise("runs", "list").runs;
  assert.equal(runs.length, 1);
  assert.equal(runs[0].status, "waiting");
  await browser.keys(["Alt", "4"]);
  await browser.$("[data-testid=approval-row]").waitForDisplayed({ timeout: 10000 });
  await browser.keys("Enter");
  const shortlist = await browser.$("[data-testid=shortlist]");
  await shortlist.waitForDisplayed({ timeout: 10000 });
  assert.match(await shortlist.getText(), /Vendor\s*Price\s*Delivery/);
  assert.match(await shortlist.getText(), /Globex/);
  assert.match(await browser.$("[data-testid=approval-waiting]").getText(), /waiting since .+ for a decision by/);
  await screenshot(browser, "23-approval-evidence-shortlist");
});
