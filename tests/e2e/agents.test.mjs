// Requests to the agents in the real app, offline: a contract named "MSA-2026-014 Tailspin.txt" is imported and
// finalized through the CLI on the app's data directory; in the app Alt+8 opens Runs, "a" opens Ask the agents, a
// request typed in plain words shows the manager's plan (steps in order, why, what stops the run) before anything
// runs, Ctrl+Enter runs it, each agent's output appears, the urgent notice is in the list, in the inbox and reaches
// the desktop as a native notification, and Settings lists what the agents remember of the person.
import { test, after, afterEach } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { cli, freshDataDir, launch, screenshot, startNotificationDaemon } from "./app.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const licence = path.resolve(here, "../../fixtures/demo/software-license-northwind-tailspin.txt");
const dataDir = freshDataDir("agents");
let browser;
let daemon;

function pactwise(args) {
  return JSON.parse(execFileSync(cli, ["--data-dir", dataDir, ...args, "--json"], { encoding: "utf8" }));
}

after(async () => {
  await browser?.deleteSession().catch(() => {});
  daemon?.stop();
});

afterEach(async (t) => {
  if (browser && t.passed === false) await screenshot(browser, "failure-agents").catch(() => {});
});

test("a request typed in plain words is planned, shown, run, and each agent's output and the notice appear", async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pactwise-agents-"));
  const file = path.join(dir, "MSA-2026-014 Tailspin.txt");
  fs.copyFileSync(licence, file);
  const id = pactwise(["import", file]).imported[0].document.id;
  const review = pactwise(["pipeline", id]);
  for (const item of review.items.filter((i) => i.risk === "critical")) {
    pactwise(["correct", id, "--item", item.id, "--confirm", "--keep-despite-warnings"]);
  }
  pactwise(["finalize", id, "--new-vendor", "Tailspin Software"]);

  daemon = await startNotificationDaemon();
  browser = await launch(dataDir);
  await browser.keys(["Alt", "8"]);
  await browser.$("[data-testid=ask-agents]").waitForDisplayed({ timeout: 15000 });
  await browser.$("[data-testid=runs-list], [data-testid=runs-empty]").waitForDisplayed({ timeout: 15000 });
  await browser.keys(["a"]);
  const field = await browser.$("[data-testid=agent-request]");
  await field.waitForDisplayed({ timeout: 10000 });
  const request = "Urgent: renew MSA-2026-014 with Tailspin Software before 31 March, budget 50k, legal to check liability";
  await field.setValue(request);
  await browser.keys(["Control", "Enter"]);
  const steps = await browser.$("[data-testid=plan-steps]");
  await steps.waitForDisplayed({ timeout: 15000 });
  const planText = await browser.$("[data-testid=plan]").getText();
  assert.match(planText, /A renewal · urgent/);
  assert.match(planText, /Contract MSA-2026-014/);
  assert.match(planText, /Amount EUR 50,000\.00/);
  assert.match(planText, /1\. Document reading \(OCR\)/);
  assert.match(planText, /If it fails, the run stops\./);
  assert.ok(planText.indexOf("Legal") < planText.indexOf("Analytics"), "legal before analytics");
  assert.ok(planText.indexOf("Analytics") < planText.lastIndexOf("Notifications"), "notifications last");
  await screenshot(browser, "70-agents-plan");

  // Ctrl+Enter again runs it; each agent's output appears.
  await browser.keys(["Control", "Enter"]);
  const state = await browser.$("[data-testid=agent-result-state]");
  await state.waitForDisplayed({ timeout: 30000 });
  assert.equal(await state.getText(), "Done");
  const outputs = await browser.execute(() =>
    [...document.querySelectorAll("[data-testid=agent-step]")].map((li) => li.textContent ?? ""),
  );
  assert.ok(outputs.length >= 6, JSON.stringify(outputs));
  assert.ok(outputs.every((o) => /Done/.test(o)), JSON.stringify(outputs));
  assert.ok(outputs.some((o) => /^\s*Legal/.test(o) && /MSA-2026-014: \d+ checklist items evaluated/.test(o)), JSON.stringify(outputs));
  assert.ok(outputs.some((o) => /Secretary/.test(o) && /reminder/.test(o)), JSON.stringify(outputs));
  const result = await browser.$("[data-testid=agent-result]").getText();
  assert.doesNotMatch(result, /[0-9a-f]{8}-[0-9a-f]{4}-|\{"|contract_review|agent_plan/);
  const notice = await browser.$("[data-testid=agent-notices]").getText();
  assert.match(notice, /A renewal for MSA-2026-014: done/);
  await screenshot(browser, "71-agents-result");

  // The urgent notice reaches the desktop once.
  const shown = await daemon.waitFor((n) => /A renewal for MSA-2026-014: done/.test(n.summary ?? n.title ?? ""), 30000);
  assert.ok(shown);

  // The inbox (Approvals) lists it under "From the agents".
  await browser.keys(["Escape"]);
  await browser.keys(["Alt", "4"]);
  const inbox = await browser.$("[data-testid=inbox-agent-notices]");
  await inbox.waitForDisplayed({ timeout: 10000 });
  assert.match(await inbox.getText(), /A renewal for MSA-2026-014: done/);

  // Settings lists what the agents remember of the person.
  await browser.keys(["Alt", "7"]);
  const memory = await browser.$("[data-testid=memory-settings]");
  await memory.waitForDisplayed({ timeout: 10000 });
  await memory.scrollIntoView();
  const remembered = await memory.getText();
  assert.match(remembered, /Renewal for MSA-2026-014: EUR 50,000\.00/);
  assert.match(remembered, /From your request of/);
  await screenshot(browser, "72-agents-memory");
});
