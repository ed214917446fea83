// The vendor page of PactWise Source in a real browser (headless Chromium, `browser.mjs`) against the real service
// (`syncService(name, { source: true })`). The buyer's steps go through the service's HTTP API from node, signing in as
// the desktop does (POST /api/v1/sign-in, then the device token): this file tries the page's own paths (a hostile file,
// a cut connection, a late submission); `source.test.mjs` runs a whole tender with the buyer's desktop app and this
// browser together. In the browser: the invitation link → a password → only the invited tender → a question → the
// buyer's answer (without the asker's name) → a submission with files (a PDF and a DOCX from the inspector's clean
// corpus builders, written by the `source_e2e_fixture` example) and prices, sent as resumable chunked uploads → a
// hostile PDF refused beside its name → a replacement → the service's clock past the deadline → a late submission
// refused.
import { test, after, afterEach } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { URLPattern } from "urlpattern-polyfill"; // WebdriverIO's own (a query needs the object form)
import { chooseFiles, fileRow, fillByLabel, fixtures, openBrowser, openTheTender, requireBrowser, text, waitForStatus } from "./browser.mjs";
import { syncService } from "./service.mjs";

const service = syncService("vendor-service", { source: true });
const PASSWORD = "a-long-password-for-the-e2e-test";
const VENDOR_PASSWORD = "acme-vendor-password-1";
let session = null;

after(async () => {
  await session?.close();
  service.stop();
});

afterEach(async (t) => {
  if (session && t.passed === false) await session.shot("failure").catch(() => {});
});

