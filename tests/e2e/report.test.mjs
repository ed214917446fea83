// The contract review report in the real app, against the fake model server: a six-page NDA is imported, its report
// is run from the Documents list, the invented clause the script plants shows only among the rejected extractions,
// a clause is shown on its page, and a person signs the report off.
import { test, after, afterEach } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { freshDataDir, launch, screenshot, startFakeModel, waitForRows } from "./app.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const fixtures = path.resolve(here, "../../fixtures/report");
const dataDir = freshDataDir("report");
const bin = path.dirname(process.env.PACTWISE_APP);
const cli = process.env.PACTWISE_CLI ?? path.join(bin, "pactwise");
const endpoint = process.env.PACTWISE_MODEL_ENDPOINT;
const INVENTED = "Either Party may terminate this Agreement at any time without notice";
let browser;
let fake;
let keyStored = false;

function pactwise(args, input) {
  return execFileSync(cli, ["--data-dir", dataDir, ...args], { encoding: "utf8", input });
}

after(async () => {
  await browser?.deleteSession().catch(() => {});
  fake?.kill("SIGTERM");
  // The keychain is shared by every data directory of this test run: leave it as it was.
  if (keyStored) pactwise(["settings", "api-key", "--clear"]);
});

afterEach(async (t) => {
  if (browser && t.passed === false) await screenshot(browser, "failure-report").catch(() => {});
});

test("a report runs on a contract against the fake model, is opened and is signed off", async (t) => {
  if (!endpoint) {
    // Under CI a missing prerequisite fails with its reason; it never passes by skipping.
    if (process.env.CI === "true") throw new Error("PACTWISE_MODEL_ENDPOINT is not set: run the test through tests/e2e/run.sh");
    return t.skip("run.sh sets PACTWISE_MODEL_ENDPOINT for the app");
  }
  fake = await startFakeModel(path.join(fixtures, "fake-model.json"));
  pactwise(["settings", "api-key"], "sk-ant-e2e-fake-key");
  keyStored = true;
  // The import's pipeline classifies the contract through the fake server (an NDA): its checklist is the playbook.
  pactwise(["import", path.join(fixtures, "nda-six-pages.txt")]);

  browser = await launch(dataDir);
  await browser.$("[data-testid=status-model]").waitUntil(async function () {
    return /online/.test(await this.getText());
  }, { timeout: 15000, timeoutMsg: "the app sees the stored key" });
  await browser.$("button[data-area=documents]").click();
  await waitForRows(browser, ["nda-six-pages.txt"]);
  await browser.$("[data-testid=document-row] [data-testid=open-report]").click();
  await browser.$("[data-testid=report-empty]").waitForDisplayed({ timeout: 10000 });

  await browser.$("[data-testid=run-report]").click();
  const status = await browser.$("[data-testid=report-status]");
  await browser.waitUntil(async () => (await status.isExisting()) && /awaiting sign-off/.test(await status.getText()), {
    timeout: 90000,
    timeoutMsg: "the report run did not finish",
  });
  assert.equal(await status.getText(), "Complete, awaiting sign-off");
  assert.match(await browser.$("[data-testid=report-bounds]").getText(), /^30 of 60 model calls/);

  // Only clauses found on their page are shown; the invented one is listed as rejected.
  const clauses = await browser.execute(() =>
    Array.from(document.querySelectorAll("[data-testid=report-clause]")).map((c) => c.textContent),
  );
  assert.ok(clauses.length >= 12, `clauses shown: ${clauses.length}`);
  assert.ok(!clauses.some((c) => c.includes(INVENTED)), "the invented clause is not among the clauses");
  const rejected = await browser.$("[data-testid=rejected-extraction]").getText();
  assert.match(rejected, /Not on page 1/);
  assert.ok(rejected.includes(INVENTED));
  assert.match(await browser.$("[data-testid=report-dropped]").getText(), /page 9 is outside the window/);
  assert.ok((await browser.$$("[data-testid=also-under]")).length >= 2, "clauses under two types are marked");
  await screenshot(browser, "30-report-awaiting-sign-off");

  // A clause opens on its page, highlighted.
  const governing = await browser.$("[data-testid=report-type][data-item-id='nda.general.governing_law'] [data-testid=report-clause]");
  await governing.click();
  await browser.waitUntil(
    // A text file's pages are shown as text: the clause is a <mark> in it.
    async () => browser.execute(() => document.querySelectorAll('[data-page="6"] mark.current, [data-page="6"] .mark.current').length > 0),
    { timeout: 15000, timeoutMsg: "the governing-law clause is highlighted on page 6" },
  );
  await screenshot(browser, "31-report-clause-on-its-page");

  // The sign-off is recorded with the person's name.
  await browser.$("[data-testid=sign-off-reason]").setValue("Checked every clause against the contract");
  await browser.$("[data-testid=sign-off]").click();
  await browser.waitUntil(async () => /^Signed off by /.test(await status.getText()), {
    timeout: 15000,
    timeoutMsg: "the sign-off was not recorded",
  });
  assert.match(await browser.$("[data-testid=sign-off-record]").getText(), /Checked every clause against the contract/);
  assert.ok(await browser.$("[data-testid=export-report-docx]").isDisplayed());
  await screenshot(browser, "32-report-signed-off");

  // The model was asked once per window and once per clause type, nothing more.
  const log = await (await fetch(`${endpoint}/_fake/requests`)).json();
  const calls = log.filter((r) => ["record_clauses", "record_clause_type"].includes(r.body?.tool_choice?.name));
  assert.equal(calls.length, 30);
  const runs = JSON.parse(pactwise(["runs", "list", "--json"]));
  const run = runs.runs.find((r) => r.graph === "contract_review_report");
  assert.equal(run.status, "succeeded");
  assert.equal(run.channels.outcome.status, "signed_off");
});
