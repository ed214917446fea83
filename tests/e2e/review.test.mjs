// The review journey in the real app: import a text PDF and a scan through the UI and watch the progress finish,
// open the first document of the queue, confirm an item with the keyboard, correct another by selecting words on
// the page, finalize, restart the app and find the same state. Screenshots of the queue and the review view land
// in tests/e2e/output/.
import { test, after, afterEach } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { freshDataDir, launch, screenshot } from "./app.mjs";

const dataDir = freshDataDir("review");
const inbox = freshDataDir("review-inbox");
let browser;

/** The fixture generator sits beside the app binary (cargo build -p pactwise-extract). */
function generateFixtures() {
  const bin = path.join(path.dirname(process.env.PACTWISE_APP ?? ""), "pactwise-extract");
  assert.ok(fs.existsSync(bin), `${bin} is missing: build it with cargo build -p pactwise-extract`);
  execFileSync(bin, ["fixtures", inbox], { stdio: ["ignore", "ignore", "inherit"] });
  return { text: path.join(inbox, "text.pdf"), scan: path.join(inbox, "scanned.pdf") };
}

after(async () => {
  await browser?.deleteSession().catch(() => {});
});

afterEach(async (t) => {
  if (browser && t.passed === false) await screenshot(browser, "failure-review").catch(() => {});
});

/** Records every progress text the UI shows while importing (the status line and the import bar). */
async function watchProgress() {
  await browser.execute(() => {
    window.__progress = [];
    const seen = () => {
      for (const el of document.querySelectorAll("[data-testid=import-progress], footer .busy")) {
        const text = el.textContent.replace(/\s+/g, " ").trim();
        if (text && window.__progress[window.__progress.length - 1] !== text) window.__progress.push(text);
      }
    };
    new MutationObserver(seen).observe(document.body, { subtree: true, childList: true, characterData: true });
  });
}

async function importPath(file) {
  const field = await browser.$("[data-testid=import-path]");
  await field.waitForEnabled({ timeout: 60000 });
  await field.setValue(file);
  await browser.keys("Enter");
  // The progress bar appears, then goes when the import (extraction, OCR, pipeline) is done.
  await browser.waitUntil(async () => !(await browser.$("[data-testid=import-progress]").isExisting()), {
    timeout: 120000,
    timeoutMsg: `the import of ${file} did not finish`,
  });
  const notice = await browser.$("[data-testid=notice]");
  await notice.waitForDisplayed({ timeout: 10000 });
  return notice.getText();
}

const selectedItem = () =>
  browser.execute(() => document.querySelector('[data-testid=checklist-item][aria-selected="true"]')?.getAttribute("data-item-id"));

const itemText = (id) =>
  browser.execute((i) => document.querySelector(`[data-item-id="${i}"]`)?.textContent ?? "", id);

/** Runs of one line of page 1's text layer, with their rectangles in the viewport. */
async function lineOfRuns() {
  return browser.execute(() => {
    const spans = Array.from(document.querySelectorAll('[data-page="1"] [data-testid=text-layer] span[data-start]'));
    const lines = new Map();
    for (const s of spans) {
      const r = s.getBoundingClientRect();
      const key = Math.round(r.top / 4);
      if (!lines.has(key)) lines.set(key, []);
      lines.get(key).push({ start: Number(s.dataset.start), end: Number(s.dataset.end), text: s.textContent, x: r.left, y: r.top, w: r.width, h: r.height });
    }
    // A line in the visible part of the pane with at least six words.
    const pane = document.querySelector("[data-testid=contract-pages]").getBoundingClientRect();
    return [...lines.values()].find((l) => l.length >= 6 && l[0].y > pane.top + 20 && l[0].y < pane.bottom - 40) ?? null;
  });
}

