// A real, long, filed contract in the real app, offline: a 68-page distributor agreement from the CUAD set (a PDF
// with a table of contents and a filing line at the foot of every page). The liability item quotes the operative
// clause; a table-of-contents line chosen by hand is questioned before it is kept; finalize shows the agreement date
// from the body and the parties; the exported PDF memo, read back with pdfium, prints every glyph and never joins
// words. Screenshots land in tests/e2e/output/.
import { test, after, afterEach } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { freshDataDir, launch, screenshot } from "./app.mjs";

const dataDir = freshDataDir("contract");
const cli = process.env.PACTWISE_CLI ?? path.join(path.dirname(process.env.PACTWISE_APP ?? ""), "pactwise");
const CONTRACT = "cuad/pdfs/zogenixinc-20190509-10-q-ex-10-2-11663313-ex-10-2-distributor-agreement.pdf";
const CAP = "distributor.risk.liability_cap";
let browser;

/** The shared data folder beside the clone (or PACTWISE_SHARED_DATA), as the Rust tests find it. */
function sharedFile(relative) {
  const roots = [process.env.PACTWISE_SHARED_DATA, path.resolve("../../../shared/data"), path.resolve("../../../../shared/data")];
  const found = roots.filter(Boolean).map((r) => path.join(r, relative)).find((p) => fs.existsSync(p));
  assert.ok(found, `${relative} is missing: put the shared data beside the clone or set PACTWISE_SHARED_DATA`);
  return found;
}

after(async () => {
  await browser?.deleteSession().catch(() => {});
});

afterEach(async (t) => {
  if (browser && t.passed === false) await screenshot(browser, "failure-contract").catch(() => {});
});

const itemText = (id) => browser.execute((i) => document.querySelector(`[data-item-id="${i}"]`)?.textContent ?? "", id);
const selectedItem = () =>
  browser.execute(() => document.querySelector('[data-testid=checklist-item][aria-selected="true"]')?.getAttribute("data-item-id"));

async function selectItem(id) {
  await browser.execute((i) => document.querySelector(`[data-item-id="${i}"]`).click(), id);
  await browser.waitUntil(async () => (await selectedItem()) === id, { timeout: 5000, timeoutMsg: `${id} is selected` });
}

/** Confirms the selected item with c (twice when the pane questions its quote first). */
async function confirmSelected() {
  const id = await selectedItem();
  await browser.keys("c");
  await browser.waitUntil(
    async () => /Confirmed/.test(await itemText(id)) || (await browser.$("[data-testid=confirm-warnings]").isExisting()),
    { timeout: 10000, timeoutMsg: `${id} is confirmed or questioned` },
  );
  if (!/Confirmed/.test(await itemText(id))) {
    await browser.keys("c");
    await browser.waitUntil(async () => /Confirmed/.test(await itemText(id)), { timeout: 10000 });
  }
}

