// Prep Studio in the real app, against the fake model server replaying a golden drafting run
// (fixtures/prep/it-service-desk.json): the buyer enters an intake, drafts (progress is shown while it runs), fixes
// the two validator errors the draft has (criteria weights sum to 95 %, a pricing line with no quantity) in the
// table editors, validates, approves all six artifacts bound to the version shown, exports PDF, DOCX and OCDS, and
// publishes through the store's gate.
// The exports are written through the app's save path (PACTWISE_SAVE_DIR, set by run.sh) and checked on disk; the
// CLI confirms what the store holds.
import { test, after, afterEach } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { freshDataDir, launch, screenshot, startFakeModel } from "./app.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const dataDir = freshDataDir("prep");
const files = freshDataDir("prep-files");
const bin = path.dirname(process.env.PACTWISE_APP);
const cli = process.env.PACTWISE_CLI ?? path.join(bin, "pactwise");
const endpoint = process.env.PACTWISE_MODEL_ENDPOINT;
const saveDir = process.env.PACTWISE_SAVE_DIR;
let browser;
let fake;
let keyStored = false;

function pactwise(args, input) {
  return execFileSync(cli, ["--data-dir", dataDir, ...args], { encoding: "utf8", input });
}

after(async () => {
  await browser?.deleteSession().catch(() => {});
  fake?.kill("SIGTERM");
  if (keyStored) pactwise(["settings", "api-key", "--clear"]);
});

afterEach(async (t) => {
  if (browser && t.passed === false) await screenshot(browser, "failure-prep").catch(() => {});
});

async function setField(testid, value) {
  const field = await browser.$(`[data-testid=${testid}]`);
  await field.waitForDisplayed({ timeout: 5000 });
  await field.clearValue();
  await field.setValue(value);
}

/** Sets an input's value the way typing would (for date inputs, which WebDriver types into unreliably). */
async function setByScript(selector, value) {
  await browser.execute(
    (sel, v) => {
      const el = document.querySelector(sel);
      el.value = v;
      el.dispatchEvent(new Event("input", { bubbles: true }));
    },
    selector,
    value,
  );
}

/** Moves focus out of the editor (single keys are typed into a field, not taken as shortcuts). */
async function leaveField() {
  await browser.$("[data-testid=prep-title]").click();
}

async function stateOf(kind) {
  return (await browser.$(`[data-testid=state-${kind}]`)).getText();
}

async function waitForState(kind, pattern, timeout = 10000) {
  let seen = "";
  await browser.waitUntil(
    async () => {
      seen = await stateOf(kind);
      return pattern.test(seen);
    },
    { timeout, timeoutMsg: `${kind}: expected ${pattern}, saw "${seen}"` },
  );
}

/** A row's input in a table editor: the `field` of row `index` (0-based). */
async function cell(rowTestid, index, field) {
  const rows = await browser.$$(`[data-testid=${rowTestid}]`);
  return rows[index].$(`[data-field=${field}]`);
}

