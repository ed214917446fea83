// Driven by bench/review-ui.sh: opens the review of the one document in BENCH_DATA_DIR's queue OPENS times and
// steps through STEPS items each time; then, in VIEWER_DATA_DIR, opens the long CUAD PDF's review JUMPS times and
// jumps to page 50 each time. Prints the app's own performance measures as JSON lines.
import fs from "node:fs";
import path from "node:path";
import { launch } from "../tests/e2e/app.mjs";

const opens = Number(process.env.OPENS ?? 6);
const steps = Number(process.env.STEPS ?? 30);

const measures = (browser, name) =>
  browser.execute((n) => performance.getEntriesByName(n, "measure").map((m) => m.duration), name);

function stats(figure, values, goal, extra = {}) {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  const r = (x) => Math.round(x * 10) / 10;
  return JSON.stringify({
    figure,
    runs: sorted.length,
    median_ms: r(at(0.5)),
    p90_ms: r(at(0.9)),
    min_ms: r(sorted[0]),
    max_ms: r(sorted[sorted.length - 1]),
    goal_ms: goal,
    ...extra,
  });
}

const parts = process.env.PARTS ?? "review,viewer";

if (parts.includes("review")) await reviewPart();
if (parts.includes("viewer")) await viewerPart();

async function reviewPart() {
  const browser = await launch(process.env.BENCH_DATA_DIR);
  try {
    await browser.$("[data-testid=queue-row]").waitForDisplayed({ timeout: 20000 });
    const open = [];
    const select = [];
    const breakdown = {};
    const inDom = [];
    for (let i = 0; i < opens; i++) {
      await browser.$("[data-testid=queue-row]").waitForDisplayed({ timeout: 10000 });
      await browser.keys("Enter");
      await browser.waitUntil(async () => (await measures(browser, "review:open-to-first-page-and-checklist")).length > 0, {
        timeout: 30000,
        timeoutMsg: "the review did not report its first page and checklist drawn",
      });
      open.push((await measures(browser, "review:open-to-first-page-and-checklist"))[0]);
      // Where the time went: each step's end since the open (the review, the checklist type, page 1's layout).
      const parts = await browser.execute(() => {
        const at = (n) => performance.getEntriesByName(n, "mark").at(-1)?.startTime ?? NaN;
        const t0 = at("review:open");
        return Object.fromEntries(
          ["review:review-loaded", "review:type-loaded", "review:page-1-layout", "review:ready"].map((n) => [n, at(n) - t0]),
        );
      });
      for (const [k, v] of Object.entries(parts)) (breakdown[k] ??= []).push(v);
      // Select items once the pages that quotes cite are loaded in the background (a person reads the first item
      // meanwhile); the time that takes is printed in the breakdown.
      await browser
        .waitUntil(() => browser.execute(() => performance.getEntriesByName("review:quote-pages-loaded").length > 0), { timeout: 60000 })
        .catch(() => console.error("bench: the quote pages were still loading after 60 s"));
      const loaded = await browser.execute(
        () => performance.getEntriesByName("review:quote-pages-loaded").at(-1).startTime - performance.getEntriesByName("review:open").at(-1).startTime,
      );
      (breakdown["review:quote-pages-loaded"] ??= []).push(loaded);
      const items = (await browser.$$("[data-testid=checklist-item]")).length;
      for (let s = 0; s < Math.min(steps, items - 1); s++) {
        const before = (await measures(browser, "review:item-to-quote-highlighted")).length;
        await browser.keys("j");
        // Items without a quote report nothing; give each key a moment, then move on.
        await browser
          .waitUntil(async () => (await measures(browser, "review:item-to-quote-highlighted")).length > before, { timeout: 2000 })
          .catch(() => {});
      }
      select.push(...(await measures(browser, "review:item-to-quote-highlighted")));
      inDom.push(...(await measures(browser, "review:item-to-quote-in-dom")));
      if (i === 0) console.error(`bench: the review shows page 1 ${await browser.$("[data-testid=page-count]").getText()}`);
      await browser.execute(() => {
        performance.clearMeasures();
        performance.clearMarks("review:quote-pages-loaded");
      });
      await browser.keys("Escape");
    }
    console.log(stats("review_open_to_first_page_and_checklist_ms (first open, renders not cached)", open.slice(0, 1), 1000));
    console.log(stats("review_open_to_first_page_and_checklist_ms (later opens)", open.slice(1), 1000));
    console.log(stats("item_select_to_quote_highlighted_ms", select, 100));
    console.log(stats("item_select_to_quote_in_dom_ms (before the paint)", inDom, null));
    for (const [k, v] of Object.entries(breakdown)) console.log(stats(`open_breakdown_ms ${k} (since the open)`, v, null));
  } finally {
    await browser.deleteSession().catch(() => {});
  }
}

