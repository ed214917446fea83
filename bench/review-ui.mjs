// Driven by bench/review-ui.sh: opens the review of the one document in BENCH_DATA_DIR's queue OPENS times and
// steps through STEPS items each time, then prints the app's own performance measures as JSON lines.
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