test("import, review by keyboard and selection, finalize, and the same state after a restart", async () => {
  const files = generateFixtures();
  browser = await launch(dataDir);
  await browser.$("[data-testid=queue-empty]").waitForDisplayed({ timeout: 15000 });

  // Import both files in Documents and watch the progress through extraction (OCR for the scan) and the pipeline.
  await browser.keys(["Alt", "2"]);
  await browser.$("[data-testid=empty]").waitForDisplayed({ timeout: 15000 });
  await watchProgress();
  assert.match(await importPath(files.text), /1 imported/);
  assert.match(await importPath(files.scan), /1 imported/);
  const progress = await browser.execute(() => window.__progress);
  assert.ok(progress.some((p) => /reading page \d+ of \d+/.test(p)), `page progress was shown: ${JSON.stringify(progress)}`);
  assert.ok(progress.some((p) => /classifying and pre-filling/.test(p)), `the pipeline stage was shown: ${JSON.stringify(progress)}`);
  assert.equal(await browser.$("[data-testid=import-progress]").isExisting(), false, "progress finished");

  // The queue: both documents wait for a person (offline, the keyword classifier is never trusted alone).
  await browser.keys(["Alt", "1"]);
  await browser.waitUntil(async () => (await browser.$$("[data-testid=queue-row]")).length === 2, {
    timeout: 10000,
    timeoutMsg: "both documents in the queue",
  });
  const firstRow = await browser.$("[data-testid=queue-row]");
  const queueText = await firstRow.getText();
  assert.match(queueText, /\.pdf/);
  await screenshot(browser, "10-review-queue");
  const firstName = await browser.execute(() => document.querySelector("[data-testid=queue-row] td.name").textContent.trim());

  // Open the first document with Enter.
  await browser.keys("Enter");
  await browser.$("[data-testid=review]").waitForDisplayed({ timeout: 10000 });
  await browser.waitUntil(async () => (await browser.$$("[data-testid=checklist-item]")).length > 5, {
    timeout: 20000,
    timeoutMsg: "the checklist is drawn",
  });
  // The first page is drawn from the backend's renderer, with a text layer over it (for the text PDF) or as text.
  await browser.waitUntil(
    () =>
      browser.execute(() => {
        const img = document.querySelector('[data-page="1"] img');
        return img ? img.complete && img.naturalWidth > 0 : !!document.querySelector('[data-page="1"] [data-testid=page-text]');
      }),
    { timeout: 20000, timeoutMsg: "page 1 is drawn" },
  );
  // The view marks when its first page and checklist are painted (what bench/review-ui.sh measures).
  await browser.waitUntil(
    () => browser.execute(() => performance.getEntriesByName("review:open-to-first-page-and-checklist").length > 0),
    { timeout: 20000, timeoutMsg: "the review reported its first page and checklist drawn" },
  );
  await screenshot(browser, "11-review-view");

  // Confirm the selected item with the keyboard.
  const confirmed = await selectedItem();
  assert.ok(confirmed, "an item is selected when the review opens");
  await browser.keys("c");
  await browser.waitUntil(async () => /Confirmed/.test(await itemText(confirmed)), {
    timeout: 10000,
    timeoutMsg: `item ${confirmed} shows as confirmed`,
  });

  // Correct the next item: e opens the status menu, the quote is words selected on the page with the mouse.
  await browser.keys("j");
  await browser.waitUntil(async () => (await selectedItem()) !== confirmed, { timeout: 5000 });
  const corrected = await selectedItem();
  await browser.keys("e");
  await browser.$("[data-testid=correct-form]").waitForDisplayed({ timeout: 5000 });
  await browser.execute(() => document.querySelector("[data-testid=contract-pages]").scrollTo(0, 0));
  // Page 1's text layer is laid out once its page is drawn; wait for a line of it in view.
  let line = null;
  await browser
    .waitUntil(async () => (line = await lineOfRuns()) !== null, { timeout: 10000 })
    .catch(() => {});
  assert.ok(line, "page 1 has a line of words in its text layer");
  const from = line[1];
  const to = line[4];
  await browser
    .action("pointer", { parameters: { pointerType: "mouse" } })
    .move({ x: Math.round(from.x + 1), y: Math.round(from.y + from.h / 2) })
    .down()
    .move({ x: Math.round(to.x + to.w - 1), y: Math.round(to.y + to.h / 2), duration: 200 })
    .up()
    .perform();
  const selectionText = await browser.$("[data-testid=selection-text]");
  await selectionText.waitForDisplayed({ timeout: 5000 });
  const quote = await selectionText.getText();
  assert.match(quote, new RegExp(from.text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")), `the selection starts at “${from.text}”`);
  // Status 3 = Absent from the menu by keyboard, a note, then Ctrl+Enter saves.
  await browser.execute(() => document.querySelector("[data-testid=correct-status]").focus());
  await browser.keys("3");
  await browser.$("[data-testid=correct-note]").setValue("Checked against the signed copy.");
  await browser.keys(["Control", "Enter"]);
  await browser.waitUntil(async () => !(await browser.$("[data-testid=correct-form]").isExisting()), {
    timeout: 10000,
    timeoutMsg: "the correction was saved",
  });
  assert.match(await itemText(corrected), /Absent/);
  assert.match(await itemText(corrected), /Confirmed/);
  assert.equal(await browser.$("[data-testid=citation-quote] q").getText(), quote);
  // The new quote is highlighted on its page.
  assert.ok(await browser.execute(() => document.querySelectorAll('[data-page="1"] .mark.current').length > 0));
  await screenshot(browser, "12-review-corrected");

  // Finalize: every critical item must be confirmed first; the dialog lists them, each one a click away.
  for (let round = 0; round < 100; round++) {
    const status = await browser.$("[data-testid=finalize-status]").getText();
    if (/Every critical item is confirmed/.test(status)) break;
    await browser.keys("f");
    const blocked = await browser.$("[data-testid=finalize-blocked] button");
    await blocked.waitForDisplayed({ timeout: 5000 });
    await blocked.click();
    await browser.$("[data-testid=finalize-dialog]").waitForExist({ reverse: true, timeout: 5000 });
    const id = await selectedItem();
    await browser.keys("c");
    await browser.waitUntil(async () => /Confirmed/.test(await itemText(id)), { timeout: 10000 });
  }
  await browser.keys("f");
  await browser.$("[data-testid=finalize-dialog]").waitForDisplayed({ timeout: 5000 });
  await browser.$("[data-testid=vendor-none]").click();
  await screenshot(browser, "13-finalize");
  await browser.$("[data-testid=finalize-submit]").click();
  const finalized = await browser.$("[data-testid=finalized]");
  await finalized.waitForDisplayed({ timeout: 10000 });
  assert.match(await finalized.getText(), /Finalized by/);

  // Back to the queue: the finalized document has left it.
  await browser.keys("Escape");
  await browser.waitUntil(async () => (await browser.$$("[data-testid=queue-row]")).length === 1, { timeout: 10000 });

  // Restart on the same data directory: the same state.
  await browser.deleteSession();
  browser = await launch(dataDir);
  await browser.waitUntil(async () => (await browser.$$("[data-testid=queue-row]")).length === 1, {
    timeout: 15000,
    timeoutMsg: "one document still waits in the queue after the restart",
  });
  assert.doesNotMatch(await browser.$("[data-testid=queue-row]").getText(), new RegExp(firstName.replace(/\./g, "\\.")));
  await browser.keys(["Alt", "2"]);
  const row = await browser.$(`//tr[@data-testid="document-row"][td[normalize-space()="${firstName}"]]`);
  await row.waitForDisplayed({ timeout: 10000 });
  await row.$("[data-testid=open-review]").click();
  await browser.$("[data-testid=finalized]").waitForDisplayed({ timeout: 15000 });
  await browser.waitUntil(async () => /Confirmed/.test(await itemText(confirmed)), { timeout: 10000 });
  assert.match(await itemText(corrected), /Absent/);
  await browser.execute((id) => document.querySelector(`[data-item-id="${id}"]`).click(), corrected);
  await browser.waitUntil(async () => (await browser.$("[data-testid=citation-quote] q").isExisting()), { timeout: 5000 });
  assert.equal(await browser.$("[data-testid=citation-quote] q").getText(), quote);
  assert.match(await browser.$("[data-testid=citation]").getText(), /Checked against the signed copy\./);
  await screenshot(browser, "14-after-restart");

  // The scan still waits in the queue; its pages are images with a text layer from the OCR word boxes.
  await browser.keys(["Alt", "1"]);
  await browser.$("[data-testid=queue-row]").waitForDisplayed({ timeout: 10000 });
  await browser.execute(() => performance.clearMeasures());
  await browser.keys("Enter");
  await browser.waitUntil(
    () => browser.execute(() => performance.getEntriesByName("review:open-to-first-page-and-checklist").length > 0),
    { timeout: 30000, timeoutMsg: "the scan's review reported its first page drawn" },
  );
  const ocr = await browser.execute(() => ({
    badge: document.querySelector('[data-page="1"] .badge')?.textContent ?? "",
    words: document.querySelectorAll('[data-page="1"] [data-testid=text-layer] span[data-start]').length,
  }));
  assert.equal(ocr.badge, "OCR");
  assert.ok(ocr.words > 50, `the OCR text layer has words (${ocr.words})`);
  await screenshot(browser, "15-review-scan");
});
