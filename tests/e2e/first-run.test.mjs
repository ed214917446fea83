// The welcome screen of a new installation in the real app: shown instead of the areas on an empty data directory,
// a name refused where the person looks, the organization created with the other names it signs as (by keyboard),
// the queue opened; a restart goes straight to the areas, and the CLI and Settings read what was set up.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { cli, freshDataDir, launch, screenshot } from "./app.mjs";

let app;

after(async () => {
  await app?.deleteSession().catch(() => {});
});

test("a new installation is set up from the welcome screen, once", async () => {
  const dataDir = freshDataDir("first-run", { setUp: false });
  app = await launch(dataDir, { ready: "[data-testid=first-run]" });
  const welcome = await app.$("[data-testid=first-run]");
  assert.match(await welcome.getText(), /What works without a network/);
  assert.equal(await app.$("nav[aria-label=Areas]").isExisting(), false, "no areas before the set-up");
  await screenshot(app, "00-first-run");

  // The name field has the focus; an empty name is refused beside the form and nothing is set up.
  const name = await app.$("[data-testid=first-run-name]");
  await app.waitUntil(async () => await name.isFocused(), { timeout: 5000, timeoutMsg: "the name field has no focus" });
  await app.$("[data-testid=first-run-create]").click();
  const error = await app.$("[data-testid=first-run-error]");
  await error.waitForDisplayed({ timeout: 5000 });
  assert.match(await error.getText(), /Type your organization's name/);

  // By keyboard: the name, Tab to the other names, then Enter on the button.
  await name.click();
  await app.keys("Northwind Traders Ltd");
  await app.keys("Tab");
  await app.keys(["N", "o", "r", "t", "h", "w", "i", "n", "d"]);
  await app.$("[data-testid=first-run-create]").click();
  const status = await app.$("[data-testid=status-session]");
  await status.waitForDisplayed({ timeout: 20000 });
  await app.waitUntil(async () => (await status.getText()).includes("Northwind Traders Ltd"), { timeout: 10000 });
  assert.match(await app.$("[data-testid=welcome-notice]").getText(), /Northwind Traders Ltd is set up/);
  await screenshot(app, "01-first-run-done");

  // Restart: straight to the areas.
  await app.deleteSession();
  app = await launch(dataDir);
  assert.equal(await app.$("[data-testid=first-run]").isExisting(), false, "not shown again");
  const orgs = JSON.parse(execFileSync(cli, ["--data-dir", dataDir, "org", "list", "--json"], { encoding: "utf8" }));
  assert.equal(orgs.length, 1);
  assert.equal(orgs[0].name, "Northwind Traders Ltd");
  // Settings shows the names the review will never take for the counterparty.
  await app.$("button[data-area=settings]").click();
  const names = await app.$("[data-testid=own-names]");
  await app.waitUntil(async () => (await names.getValue()).includes("Northwind"), { timeout: 10000 });
  assert.equal(await names.getValue(), "Northwind Traders Ltd\nNorthwind");
});