/**
 * Jump to page 50 of the 68-page PDF: time to its text shown and to its image shown (the pane's own marks). Each run
 * starts the app afresh with the renders cache emptied, so neither the backend's cache nor the web view's memory
 * cache holds page 50: it is rendered for this jump.
 */
async function viewerPart() {
  const dataDir = process.env.VIEWER_DATA_DIR;
  const jumps = Number(process.env.JUMPS ?? 6);
  const renders = path.join(dataDir, "cache", "renders");
  const text = [];
  const image = [];
  let scale = null;
  for (let i = 0; i < jumps; i++) {
    fs.rmSync(renders, { recursive: true, force: true });
    const browser = await launch(dataDir);
    try {
      await browser.$("[data-testid=queue-row]").waitForDisplayed({ timeout: 20000 });
      await browser.keys("Enter");
      await browser.waitUntil(async () => (await measures(browser, "review:open-to-first-page-and-checklist")).length > 0, {
        timeout: 60000,
        timeoutMsg: "the review did not report its first page and checklist drawn",
      });
      const count = await browser.$("[data-testid=page-count]").getText();
      if (!count.includes("68")) throw new Error(`the viewer PDF should have 68 pages; the review shows ${count}`);
      // Let the pane settle (page 1's neighbours, the quote pages) before the jump, as a reader would.
      await browser
        .waitUntil(() => browser.execute(() => performance.getEntriesByName("review:quote-pages-loaded").length > 0), { timeout: 60000 })
        .catch(() => {});
      await browser.pause(500);
      await browser.execute(() => {
        performance.clearMarks();
        performance.clearMeasures();
      });
      const input = await browser.$("[data-testid=page-input]");
      await input.click();
      await browser.execute(() => document.querySelector("[data-testid=page-input]").select());
      await browser.keys(["5", "0", "Enter"]);
      await browser.waitUntil(async () => (await measures(browser, "viewer:jump-to-image")).length > 0, {
        timeout: 30000,
        timeoutMsg: "page 50's image was not shown",
      });
      await browser.waitUntil(async () => (await measures(browser, "viewer:jump-to-text")).length > 0, { timeout: 5000 });
      text.push((await measures(browser, "viewer:jump-to-text"))[0]);
      image.push((await measures(browser, "viewer:jump-to-image"))[0]);
      scale ??= await browser.execute(() => new URL(document.querySelector('[data-page="50"] img').src).searchParams.get("scale"));
    } finally {
      await browser.deleteSession().catch(() => {});
    }
  }
  if (process.env.VIEWER_SCALE_FILE && scale) fs.writeFileSync(process.env.VIEWER_SCALE_FILE, String(scale));
  const pdf = path.basename(process.env.VIEWER_PDF ?? "");
  console.log(stats("viewer_jump_to_page_50_text_shown_ms", text, null, { pdf, pages: 68 }));
  console.log(stats("viewer_jump_to_page_50_image_shown_ms", image, 300, { pdf, pages: 68, scale: Number(scale) }));
}
