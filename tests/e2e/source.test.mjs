// PactWise Source end to end: the buyer's desktop app and a vendor in a real browser (headless Chromium), against the
// real sync service (with Source set up and its clock movable). Bea publishes her published Prep Studio package as a
// tender from Prep Studio ("Publish as tender"; the opening key stays in her keychain); Bob, a second member, approves
// it from the command line on his own data directory; Bea invites a vendor in the Tenders area and the link is shown
// with a Copy button. In the browser, the vendor opens that link, creates a password, sees only that tender and asks a
// question; Bea publishes the answer from the desktop; the vendor reads it (without the asker's name), submits answers,
// files (a PDF and a DOCX, uploaded in chunks) and prices, then replaces the submission. The service's clock passes
// the deadline; on the desktop Bea opens the technical envelopes (the replacement's), scores from the grid, locks,
// opens the prices (totals from code), awards with a reason and exports the OCDS record (validated against the OCDS
// schema by the `ocds_check` example) and the audit trail (verified).
import { test, before, after, afterEach } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { freshDataDir, launch, screenshot } from "./app.mjs";
import { execFileSync } from "node:child_process";
import { chooseFiles, fillByLabel, fixtures, openBrowser, openTheTender, requireBrowser, text, waitForStatus } from "./browser.mjs";
import { desktopCli, syncService } from "./service.mjs";

const service = syncService("source-sync-server", { source: true });
const ann = desktopCli(freshDataDir("source-ann"));
const bea = desktopCli(freshDataDir("source-bea"));
const bob = desktopCli(freshDataDir("source-bob"));
const PASSWORD = "a-long-password-for-the-e2e-test";
let endpoint;
let app;
let packageId;
let vendor = null;

