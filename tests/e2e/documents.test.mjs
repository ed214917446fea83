// The documents journey in the real app: import through the UI, list, delete, restore, restart, same state.
import { test, after, afterEach } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { freshDataDir, launch, screenshot, waitForRows } from "./app.mjs";

const dataDir = freshDataDir("documents");
const inbox = freshDataDir("inbox");
const contract = path.join(inbox, "supply-agreement-acme.txt");
fs.writeFileSync(
  contract,
  "SUPPLY AGREEMENT\n\nThis Supply Agreement is made between Acme Components Ltd. and Northwind Traders, Inc.\n" +
    "Governing law: the laws of the State of New York.\n",
);
let browser;

after(async () => {
  await browser?.deleteSession().catch(() => {});
});

afterEach(async (t) => {
  if (browser && t.passed === false) await screenshot(browser, "failure-documents").catch(() => {});
});

test("a file imported through the UI is listed, deleted, restored and still there after a restart", async () => {
  browser = await launch(dataDir);
  // The app opens on the review queue; Alt+2 is Documents.
  await browser.$("[data-testid=queue-empty]").waitForDisplayed({ timeout: 15000 });
  await browser.keys(["Alt", "2"]);
  await browser.$("[data-testid=empty]").waitForDisplayed({ timeout: 15000 });
  await screenshot(browser, "01-documents-empty");

  // Import by typing the path in the import field (the keyboard path; the native dialog and drag and drop call the
  // same command).
  await browser.keys("i");
  const field = await browser.$("[data-testid=import-path]");
  await field.waitForDisplayed();
  assert.equal(await browser.execute(() => document.activeElement?.id), "import-path", "'i' focuses the path field");
  await field.setValue(contract);
  await browser.keys("Enter");
  await waitForRows(browser, ["supply-agreement-acme.txt"]);
  const notice = await browser.$("[data-testid=notice]");
  await notice.waitForDisplayed();
  assert.match(await notice.getText(), /1 imported/);
  await screenshot(browser, "02-documents-imported");

  // The same bytes again: still one document.
  await field.setValue(contract);
  await browser.$("[data-testid=import-path-submit]").click();
  await browser.waitUntil(async () => /already here/.test(await notice.getText()), { timeout: 10000 });
  await waitForRows(browser, ["supply-agreement-acme.txt"]);

  // A bad path is refused where the user is looking, and nothing is added.
  await field.setValue(path.join(inbox, "no-such-file.pdf"));
  await browser.keys("Enter");
  const failures = await browser.$("[data-testid=import-failures]");
  await failures.waitForDisplayed({ timeout: 10000 });
  assert.match(await failures.getText(), /no-such-file\.pdf does not exist/);
  await waitForRows(browser, ["supply-agreement-acme.txt"]);

  // Delete, find it in the trash, restore it.
  await browser.$("[data-testid=delete]").click();
  await browser.$("[data-testid=empty]").waitForDisplayed({ timeout: 10000 });
  await browser.$("[data-testid=toggle-trash]").click();
  await waitForRows(browser, ["supply-agreement-acme.txt"]);
  await screenshot(browser, "03-trash");
  await browser.$("[data-testid=restore]").click();
  await browser.$("[data-testid=empty]").waitForDisplayed({ timeout: 10000 });
  await browser.$("[data-testid=toggle-trash]").click();
  await waitForRows(browser, ["supply-agreement-acme.txt"]);

  // Restart the app on the same data directory: the same state.
  await browser.deleteSession();
  browser = await launch(dataDir);
  await browser.keys(["Alt", "2"]);
  await waitForRows(browser, ["supply-agreement-acme.txt"], 15000);
  const status = await browser.$("[data-testid=status-session]").getText();
  assert.match(status, /My organization/);
  await screenshot(browser, "04-after-restart");

  // Keyboard: Alt+7 opens Settings, which names the data directory in use.
  await browser.keys(["Alt", "7"]);
  await browser.$(`code=${dataDir}`).waitForDisplayed({ timeout: 5000 });
  // With no API key the app says it is offline, in words, where the key is set.
  assert.match(await browser.$("[data-testid=model-status]").getText(), /offline/);
  // Meaning-based search says what it uses without a Voyage key: the model on this computer.
  const voyage = await browser.$("[data-testid=voyage-status]");
  await voyage.waitForDisplayed({ timeout: 10000 });
  assert.match(await voyage.getText(), /local|this computer/i);
  await screenshot(browser, "05-settings");
});