test("draft against the fake model, fix the validator errors by hand, approve every artifact and export", async (t) => {
  if (!endpoint) {
    // Under CI a missing prerequisite fails with its reason; it never passes by skipping.
    if (process.env.CI === "true") throw new Error("PACTWISE_MODEL_ENDPOINT is not set: run the test through tests/e2e/run.sh");
    return t.skip("run.sh sets PACTWISE_MODEL_ENDPOINT for the app");
  }
  if (!saveDir) {
    if (process.env.CI === "true") throw new Error("PACTWISE_SAVE_DIR is not set: run the test through tests/e2e/run.sh");
    return t.skip("run.sh sets PACTWISE_SAVE_DIR for the app's save dialogs");
  }
  fs.mkdirSync(saveDir, { recursive: true });

  // The golden run's recorded replies, each a little slow so the progress of a long draft can be seen.
  const fixture = JSON.parse(fs.readFileSync(path.join(here, "../../fixtures/prep/it-service-desk.json"), "utf8"));
  const scriptData = fixture.script;
  for (const rule of scriptData.rules) rule.reply.delay_ms = 400;
  const script = path.join(files, "it-service-desk-script.json");
  fs.writeFileSync(script, JSON.stringify(scriptData));
  fake = await startFakeModel(script);
  pactwise(["settings", "api-key"], "sk-ant-e2e-fake-key");
  keyStored = true;

  browser = await launch(dataDir);
  await browser.$("[data-testid=status-model]").waitUntil(async function () {
    return /online/.test(await this.getText());
  }, { timeout: 15000, timeoutMsg: "the app sees the stored key" });

  // Alt+5 is Prep Studio; n starts a package from an intake.
  await browser.keys(["Alt", "5"]);
  await browser.$("[data-testid=prep-empty]").waitForDisplayed({ timeout: 10000 });
  await browser.keys("n");
  await browser.$("[data-testid=intake-form]").waitForDisplayed({ timeout: 5000 });
  const intake = fixture.intake;
  await setField("intake-title", intake.title);
  await setField("intake-buyer", intake.buyer);
  await setField("intake-brief", intake.brief);
  await setField("intake-currency", intake.currency);
  await setField("intake-ceiling", String(intake.budget_ceiling_minor / 100));
  await setField("intake-checklist", intake.checklist_type);
  await setByScript("[data-testid=intake-publication]", intake.timeline.publication);
  for (const key of ["question_days", "submission_days", "evaluation_days", "award_days", "contract_start_days"]) {
    await setField(`intake-${key}`, String(intake.timeline[key]));
  }
  await setField("intake-holidays", intake.holidays.join(", "));
  for (let i = 0; i < intake.needs.length; i++) {
    await browser.$("[data-testid=add-need]").click();
    const rows = await browser.$$("[data-testid=need-row] input");
    await rows[i * 2].clearValue();
    await rows[i * 2].setValue(intake.needs[i].id);
    await rows[i * 2 + 1].setValue(intake.needs[i].text);
  }
  await screenshot(browser, "30-prep-intake");
  await browser.$("[data-testid=intake-submit]").click();

  const title = await browser.$("[data-testid=prep-title]");
  await title.waitForDisplayed({ timeout: 10000 });
  assert.equal(await title.getText(), intake.title);
  await waitForState("intake", /valid/);
  assert.match(await (await browser.$("[data-testid=prep-lock]")).getText(), /hold the edit lease/);
  assert.match(await stateOf("scope"), /empty/);

  // d drafts; the progress of the run is shown while it runs.
  await browser.keys("d");
  const progress = await browser.$("[data-testid=draft-progress]");
  await progress.waitForDisplayed({ timeout: 10000 });
  await browser.waitUntil(async () => /Step \d+ of \d+/.test(await progress.getText()), {
    timeout: 15000,
    timeoutMsg: "the progress names the step",
  });
  assert.match(await progress.getText(), /tokens/);
  await screenshot(browser, "31-prep-drafting-progress");
  await progress.waitForDisplayed({ reverse: true, timeout: 90000 });
  assert.match(await (await browser.$("[data-testid=run-status]")).getText(), /done .* critic cycles 3 \(not converged\)/s);
  assert.match(await (await browser.$("[data-testid=meter-tokens]")).getText(), / of 400,000$/);
  assert.ok((await browser.$$("[data-testid=finding]")).length >= 3, "the critic's findings are listed");
  // A finding left to the buyer is dismissed with a reason (the command goes through the app's capability).
  const dismissible = await browser.$("[data-testid=dismiss-finding]");
  await dismissible.click();
  const reason = await browser.$("[data-testid=dismiss-reason]");
  await reason.waitForDisplayed({ timeout: 5000 });
  await reason.setValue("Covered by our framework agreement.");
  await browser.keys("Enter");
  const dismissal = await browser.$("[data-testid=dismissal]");
  await dismissal.waitForDisplayed({ timeout: 10000 });
  assert.match(await dismissal.getText(), /Covered by our framework agreement\./);
  await waitForState("criteria", /invalid/);
  await waitForState("pricing", /invalid/);

  // The criteria's weights sum to 95 %: the error sits at the total, where the weights are.
  await browser.keys("4");
  const weightErrors = await browser.$("[data-testid=weight-errors]");
  await weightErrors.waitForDisplayed({ timeout: 5000 });
  assert.match(await weightErrors.getText(), /sum to 9500 basis points/);
  assert.equal(await (await browser.$("[data-testid=weight-total]")).getText(), "95.00 %");
  await screenshot(browser, "32-prep-criteria-invalid");
  // Fix it by hand: C2's weight 45 → 50, then Ctrl+Enter saves and validates.
  const weight = await cell("criterion-row", 1, "weight");
  await weight.click();
  await weight.clearValue();
  await weight.setValue("50");
  assert.equal(await (await browser.$("[data-testid=weight-total]")).getText(), "100.00 %");
  await browser.keys(["Control", "Enter"]);
  await waitForState("criteria", /^valid/);
  assert.equal(await browser.$("[data-testid=weight-errors]").isExisting(), false);
  // What depends on the criteria is stale now (its errors are not current): v validates it again.
  assert.match(await stateOf("pricing"), /stale/);
  assert.match(await (await browser.$("[data-testid=prep-notice]")).getText(), /stale now: validate \(v\)/);
  await leaveField();
  await browser.keys("v");
  await waitForState("pricing", /invalid/);

  // The open pricing line: its error is under its row; give it a quantity and a plain description.
  await browser.keys("5");
  const rowErrors = await browser.$("[data-testid=pricing-editor] [data-testid=row-errors]");
  await rowErrors.waitForDisplayed({ timeout: 5000 });
  assert.match(await rowErrors.getText(), /pricing line P-02/);
  const description = await cell("pricing-row", 1, "description");
  await description.click();
  await description.clearValue();
  await description.setValue("On-site visit");
  const quantity = await cell("pricing-row", 1, "quantity");
  await quantity.clearValue();
  await quantity.setValue("200");
  await browser.keys(["Control", "Enter"]);
  await waitForState("pricing", /^valid/);

  // Editing marked what comes after stale; v validates everything again.
  await leaveField();
  await browser.keys("v");
  for (const kind of ["intake", "scope", "requirements", "criteria", "pricing", "milestones"]) await waitForState(kind, /^valid/);
  await screenshot(browser, "33-prep-fixed-and-valid");

  // Approve each artifact: a approves exactly the version shown beside the button.
  for (const [i, kind] of ["intake", "scope", "requirements", "criteria", "pricing", "milestones"].entries()) {
    await browser.keys(String(i + 1));
    const shown = await (await browser.$("[data-testid=content-hash]")).getText();
    await browser.keys("a");
    await waitForState(kind, /^approved/);
    assert.match(await (await browser.$("[data-testid=approved-note]")).getText(), new RegExp(`version ${shown}`));
  }
  await browser.$("[data-testid=precheck-ready]").waitForDisplayed({ timeout: 5000 });

  // Export through the save path: PDF, DOCX and the OCDS release.
  for (const [format, file] of [["pdf", "\\.pdf"], ["docx", "\\.docx"], ["ocds", " ocds\\.json"]]) {
    await browser.$(`[data-testid=export-${format}]`).click();
    const saved = new RegExp(`^Saved .*${file} \\(`);
    await browser.waitUntil(async () => saved.test(await browser.$("[data-testid=publish-notice]").getText().catch(() => "")), {
      timeout: 20000,
      timeoutMsg: `${format} export saved`,
    });
  }
  await screenshot(browser, "34-prep-approved-and-exported");
  const pdf = fs.readFileSync(path.join(saveDir, `${intake.title}.pdf`));
  assert.equal(pdf.subarray(0, 5).toString(), "%PDF-");
  const text = execFileSync("pdftotext", ["-layout", path.join(saveDir, `${intake.title}.pdf`), "-"], { encoding: "utf8" });
  assert.match(text, /Request for proposals: IT service desk for\s+schools/);
  assert.match(text, /Instructions to bidders/);
  assert.match(text, /Form B/);
  assert.match(text, /50\.00 %/);
  assert.match(text, /On-site visit/);
  const docx = fs.readFileSync(path.join(saveDir, `${intake.title}.docx`));
  assert.equal(docx.subarray(0, 2).toString(), "PK");
  const release = JSON.parse(fs.readFileSync(path.join(saveDir, `${intake.title} ocds.json`), "utf8"));
  assert.deepEqual(release.tag, ["tender"]);
  assert.equal(release.tender.items.length, 2);
  assert.equal(release.tender.milestones.length, 6);

  // Publishing goes through the store's gate under this session; the package is read only afterwards.
  await browser.$("[data-testid=publish-button]").click();
  await browser.waitUntil(async () => /Published through the publish gate/.test(await browser.$("[data-testid=publish-notice]").getText().catch(() => "")), {
    timeout: 10000,
    timeoutMsg: "published",
  });
  assert.equal(await (await browser.$("[data-testid=prep-status]")).getText(), "published");
  assert.match(await (await browser.$("[data-testid=prep-lock]")).getText(), /Published: read only/);
  await screenshot(browser, "35-prep-published");

  // The store agrees: published, every artifact approved, the pre-check empty.
  const list = JSON.parse(pactwise(["prep", "list", "--json"]));
  const id = list.packages[0].id;
  const shown = JSON.parse(pactwise(["prep", "show", id, "--json"]));
  assert.equal(shown.package.status, "published");
  assert.deepEqual(shown.package.precheck, []);
  for (const kind of ["intake", "scope", "requirements", "criteria", "pricing", "milestones"]) {
    assert.equal(shown.package.package.artifacts[kind].state.status, "approved", kind);
  }
});