async function shot(name) {
  await app.execute(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
  await screenshot(app, name);
}

function writeJson(dir, name, value) {
  const file = path.join(dir, name);
  fs.writeFileSync(file, JSON.stringify(value));
  return file;
}

/** A package written by hand on Bea's desktop (no model), validated, approved part by part and published. */
function publishedPackage() {
  const dir = freshDataDir("source-artifacts");
  const tomorrow = new Date(Date.now() + 86400000).toISOString().slice(0, 10);
  const intake = {
    title: "Fleet telematics", buyer: "City of Northbridge", brief: "GPS tracking for 120 vehicles.",
    needs: [{ id: "N1", text: "Live vehicle positions" }], category: "services", currency: "EUR",
    budget_ceiling_minor: 18000000,
    timeline: { publication: tomorrow, question_days: 2, submission_days: 5, evaluation_days: 10, award_days: 5, contract_start_days: 10 },
    holidays: [],
  };
  const view = bea.run(["prep", "new", "--intake", writeJson(dir, "intake.json", intake)]).package;
  const id = view.id;
  const artifacts = {
    scope: { summary: "Telematics for 120 vehicles.", in_scope: ["Devices"], out_of_scope: ["Repairs"], deliverables: ["Installed devices"], need_ids: ["N1"] },
    requirements: { items: [
      { code: "R-01", text: "EU hosting", kind: "mandatory", need_ids: [], measure: null },
      { code: "R-02", text: "Position updates", kind: "scored", need_ids: ["N1"], measure: { metric: "update interval", threshold: "<= 30 s", verification: "test" } },
    ] },
    criteria: { criteria: [{ id: "C1", name: "Tracking", description: "Tracking quality", weight_bp: 10000, requirement_codes: ["R-02"] }] },
    pricing: { currency: "EUR", lines: [{ code: "P-01", description: "Device", unit: "vehicle", quantity: 120, basis: "per_unit", open_amount: false }] },
    milestones: { items: view.milestone_preview.map((m) => ({ kind: m.kind, date: m.date, rationale: "Enough time." })) },
  };
  for (const [artifact, content] of Object.entries(artifacts)) {
    bea.run(["prep", "edit", id, "--artifact", artifact, "--file", writeJson(dir, `${artifact}.json`, content)]);
  }
  let shown = bea.run(["prep", "validate", id]).package;
  for (const artifact of ["intake", "scope", "requirements", "criteria", "pricing", "milestones"]) {
    shown = bea.run(["prep", "approve", id, "--artifact", artifact, "--hash", shown.package.artifacts[artifact].content_hash]).package;
  }
  assert.equal(bea.run(["prep", "publish", id]).package.status, "published");
  return id;
}

before(async () => {
  service.admin(["create-org", "--slug", "alpha", "--name", "Alpha Council"]);
  service.admin(["create-user", "--org", "alpha", "--email", "ann@alpha.example", "--role", "admin"], `${PASSWORD}\n`);
  endpoint = await service.start();
  ann.run(["sync", "sign-in", "--server", endpoint, "--org", "alpha", "--email", "ann@alpha.example"], {
    PACTWISE_SYNC_PASSWORD: PASSWORD,
  });
  for (const [desk, email, name] of [[bea, "bea@alpha.example", "Bea Buyer"], [bob, "bob@alpha.example", "Bob Buyer"]]) {
    const added = ann.run(["members", "add", "--email", email, "--name", name, "--role", "buyer"]);
    desk.run(["sync", "sign-in", "--code", "--server", endpoint, "--org", "alpha", "--email", email], {
      PACTWISE_SYNC_CODE: added.code,
      PACTWISE_SYNC_PASSWORD: `${PASSWORD}-${name}`,
    });
  }
  packageId = publishedPackage();
  app = await launch(bea.dataDir);
});

after(async () => {
  await vendor?.close();
  await app?.deleteSession().catch(() => {});
  service.stop();
});

afterEach(async (t) => {
  if (t.passed === false && app) await screenshot(app, "failure-source").catch(() => {});
  if (t.passed === false && vendor) await vendor.shot("failure").catch(() => {});
});

test("a tender from Prep Studio to the award: the vendor in a browser, opened only on the buyer's desktop after the service's deadline", async (t) => {
  if (!requireBrowser(t)) return;
  const files = fixtures();
  // Prep Studio: the published package becomes a tender; it waits for a second member.
  await app.keys(["Alt", "5"]);
  await app.$("[data-testid=prep-row]").waitForDisplayed({ timeout: 15000 });
  await app.$("[data-testid=prep-row]").click();
  await app.$("[data-testid=publish-tender]").waitForDisplayed({ timeout: 15000 });
  await app.$("[data-testid=publish-tender]").click();
  let said = "";
  await app.waitUntil(async () => {
    said = await app.$("[data-testid=publish-notice]").getText().catch(() => "");
    return /is a tender now \(awaiting second approval\)/.test(said);
  }, { timeout: 20000 }).catch(async () => {
    const html = await app.execute(() => document.querySelector("[data-testid=publish-notice]")?.outerHTML ?? "none");
    assert.fail(`the package was not published as a tender; the notice said: ${said} ${html}`);
  });
  await shot("60-source-published-as-tender");

  // Bob approves it from his command line (he cannot open it: the key is on Bea's desktop).
  const listed = bob.run(["source", "list"]);
  assert.equal(listed.length, 1);
  assert.equal(listed[0].status, "Awaiting second approval");
  assert.equal(listed[0].key_here, false);
  const tender = bob.run(["source", "approve", listed[0].id]);
  assert.equal(tender.status, "Open");

  // The Tenders area (Alt+0): status in words, invite with the link and a Copy button.
  await app.keys(["Alt", "0"]);
  await app.$("[data-testid=tenders]").waitForDisplayed({ timeout: 10000 });
  await app.keys("r");
  await app.$("[data-testid=invite-name]").waitForDisplayed({ timeout: 15000 });
  const heading = await app.$("section[aria-label=Tender] h2").getText();
  assert.match(heading, /Fleet telematics\s+Open/);
  await app.keys("i");
  await app.$("[data-testid=invite-name]").setValue("Acme Telematics Ltd");
  await app.$("[data-testid=invite-email]").setValue("bids@acme.example");
  await app.keys("Enter");
  const linkField = await app.$("[data-testid=invite-link] input");
  await linkField.waitForDisplayed({ timeout: 10000 });
  const link = await linkField.getValue();
  assert.ok(link.startsWith(`${endpoint}/source/invitation#pwi_`), link);
  assert.ok(await app.$("[data-testid=invite-link]").$("button=Copy").isDisplayed());
  await app.$("[data-testid=tender-invited]").waitUntil(async function () {
    return (await this.getText()) === "1";
  }, { timeout: 10000, timeoutMsg: "the invitation is not counted" });
  await shot("61-source-invitation-link");
  const page = await app.$("section[aria-label=Tender]").getText();
  assert.doesNotMatch(page, /awaiting_approval|technical_opened|[0-9a-f]{8}-[0-9a-f]{4}-/, "no enum names or ids on screen");

  // In the browser: the invitation link, a password, only the invited tender, and a question.
  vendor = await openBrowser("source-vendor");
  const { browser } = vendor;
  await browser.url(link);
  await (await browser.$("h2=Join the tender")).waitForExist({ timeout: 10000 });
  await fillByLabel(browser, "Email", "bids@acme.example");
  await fillByLabel(browser, "Password", "acme-vendor-password-1");
  await (await browser.$("button=Join")).click();
  await (await browser.$("h2=Your tenders")).waitForExist({ timeout: 10000 });
  const listedThere = await browser.execute(() => Array.from(document.querySelectorAll("main li a"), (a) => a.textContent));
  assert.deepEqual(listedThere, ["Fleet telematics"], "only the tender the vendor was invited to");
  await openTheTender(browser, "Fleet telematics");
  await fillByLabel(browser, "Ask a question", "Is a 60 s position interval acceptable?");
  await (await browser.$("button=Send the question")).click();
  await waitForStatus(browser, /question was sent/);
  await vendor.shot("01-question-asked");

  // Bea answers it on the desktop (Refresh: the focus is still in the invitation's form); the vendor reads the
  // answer, without the asker's name.
  await app.$("button=Refresh").click();
  await app.$("[data-testid=tender-joined]").waitUntil(async function () {
    return (await this.getText()) === "1";
  }, { timeout: 15000, timeoutMsg: "the vendor's joining is not counted" });
  const answerBox = await app.$("section[aria-label=Tender] ul.questions textarea");
  await answerBox.waitForDisplayed({ timeout: 15000 });
  assert.match(await app.$("section[aria-label=Tender] ul.questions").getText(), /60 s position interval acceptable\?\s+\(Acme Telematics Ltd\)/);
  await answerBox.setValue("No: at most 30 s, as R-02 says.");
  await app.keys("Enter");
  await app.$("section[aria-label=Tender] ul.questions p.answer").waitForDisplayed({ timeout: 15000 });
  await shot("62-source-question-answered");
  await (await browser.$("button=All tenders")).click();
  await openTheTender(browser, "Fleet telematics");
  const qa = await text(browser, "section[aria-labelledby=q-title]");
  assert.match(qa, /No: at most 30 s, as R-02 says\./);
  assert.doesNotMatch(qa, /Acme/, "answers are published without the asker's name");

  // A submission with files and prices, then a replacement: the last one counts.
  await fillByLabel(browser, "R-01", "Hosted in Frankfurt (EU).");
  await fillByLabel(browser, "R-02", "Positions every 20 seconds.");
  await fillByLabel(browser, "P-01", "123.45");
  await chooseFiles(browser, [files.file("offer.pdf"), files.file("approach.docx")]);
  await (await browser.$("button=Submit")).click();
  await waitForStatus(browser, /Submission 1 received and sealed/, 60000);
  await fillByLabel(browser, "R-01", "Hosted in Frankfurt (EU), second offer.");
  await fillByLabel(browser, "P-01", "119.90");
  await chooseFiles(browser, [files.file("offer.pdf")]);
  await (await browser.$("button=Submit")).click();
  await waitForStatus(browser, /Submission 2 received and sealed/, 60000);
  await vendor.shot("02-replaced");
  const id = tender.id;
  await app.keys("r");
  await app.$("[data-testid=tender-submissions]").waitUntil(async function () {
    return /^1 /.test(await this.getText());
  }, { timeout: 10000, timeoutMsg: "the submission is not counted" });
  assert.equal(await app.$("[data-testid=open-technical]").isExisting(), false, "nothing opens before the deadline");

  // The service's clock passes the deadline.
  const close = Date.parse(tender.submissions_close);
  service.moveClock(Math.ceil((close - Date.now()) / 1000) + 120);
  await app.keys("r");
  await app.$("[data-testid=open-technical]").waitForDisplayed({ timeout: 15000 });
  assert.match(await app.$("section[aria-label=Tender] h2").getText(), /Closed/);
  await app.keys("o");

  // The scoring grid: points and a reason per vendor and criterion, by keyboard.
  const points = await app.$("[aria-label='Points for Acme Telematics Ltd on Tracking']");
  await points.waitForDisplayed({ timeout: 20000 });
  const submission = await app.$("section[aria-label=Tender] details.submission");
  await submission.$("summary").click();
  const opened = await submission.getText();
  assert.match(opened, /replaced 1×; the last counts/);
  assert.match(opened, /Hosted in Frankfurt \(EU\), second offer\./, "the replacement's answers");
  assert.match(opened, /offer\.pdf/);
  assert.doesNotMatch(opened, /approach\.docx/, "the first submission's files do not count");
  // The vendor's file, saved from the opened envelope, is the very file the vendor sent.
  await app.$("button[aria-label='Save offer.pdf from Acme Telematics Ltd']").click();
  const savedFile = path.join(process.env.PACTWISE_SAVE_DIR, "offer.pdf");
  await app.waitUntil(async () => fs.existsSync(savedFile), { timeout: 15000, timeoutMsg: "the vendor's file was not saved" });
  assert.ok(fs.readFileSync(savedFile).equals(fs.readFileSync(files.file("offer.pdf"))), "byte for byte");
  await points.setValue("8");
  await app.$("[aria-label='Reason for Acme Telematics Ltd on Tracking']").setValue("Meets R-02 as written");
  await app.keys("Enter");
  await app.$("[data-testid=tender-notice]").waitUntil(async function () {
    return (await this.getText()) === "Score recorded.";
  }, { timeout: 10000, timeoutMsg: "the score was not recorded" });
  await shot("63-source-scores");
  await app.$("[data-testid=lock]").click();
  await app.$("[data-testid=open-price]").waitForDisplayed({ timeout: 10000 });
  await app.$("[data-testid=open-price]").click();

  // The totals are code's figures; the award is a person's, with a reason.
  const totals = await app.$("[data-testid=totals]");
  await totals.waitUntil(async function () {
    return /14,388\.00 EUR/.test(await this.getText());
  }, { timeout: 15000, timeoutMsg: "the price total is not shown" });
  assert.match(await totals.getText(), /80\.00/);
  await app.$("[data-testid=award-vendor]").selectByVisibleText("Acme Telematics Ltd");
  await app.$("[data-testid=award-reason]").setValue("Highest technical total within the budget");
  await app.keys("Enter");
  await app.$("[data-testid=tender-notice]").waitUntil(async function () {
    return /Awarded to Acme Telematics Ltd/.test(await this.getText());
  }, { timeout: 15000, timeoutMsg: "the award was not recorded" });
  await shot("64-source-awarded");

  // Exports: the OCDS record (its shape) and the audit trail (verified).
  await app.$("[data-testid=export-ocds]").click();
  const saved = path.join(process.env.PACTWISE_SAVE_DIR, "fleet-telematics-ocds.json");
  await app.waitUntil(async () => fs.existsSync(saved), { timeout: 15000, timeoutMsg: "the OCDS record was not saved" });
  const record = JSON.parse(fs.readFileSync(saved, "utf8"));
  assert.ok(record.uri && record.publishedDate && record.version === "1.1", "a release package");
  const tags = record.releases.map((r) => r.tag[0]);
  assert.deepEqual(tags, ["tender", "tenderUpdate", "award"]);
  assert.equal(record.releases[1].tender.numberOfTenderers, 1);
  assert.equal(record.releases[2].awards[0].value.amount, 14388);
  const checker = path.join(path.dirname(process.env.PACTWISE_APP ?? ""), "examples", "ocds_check");
  assert.ok(fs.existsSync(checker), `${checker} is missing: run make build`);
  assert.equal(execFileSync(checker, [saved], { encoding: "utf8" }).trim(), "valid", "the OCDS schema accepts it");
  await app.$("[data-testid=export-audit]").click();
  await app.$("[data-testid=tender-notice]").waitUntil(async function () {
    return /the trail is intact/.test(await this.getText());
  }, { timeout: 15000, timeoutMsg: "the audit trail was not verified" });
  assert.ok(fs.existsSync(path.join(process.env.PACTWISE_SAVE_DIR, "fleet-telematics-audit.csv")));
  await shot("65-source-exports");

  // Bob's desktop cannot open it: it is told which desktop keeps the key.
  assert.throws(() => bob.run(["source", "open", id]), (e) => /signed in as bea@alpha\.example/.test(e.stderr + JSON.stringify(e.refusal)));
  assert.ok(packageId);
});