test("a filed 68-page contract: operative quotes, a questioned table-of-contents quote, body dates and parties, a clean PDF memo", async () => {
  const pdf = sharedFile(CONTRACT);
  browser = await launch(dataDir);
  await browser.$("[data-testid=queue-empty]").waitForDisplayed({ timeout: 15000 });

  // The organization is Zogenix: the other party is the counterparty.
  await browser.keys(["Alt", "7"]);
  const names = await browser.$("[data-testid=own-names]");
  await names.waitForDisplayed({ timeout: 10000 });
  await names.setValue("Zogenix, Inc.");
  await browser.$("[data-testid=own-names-save]").click();
  await browser.waitUntil(async () => /saved/i.test(await browser.$(".group .ok").getText().catch(() => "")), {
    timeout: 10000,
    timeoutMsg: "the names are saved",
  });

  // Import through Documents; extraction and the offline pipeline run with progress.
  await browser.keys(["Alt", "2"]);
  const field = await browser.$("[data-testid=import-path]");
  await field.waitForEnabled({ timeout: 60000 });
  await field.setValue(pdf);
  await browser.keys("Enter");
  await browser.waitUntil(async () => !(await browser.$("[data-testid=import-progress]").isExisting()), {
    timeout: 180000,
    timeoutMsg: "the import finished",
  });
  assert.match(await browser.$("[data-testid=notice]").getText(), /1 imported/);

  await browser.keys(["Alt", "1"]);
  await browser.$("[data-testid=queue-row]").waitForDisplayed({ timeout: 15000 });
  await browser.keys("Enter");
  await browser.$("[data-testid=review]").waitForDisplayed({ timeout: 15000 });
  await browser.waitUntil(async () => (await browser.$$("[data-testid=checklist-item]")).length > 20, {
    timeout: 30000,
    timeoutMsg: "the distributor checklist is drawn",
  });

  // The liability item quotes Article 10's operative limitation, deep in the body, not the table of contents.
  await selectItem(CAP);
  const quote = await browser.$("[data-testid=citation-quote]");
  await quote.waitForDisplayed({ timeout: 10000 });
  const quoteText = await quote.getText();
  assert.match(quoteText.toUpperCase(), /SHALL BE ENTITLED TO RECOVER/, quoteText);
  const quotePage = Number(/page (\d+)/.exec(quoteText)?.[1]);
  assert.ok(quotePage > 5, `the quote is in the body (page ${quotePage})`);
  assert.equal(await browser.$("[data-testid=quote-warnings]").isExisting(), false, "nothing to question in it");
  await screenshot(browser, "40-contract-cap-operative");

  // By hand, the table of contents' line "10.5 Limitation of Liability" on page 3 is chosen instead: questioned.
  await browser.keys("e");
  await browser.$("[data-testid=correct-form]").waitForDisplayed({ timeout: 5000 });
  await browser.execute(() => document.querySelector('[data-page="3"]').scrollIntoView());
  let selected = null;
  await browser
    .waitUntil(
      async () =>
        (selected = await browser.execute(() => {
          const spans = Array.from(document.querySelectorAll('[data-page="3"] [data-testid=text-layer] span[data-start]'));
          // The number may come in pieces ("10", ".", "5"): the words after the last piece that reads "5".
          const text = (k) => spans[k]?.textContent.trim();
          const i = spans.findIndex(
            (s, k) => text(k) === "Limitation" && text(k + 2) === "Liability" && /^(10\.5|5)$/.test(text(k - 1) ?? "") && text(k - 3) === "10",
          );
          if (i < 0) return null;
          const range = document.createRange();
          range.setStart(spans[i].firstChild, 0);
          range.setEnd(spans[i + 2].firstChild, spans[i + 2].firstChild.textContent.length);
          const sel = window.getSelection();
          sel.removeAllRanges();
          sel.addRange(range);
          document.dispatchEvent(new Event("selectionchange"));
          return sel.toString();
        })) !== null,
      { timeout: 20000 },
    )
    .catch(() => {});
  if (!selected) {
    const seen = await browser.execute(() =>
      Array.from(document.querySelectorAll('[data-page="3"] [data-testid=text-layer] span[data-start]'))
        .map((s) => s.textContent)
        .join("|")
        .slice(0, 3000),
    );
    assert.fail(`page 3's text layer holds the table of contents' line for 10.5; it holds: ${seen}`);
  }
  const selectionText = await browser.$("[data-testid=selection-text]");
  await selectionText.waitForDisplayed({ timeout: 5000 });
  assert.match(await selectionText.getText(), /Limitation of\s+Liability/);
  await browser.$("[data-testid=correct-save]").click();
  const check = await browser.$("[data-testid=correct-check]");
  await check.waitForDisplayed({ timeout: 10000 });
  assert.match(await check.getText(), /table of contents/);
  await browser.waitUntil(async () => !(await browser.$("[data-testid=citation] [role=status]").isExisting()), {
    timeout: 10000,
    timeoutMsg: "the pane is no longer saving",
  });
  await check.scrollIntoView();
  await screenshot(browser, "41-contract-toc-quote-questioned");
  await browser.keys("Escape");
  await browser.$("[data-testid=correct-form]").waitForExist({ reverse: true, timeout: 5000 });
  assert.equal(await browser.$("[data-testid=citation-quote]").getText(), quoteText, "nothing was saved");

  // Every critical item confirmed, then finalize: the body's agreement date and both parties.
  for (let round = 0; round < 20; round++) {
    const status = await browser.$("[data-testid=finalize-status]").getText();
    if (/Every critical item is confirmed/.test(status)) break;
    await browser.keys("f");
    const blocked = await browser.$("[data-testid=finalize-blocked] button");
    await blocked.waitForDisplayed({ timeout: 5000 });
    await blocked.click();
    await browser.$("[data-testid=finalize-dialog]").waitForExist({ reverse: true, timeout: 5000 });
    await confirmSelected();
  }
  await browser.keys("f");
  const dialog = await browser.$("[data-testid=finalize-dialog]");
  await dialog.waitForDisplayed({ timeout: 5000 });
  const agreementDate = await browser.$("[data-testid=finalize-agreement-date]").getText();
  assert.match(agreementDate, /18 March 2019/);
  assert.doesNotMatch(agreementDate, /May 2019/, "never the filing line's date");
  const parties = await browser.$("[data-testid=finalize-parties]").getText();
  assert.match(parties, /Zogenix/i);
  assert.match(parties, /Nippon Shinyaku/);
  assert.match(await browser.$("[data-testid=finalize-counterparty]").getText(), /Nippon Shinyaku/);
  assert.doesNotMatch(await dialog.getText(), /_SERIALIZE|EXTRACTED/i, "labels in words");
  await screenshot(browser, "42-contract-finalize");
  await browser.$("[data-testid=vendor-new]").click();
  await browser.$("[data-testid=finalize-submit]").click();
  await browser.$("[data-testid=finalized]").waitForDisplayed({ timeout: 15000 });
  assert.equal(await browser.$("[data-testid=confirm]").isExisting(), false, "a finalized review is read, not changed");

  // The PDF memo, read back with pdfium through the CLI.
  await browser.$("[data-testid=export-pdf]").click();
  const notice = await browser.$("[data-testid=export-notice]");
  await browser.waitUntil(async () => /Saved /.test(await notice.getText().catch(() => "")), {
    timeout: 30000,
    timeoutMsg: "the PDF memo was saved",
  });
  const saved = /Saved (.+\.pdf)/.exec(await notice.getText())[1];
  const read = JSON.parse(execFileSync(cli, ["extract", saved, "--json"], { encoding: "utf8" }));
  const text = read.pages.map((p) => p.text).join("\n");
  assert.ok(!text.includes("ÿ"), "every glyph is printed as written");
  const flat = (s) => s.replace(/\s+/g, " ").trim();
  const words = flat(quoteText.replace(/\s*page \d+\s*→?\s*$/, "")).split(" ").slice(0, 12).join(" ");
  assert.ok(flat(text).includes(words), `the quote's words stay apart across line breaks: “${words}”`);
  assert.match(flat(text), /18 March 2019/);
  assert.doesNotMatch(text, /distributor\.risk\.|liability_cap/, "items by their questions, never their ids");
  await screenshot(browser, "43-contract-finalized");
});