function client(endpoint) {
  return async (method, route, token, body) => {
    const headers = { "content-type": "application/json" };
    if (token) headers.authorization = `Bearer ${token}`;
    const response = await fetch(`${endpoint}/api/v1${route}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const data = await response.json().catch(() => null);
    return { status: response.status, data };
  };
}

test("a vendor joins by invitation, asks, submits files in chunks, replaces, and is refused after the deadline", async (t) => {
  if (!requireBrowser(t)) return;
  const files = fixtures();
  service.admin(["create-org", "--slug", "alpha", "--name", "City of Northbridge"]);
  service.admin(["create-user", "--org", "alpha", "--email", "ann@alpha.example", "--role", "buyer"], `${PASSWORD}\n`);
  service.admin(["create-user", "--org", "alpha", "--email", "bob@alpha.example", "--role", "buyer"], `${PASSWORD}\n`);
  const endpoint = await service.start();
  const api = client(endpoint);

  // The buyers sign in as the desktop does and publish two tenders (Ann asks, Bob approves); the vendor is invited
  // to the first only.
  const signIn = async (email) => {
    const answer = await api("POST", "/sign-in", null, { org: "alpha", email, password: PASSWORD, device_name: "desktop" });
    assert.equal(answer.status, 200, JSON.stringify(answer.data));
    return answer.data.token;
  };
  const ann = await signIn("ann@alpha.example");
  const bob = await signIn("bob@alpha.example");
  const publish = async (title) => {
    const asked = await api("POST", "/source/tenders", ann, { title, artifacts: files.artifacts, opening_key: files.opening.public });
    assert.equal(asked.status, 201, JSON.stringify(asked.data));
    const approved = await api("POST", `/source/tenders/${asked.data.id}/approve`, bob, {});
    assert.equal(approved.status, 200, JSON.stringify(approved.data));
    return approved.data;
  };
  const tender = await publish("Fleet telematics");
  await publish("Depot cleaning");
  const invited = await api("POST", `/source/tenders/${tender.id}/invitations`, ann, {
    vendor_name: "Acme Telematics Ltd",
    email: "bids@acme.example",
  });
  assert.equal(invited.status, 201, JSON.stringify(invited.data));

  session = await openBrowser("vendor", { bidi: true });
  const { browser, shot } = session;

  // The invitation link: create a password, join, and see only the invited tender.
  await browser.url(`${endpoint}${invited.data.link}`);
  await (await browser.$("h2=Join the tender")).waitForExist({ timeout: 10000 });
  assert.ok(!(await browser.getUrl()).includes("pwi_"), "the link's token leaves the address bar");
  await fillByLabel(browser, "Email", "bids@acme.example");
  await fillByLabel(browser, "Password", VENDOR_PASSWORD);
  await shot("01-invitation");
  await (await browser.$("button=Join")).click();
  await (await browser.$("h2=Your tenders")).waitForExist({ timeout: 10000 });
  const listed = await browser.execute(() => Array.from(document.querySelectorAll("main li a"), (a) => a.textContent));
  assert.deepEqual(listed, ["Fleet telematics"], "only the tender the vendor was invited to");
  await shot("02-only-the-invited-tender");

  // A question; the buyer answers it; the vendor sees the answer, and no name beside it.
  await openTheTender(browser, "Fleet telematics");
  await fillByLabel(browser, "Ask a question", "Is a 60 s position interval acceptable?");
  await (await browser.$("button=Send the question")).click();
  await waitForStatus(browser, /question was sent/);
  await shot("03-question-asked");
  const questions = await api("GET", `/source/tenders/${tender.id}/questions`, ann);
  assert.equal(questions.data[0].asked_by, "Acme Telematics Ltd");
  const answered = await api("POST", `/source/tenders/${tender.id}/questions/${questions.data[0].id}/answer`, ann, {
    answer: "No: at most 30 s, as R-02 says.",
  });
  assert.equal(answered.status, 200, JSON.stringify(answered.data));
  await (await browser.$("button=All tenders")).click();
  await openTheTender(browser, "Fleet telematics");
  const qa = await text(browser, "section[aria-labelledby=q-title]");
  assert.match(qa, /No: at most 30 s, as R-02 says\./);
  assert.doesNotMatch(qa, /Acme/, "answers are published without the asker's name");
  await shot("04-answer-seen");

  // A submission with a hostile file among good ones: the hostile one is refused beside its name; nothing is
  // submitted; the good ones uploaded in full.
  await fillByLabel(browser, "R-01", "Hosted in Frankfurt (EU).");
  await fillByLabel(browser, "R-02", "Positions every 20 seconds.");
  await fillByLabel(browser, "P-01", "123.45");
  await chooseFiles(browser, [files.file("offer.pdf"), files.file("approach.docx"), files.file("brochure.pdf")]);
  await (await browser.$("button=Submit")).click();
  await waitForStatus(browser, /Nothing was submitted yet/);
  const brochure = await fileRow(browser, "brochure.pdf");
  assert.ok(brochure.refused, JSON.stringify(brochure));
  assert.match(brochure.problem, /JavaScript/i, "the inspection's reason beside the file");
  for (const name of ["offer.pdf", "approach.docx"]) {
    const row = await fileRow(browser, name);
    assert.match(row.state, /Uploaded and accepted/, `${name}: ${JSON.stringify(row)}`);
    assert.equal(row.progress, row.max, `${name}'s progress bar is full`);
  }
  await shot("05-hostile-file-refused");
  assert.equal((await api("GET", `/source/tenders/${tender.id}`, ann)).data.submissions, 0);

  // The same submission without the hostile file.
  await chooseFiles(browser, [files.file("offer.pdf"), files.file("approach.docx")]);
  await (await browser.$("button=Submit")).click();
  await waitForStatus(browser, /Submission 1 received and sealed/);
  await (await browser.$("p*=You have submitted 1 time")).waitForExist({ timeout: 10000 });
  await shot("06-submitted");

  // A replacement: the last one counts; the buyer sees one vendor submitted, nothing of the content.
  await fillByLabel(browser, "R-01", "Hosted in Frankfurt (EU), second offer.");
  await fillByLabel(browser, "P-01", "119.90");
  await chooseFiles(browser, [files.file("offer.pdf")]);
  await (await browser.$("button=Submit")).click();
  await waitForStatus(browser, /Submission 2 received and sealed/);
  await (await browser.$("p*=You have submitted 2 time")).waitForExist({ timeout: 10000 });
  await shot("07-replaced");
  const status = await api("GET", `/source/tenders/${tender.id}`, ann);
  assert.equal(status.data.submissions, 1);

  // A larger file through a connection that fails after its first chunk: the page retries with backoff, then offers
  // Resume; once the connection is back, Resume carries on from the service's offset (not from the start).
  const big = path.join(files.dir, "notes.txt");
  fs.writeFileSync(big, "Our notes on the tracking requirement, line after line.\n".repeat(60_000)); // ≈ 3.3 MB
  const where = new URL(endpoint);
  const secondChunk = new URLPattern({
    protocol: "http",
    hostname: where.hostname,
    port: where.port,
    pathname: "/api/v1/source/vendor/uploads/*",
    search: "offset=1048576",
  });
  const cut = await browser.mock(secondChunk, { method: "PUT" });
  let chunksSeen = 0;
  cut.on("request", () => { chunksSeen += 1; });
  cut.abort(); // the second chunk fails as a network error, every time, while the mock is on
  await fillByLabel(browser, "P-01", "118.00");
  await chooseFiles(browser, [big]);
  await (await browser.$("button=Submit")).click();
  const resume = await browser.$("button=Resume notes.txt");
  await resume.waitForDisplayed({ timeout: 40000 });
  assert.ok(chunksSeen >= 5, `the first try and four retries were attempted (${chunksSeen})`);
  const paused = await fileRow(browser, "notes.txt");
  assert.match(paused.problem, /Check your connection, then press Resume/, JSON.stringify(paused));
  await shot("08-upload-paused");
  const vendorToken = await browser.execute(() => sessionStorage.getItem("pactwise-vendor-session"));
  const uploadId = await browser.execute(() => document.querySelector("li.file").dataset.upload);
  const stands = await api("GET", `/source/vendor/uploads/${uploadId}`, vendorToken);
  assert.equal(stands.data.received, 1048576, "the service kept the first chunk");
  await cut.restore();
  await resume.click();
  await waitForStatus(browser, /Submission 3 received and sealed/, 60000);
  await shot("09-resumed-and-submitted");

  // The service's clock passes the deadline: a late submission is refused in words.
  const close = Date.parse(status.data.deadlines.submissions_close);
  service.moveClock(Math.ceil((close - Date.now()) / 1000) + 60);
  await fillByLabel(browser, "P-01", "99.00");
  await chooseFiles(browser, [files.file("offer.pdf")]);
  await (await browser.$("button=Submit")).click();
  await waitForStatus(browser, /Nothing was submitted/);
  const late = await fileRow(browser, "offer.pdf");
  assert.match(late.problem, /late submission/i, JSON.stringify(late));
  await shot("10-late-refused");

  // After the deadline the buyer opens the technical envelopes: the replacement's files, sealed for the opening key.
  const opened = await api("POST", `/source/tenders/${tender.id}/open`, ann, { kind: "technical" });
  assert.equal(opened.status, 200, JSON.stringify(opened.data));
  const parts = opened.data.parts.map((p) => `${p.submission}:${p.part}`).sort();
  assert.deepEqual(parts, ["3:answers.json", "3:notes.txt"]);
});
