// A crash report left by an earlier run (an internal error stopped an operation; the report's format is the panic
// hook's, tested in crates/api/tests/crash.rs) is said where the person looks when the app opens, with where the
// report is; Dismiss puts it aside (crash-reports/seen/) and it is not shown again after a restart.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { freshDataDir, launch, screenshot } from "./app.mjs";

let app;

after(async () => {
  await app?.deleteSession().catch(() => {});
});

test("a crash report from an earlier run is shown with its place and dismissed for good", async () => {
  const dataDir = freshDataDir("crash");
  const reports = path.join(dataDir, "crash-reports");
  fs.mkdirSync(reports, { recursive: true });
  const report = path.join(reports, "crash-20261203T100000.000Z-4242.txt");
  fs.writeFileSync(
    report,
    [
      "Pactwise Desk 0.1.0 stopped an operation after an internal error.",
      "When: 2026-12-03T10:00:00+00:00",
      "Thread: tokio-runtime-worker",
      "Where: crates/api/src/review.rs:10",
      "What: could not place [text withheld] on page 4",
      "This report holds no document text, no keys and no passwords; quoted values are withheld.",
      "",
      "Stack:",
      "  0: pactwise_api::review::finalize",
    ].join("\n"),
  );
  app = await launch(dataDir);
  const shown = await app.$("[data-testid=crash-reports]");
  await shown.waitForDisplayed({ timeout: 20000 });
  const text = await shown.getText();
  assert.match(text, /stopped an operation after an internal error/);
  assert.ok(text.includes(report), `the report's place is shown: ${text}`);
  await screenshot(app, "70-crash-report-shown");
  await shown.$("button=Dismiss").click();
  await shown.waitForDisplayed({ reverse: true, timeout: 10000 });
  assert.ok(fs.existsSync(path.join(reports, "seen", path.basename(report))), "kept in seen/");
  assert.ok(!fs.existsSync(report));
  await app.deleteSession();
  app = await launch(dataDir);
  await app.$("[data-testid=status-session]").waitForDisplayed({ timeout: 20000 });
  assert.equal(await app.$("[data-testid=crash-reports]").isExisting(), false, "not shown again");
});
