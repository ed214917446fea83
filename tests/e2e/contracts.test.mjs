// The Contracts area in the real app, offline: the demo licence is finalized through the CLI on the app's data
// directory (critical items confirmed, a vendor created), then in the app Alt+3 opens Contracts, a search and a
// filter find it, Enter shows its terms, clicking the expiration date opens the contract at that verified quote,
// and the upcoming dates export as a calendar file that parses.
import { test, after, afterEach } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { freshDataDir, launch, screenshot } from "./app.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const licence = path.resolve(here, "../../fixtures/demo/software-license-northwind-tailspin.txt");
const dataDir = freshDataDir("contracts");
const bin = path.dirname(process.env.PACTWISE_APP);
const cli = process.env.PACTWISE_CLI ?? path.join(bin, "pactwise");
const saved = process.env.PACTWISE_SAVE_DIR;
let browser;

function pactwise(args) {
  return JSON.parse(execFileSync(cli, ["--data-dir", dataDir, ...args, "--json"], { encoding: "utf8" }));
}

after(async () => {
  await browser?.deleteSession().catch(() => {});
});

afterEach(async (t) => {
  if (browser && t.passed === false) await screenshot(browser, "failure-contracts").catch(() => {});
});

/** RFC 5545 content lines, unfolded (CRLF + space joins), after checking every physical line's ending and width. */
function icsLines(text) {
  assert.ok(text.endsWith("\r\n"), "the file ends with CRLF");
  for (const line of text.split("\r\n")) assert.ok(Buffer.byteLength(line) <= 75, `line longer than 75 octets: ${line}`);
  assert.ok(!/[^\r]\n/.test(text), "no bare line feed");
  return text.replace(/\r\n /g, "").split("\r\n").filter(Boolean);
}

test("a finalized contract is found in Contracts, opens at its quote, and its dates export as a calendar", async () => {
  const imported = pactwise(["import", licence]);
  const id = imported.imported[0].document.id;
  const review = pactwise(["pipeline", id]);
  for (const item of review.items.filter((i) => i.risk === "critical")) {
    pactwise(["correct", id, "--item", item.id, "--confirm", "--keep-despite-warnings"]);
  }
  pactwise(["finalize", id, "--new-vendor", "Tailspin Software"]);

  browser = await launch(dataDir);
  await browser.keys(["Alt", "3"]);
  const count = await browser.$("[data-testid=contracts-count]");
  await count.waitUntil(async function () {
    return (await this.getText()) === "1 contract";
  }, { timeout: 15000, timeoutMsg: "the finalized contract is listed" });
  const rowText = await browser.execute(() => document.querySelector("[data-testid=contract-row]")?.textContent ?? "");
  assert.match(rowText, /software-license-northwind-tailspin\.txt/);
  assert.match(rowText, /1 August 2029/);
  await screenshot(browser, "60-contracts-list");

  // A search that matches nothing, then one that does; a filter in words.
  await browser.keys(["/"]);
  await browser.$("[data-testid=contracts-search]").setValue("contoso");
  await browser.$("[data-testid=contracts-empty]").waitForDisplayed({ timeout: 10000 });
  await browser.$("[data-testid=contracts-search]").setValue("tailspin");
  await count.waitUntil(async function () {
    return (await this.getText()) === "1 contract";
  }, { timeout: 10000, timeoutMsg: "the search finds the contract" });
  await browser.$("[data-testid=contracts-expiring]").selectByVisibleText("30 days");
  await browser.$("[data-testid=contracts-empty]").waitForDisplayed({ timeout: 10000 });
  await browser.$("[data-testid=contracts-expiring]").selectByVisibleText("any time");
  await count.waitUntil(async function () {
    return (await this.getText()) === "1 contract";
  }, { timeout: 10000, timeoutMsg: "clearing the filter shows it again" });

  // Enter shows its terms; the expiration date opens the contract at its verified quote.
  await browser.$("[data-testid=contracts-list]").click();
  await browser.keys(["Enter"]);
  const expiration = await browser.$("[data-testid=contract-field][data-field=expiration_date]");
  await expiration.waitForDisplayed({ timeout: 10000 });
  const textOf = (selector) => browser.execute((s) => document.querySelector(s)?.textContent ?? "", selector);
  assert.match(await textOf("[data-testid=contract-field][data-field=expiration_date]"), /initial term of three \(3\) years/);
  assert.match(await textOf("[data-testid=contract-detail]"), /Tailspin Software \(linked by a person\)/);
  await screenshot(browser, "61-contracts-detail");
  await expiration.click();
  await browser.waitUntil(
    async () =>
      browser.execute(() =>
        Array.from(document.querySelectorAll('[data-page="1"] mark.current, [data-page="1"] .mark.current')).some((m) =>
          /initial term/.test(m.textContent),
        ),
      ),
    { timeout: 15000, timeoutMsg: "the contract opens with the expiration's quote marked on page 1" },
  );
  await screenshot(browser, "62-contract-at-quote");

  // Upcoming dates: the notice deadline and the expiration, exported as a calendar.
  await browser.keys(["Alt", "3"]);
  await browser.$("[data-testid=contracts-tab-dates]").waitForDisplayed({ timeout: 10000 });
  await browser.$("[data-testid=contracts-tab-dates]").click();
  await browser.$("[data-testid=dates-months]").selectByVisibleText("5 years");
  await browser.waitUntil(async () => (await browser.$$("[data-testid=dates-entry]")).length === 2, {
    timeout: 10000,
    timeoutMsg: "two dates within five years",
  });
  const months = await browser.execute(() =>
    Array.from(document.querySelectorAll("[data-testid=dates-month] h3")).map((h) => h.textContent),
  );
  assert.deepEqual(months, ["May 2029", "August 2029"]);
  await screenshot(browser, "63-upcoming-dates");
  await browser.$("[data-testid=dates-export]").click();
  const notice = await browser.$("[data-testid=dates-export-notice]");
  await notice.waitForDisplayed({ timeout: 10000 });
  assert.match(await notice.getText(), /^Saved .*contract-dates\.ics/);
  const file = path.join(saved, "contract-dates.ics");
  assert.ok(fs.existsSync(file), `${file} was written`);
  const lines = icsLines(fs.readFileSync(file, "utf8"));
  assert.equal(lines[0], "BEGIN:VCALENDAR");
  assert.equal(lines.at(-1), "END:VCALENDAR");
  assert.ok(lines.includes("VERSION:2.0"));
  assert.equal(lines.filter((l) => l === "BEGIN:VEVENT").length, 2);
  assert.ok(lines.includes("DTSTART;VALUE=DATE:20290503"), "the notice deadline, 90 days before");
  assert.ok(lines.includes("DTSTART;VALUE=DATE:20290801"), "the expiration");
  assert.ok(lines.some((l) => l.startsWith("SUMMARY:Last day to give notice of non-renewal: software-license")));
});
