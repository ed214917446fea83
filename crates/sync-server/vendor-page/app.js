// The vendor page of PactWise Source: accept an invitation, sign in, see the tenders you joined, ask questions,
// and submit (technical answers and files, prices). Everything goes to the service's JSON API on this origin; the
// session token lives in this tab's sessionStorage only. Text from the server is always set as text, never as HTML.
"use strict";

const API = "/api/v1/source";
const main = document.getElementById("main");
const statusLine = document.getElementById("status");

function session() {
  return sessionStorage.getItem("pactwise-vendor-session");
}

function say(text) {
  statusLine.textContent = text;
}

function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes)) {
    if (key === "text") node.textContent = value;
    else node.setAttribute(key, value);
  }
  for (const child of children) node.append(child);
  return node;
}

function show(...nodes) {
  main.replaceChildren(...nodes);
  main.focus();
}

function when(iso) {
  const date = new Date(iso);
  return date.toLocaleString(undefined, { dateStyle: "full", timeStyle: "short" });
}

async function call(method, path, body) {
  const headers = { "Content-Type": "application/json" };
  const token = session();
  if (token) headers.Authorization = `Bearer ${token}`;
  let response;
  try {
    response = await fetch(API + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  } catch (_) {
    return { ok: false, status: 0, data: { error: { message: "The connection to the service failed; check your connection and try again." } } };
  }
  const data = await response.json().catch(() => null);
  if (response.status === 401 && path !== "/vendor/sign-in") {
    sessionStorage.removeItem("pactwise-vendor-session");
  }
  return { ok: response.ok, status: response.status, data };
}

function errorText(result) {
  return (result.data && result.data.error && result.data.error.message) || "Something went wrong; try again.";
}

function field(label, input, hint) {
  const id = `f-${Math.random().toString(36).slice(2)}`;
  input.id = id;
  const parts = [el("label", { for: id, text: label }), input];
  if (hint) {
    const hintId = `${id}-hint`;
    input.setAttribute("aria-describedby", hintId);
    parts.push(el("p", { class: "hint", id: hintId, text: hint }));
  }
  return parts;
}

function accountForm(title, intro, submitLabel, onSubmit) {
  const email = el("input", { type: "email", autocomplete: "email", required: "" });
  const password = el("input", { type: "password", autocomplete: "current-password", required: "", minlength: "10" });
  const problem = el("p", { class: "problem", role: "alert" });
  const form = el("form", {}, el("h2", { text: title }), el("p", { text: intro }),
    ...field("Email", email), ...field("Password", password, "At least 10 characters."),
    problem, el("button", { type: "submit", text: submitLabel }));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    problem.textContent = "";
    const result = await onSubmit(email.value, password.value);
    if (!result.ok) problem.textContent = errorText(result);
  });
  return form;
}

async function start() {
  const token = location.hash.slice(1);
  if (token.startsWith("pwi_")) {
    history.replaceState(null, "", location.pathname); // the link's token is not kept in the address bar
    show(accountForm("Join the tender", "You were invited to answer a tender. Create your account with your email " +
      "and a password (or use the password of the account you already have with this email).", "Join",
      async (email, password) => {
        const result = await call("POST", "/vendor/accept", { token, email, password });
        if (result.ok) { sessionStorage.setItem("pactwise-vendor-session", result.data.token); tenders(); }
        return result;
      }));
    return;
  }
  if (session()) return tenders();
  signIn();
}

function signIn() {
  document.getElementById("sign-out").hidden = true;
  show(accountForm("Sign in", "Sign in to see the tenders you were invited to.", "Sign in", async (email, password) => {
    const result = await call("POST", "/vendor/sign-in", { email, password });
    if (result.ok) { sessionStorage.setItem("pactwise-vendor-session", result.data.token); tenders(); }
    return result;
  }));
}

async function tenders() {
  const signOut = document.getElementById("sign-out");
  signOut.hidden = false;
  signOut.onclick = () => { sessionStorage.removeItem("pactwise-vendor-session"); signIn(); };
  const result = await call("GET", "/vendor/tenders");
  if (!result.ok) return signIn();
  const list = el("ul");
  for (const tender of result.data) {
    const link = el("a", { href: `#tender-${tender.id}`, text: tender.title });
    link.addEventListener("click", (event) => { event.preventDefault(); openTender(tender.id); });
    list.append(el("li", {}, link, el("span", { text: ` — submissions until ${when(tender.deadlines.submissions_close)}` })));
  }
  show(el("h2", { text: "Your tenders" }), result.data.length ? list : el("p", { text: "No tender yet." }));
}

async function openTender(id) {
  const result = await call("GET", `/vendor/tenders/${id}`);
  if (!result.ok) { say(errorText(result)); return tenders(); }
  const tender = result.data;
  const back = el("button", { type: "button", class: "secondary", text: "All tenders" });
  back.addEventListener("click", tenders);
  const open = tender.phase === "open" && new Date(tender.deadlines.submissions_close) > new Date();
  const parts = [
    back,
    el("h2", { text: tender.title }),
    el("p", { text: `${tender.buyer}. ${tender.summary}` }),
    el("p", { class: "deadline", text: `Questions until ${when(tender.deadlines.questions_close)}. ` +
      `Submissions until ${when(tender.deadlines.submissions_close)}.` }),
    el("p", { text: tender.my_submissions ? `You have submitted ${tender.my_submissions} time(s); the last submission counts.` :
      "You have not submitted yet." }),
  ];
  parts.push(await questions(id, tender));
  if (open) parts.push(submissionForm(id, tender));
  else parts.push(el("p", { text: "Submissions are closed." }));
  show(...parts);
}

async function questions(id, tender) {
  const section = el("section", { "aria-labelledby": "q-title" }, el("h2", { id: "q-title", text: "Questions and answers" }));
  const result = await call("GET", `/vendor/tenders/${id}/questions`);
  const list = el("dl");
  for (const q of result.ok ? result.data : []) {
    list.append(el("dt", { text: q.question + (q.mine ? " (your question)" : "") }),
      el("dd", { text: q.answer || "Not answered yet." }));
  }
  section.append(list);
  if (new Date(tender.deadlines.questions_close) > new Date()) {
    const text = el("textarea", { required: "", maxlength: "4000" });
    const problem = el("p", { class: "problem", role: "alert" });
    const form = el("form", {}, ...field("Ask a question", text, "The answer is published to every invited vendor, without your name."),
      problem, el("button", { type: "submit", text: "Send the question" }));
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const sent = await call("POST", `/vendor/tenders/${id}/questions`, { question: text.value });
      if (sent.ok) { say("Your question was sent."); openTender(id); } else problem.textContent = errorText(sent);
    });
    section.append(form);
  }
  return section;
}

// Files travel in chunks (resumable uploads): each file is declared with its size and SHA-256, sent chunk by chunk
// from the offset the service says it has, and finished (the service checks it and inspects it). A network error
// retries with backoff from the service's offset; when that gives up, a Resume button beside the file carries on.
const CHUNK_BYTES = 1024 * 1024;
const RETRY_DELAYS_MS = [1000, 2000, 4000, 8000];

async function sha256Hex(file) {
  const digest = await crypto.subtle.digest("SHA-256", await file.arrayBuffer());
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

function pause(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

// One chunk with upload progress (fetch does not report it). `status` 0 means the network failed.
function putChunk(uploadId, offset, blob, onProgress) {
  return new Promise((resolve) => {
    const request = new XMLHttpRequest();
    request.open("PUT", `${API}/vendor/uploads/${uploadId}?offset=${offset}`);
    request.setRequestHeader("Content-Type", "application/octet-stream");
    request.setRequestHeader("Authorization", `Bearer ${session()}`);
    request.upload.onprogress = (event) => { if (event.lengthComputable) onProgress(event.loaded); };
    request.onload = () => {
      let data = null;
      try { data = JSON.parse(request.responseText); } catch (_) { data = null; }
      resolve({ ok: request.status >= 200 && request.status < 300, status: request.status, data });
    };
    request.onerror = () => resolve({ ok: false, status: 0, data: null });
    request.send(blob);
  });
}

// A file of the form: its row in the list, its progress and its refusal, and where its upload stands.
function fileEntry(file) {
  const id = `file-${Math.random().toString(36).slice(2)}`;
  const progress = el("progress", { max: String(file.size || 1), value: "0", id: `${id}-progress`, "aria-label": `${file.name} uploaded` });
  const state = el("span", { class: "file-state", id: `${id}-state`, text: "Waiting to upload." });
  const problem = el("p", { class: "problem", id: `${id}-problem` });
  const resume = el("button", { type: "button", class: "secondary", hidden: "", text: `Resume ${file.name}` });
  const row = el("li", { class: "file", "data-file": file.name }, el("span", { class: "file-name", text: file.name }), " ", state, progress, problem, resume);
  row.setAttribute("aria-describedby", `${id}-state ${id}-problem`);
  return { file, row, progress, state, problem, resume, uploadId: null, finished: false, announced: 0 };
}

function showProgress(entry, bytes) {
  entry.progress.value = bytes;
  const share = entry.file.size ? Math.floor((100 * bytes) / entry.file.size) : 100;
  entry.state.textContent = `${share}% uploaded.`;
  // The live region hears every quarter, not every byte.
  const quarter = Math.floor(share / 25);
  if (quarter > entry.announced) { entry.announced = quarter; say(`${entry.file.name}: ${share}% uploaded.`); }
}

function refuse(entry, message) {
  entry.problem.textContent = message;
  entry.state.textContent = "Refused.";
  entry.row.classList.add("refused");
}

// Uploads one file to the end and finishes it; resolves to true when the service accepted it, false otherwise (the
// reason is beside the file; a network failure shows the Resume button).
async function upload(tenderId, entry) {
  if (entry.finished) return true;
  entry.problem.textContent = "";
  entry.row.classList.remove("refused");
  entry.resume.hidden = true;
  let offset = 0;
  if (entry.uploadId) {
    const where = await call("GET", `/vendor/uploads/${entry.uploadId}`);
    if (where.ok) offset = where.data.received; else entry.uploadId = null;
  }
  if (!entry.uploadId) {
    entry.state.textContent = "Checking the file…";
    const sha256 = await sha256Hex(entry.file);
    const started = await call("POST", `/vendor/tenders/${tenderId}/uploads`, { name: entry.file.name, size: entry.file.size, sha256 });
    if (!started.ok) {
      const listed = (started.data && started.data.problems) || [];
      refuse(entry, listed.length ? listed.map((p) => p.message).join(" ") : errorText(started));
      return false;
    }
    entry.uploadId = started.data.id;
    entry.row.dataset.upload = entry.uploadId;
  }
  let failures = 0;
  while (offset < entry.file.size) {
    showProgress(entry, offset);
    const end = Math.min(offset + CHUNK_BYTES, entry.file.size);
    const sent = await putChunk(entry.uploadId, offset, entry.file.slice(offset, end), (loaded) => showProgress(entry, offset + loaded));
    if (sent.ok) { offset = sent.data.received; failures = 0; continue; }
    if (sent.status !== 0 && sent.status < 500 && sent.status !== 400) {
      refuse(entry, errorText(sent));
      return false;
    }
    // A network error (or the service's answer that it has another offset): ask where it stands, then go on.
    if (sent.status === 0) {
      if (failures >= RETRY_DELAYS_MS.length) {
        entry.state.textContent = "Paused: the connection keeps failing.";
        entry.problem.textContent = `The upload of ${entry.file.name} stopped at ${Math.floor((100 * offset) / (entry.file.size || 1))}%. Check your connection, then press Resume.`;
        entry.resume.hidden = false;
        say(`${entry.file.name}: the upload paused; press Resume when your connection is back.`);
        return false;
      }
      entry.state.textContent = `Connection lost; trying again in ${RETRY_DELAYS_MS[failures] / 1000} s…`;
      await pause(RETRY_DELAYS_MS[failures]);
      failures += 1;
    }
    const where = await call("GET", `/vendor/uploads/${entry.uploadId}`);
    if (where.ok) {
      // Refused although the service has what we thought: the chunk itself is wrong; say so.
      if (sent.status === 400 && where.data.received === offset) { refuse(entry, errorText(sent)); return false; }
      offset = where.data.received;
    } else if (where.status !== 0) { entry.uploadId = null; refuse(entry, errorText(where)); return false; }
  }
  showProgress(entry, offset);
  entry.state.textContent = "Inspecting…";
  const finished = await call("POST", `/vendor/uploads/${entry.uploadId}/finish`);
  if (!finished.ok) {
    const listed = (finished.data && finished.data.problems) || [];
    refuse(entry, listed.length ? listed.map((p) => p.message).join(" ") : errorText(finished));
    if (!listed.length || listed.some((p) => p.code !== "incomplete")) entry.uploadId = null;
    return false;
  }
  entry.finished = true;
  entry.state.textContent = `Uploaded and accepted (${finished.data.finished}).`;
  entry.row.classList.add("accepted");
  return true;
}

function submissionForm(id, tender) {
  const answers = {};
  const technical = el("fieldset", {}, el("legend", { text: "Technical envelope" }));
  for (const requirement of tender.requirements) {
    const input = el("textarea", { "data-code": requirement.code });
    answers[requirement.code] = input;
    technical.append(...field(`${requirement.code}: ${requirement.text}${requirement.mandatory ? " (mandatory)" : ""}`, input));
  }
  const files = el("input", { type: "file", multiple: "" });
  technical.append(...field("Files", files, `Accepted: ${tender.accepted_files.join(", ")}. Files with macros, scripts or attachments are refused.`));
  const fileList = el("ul", { class: "files", "aria-label": "Files to submit" });
  technical.append(fileList);
  let entries = [];
  files.addEventListener("change", () => {
    entries = Array.from(files.files, fileEntry);
    fileList.replaceChildren(...entries.map((e) => e.row));
    for (const entry of entries) entry.resume.addEventListener("click", () => form.requestSubmit());
  });
  const prices = {};
  const price = el("fieldset", {}, el("legend", { text: `Price envelope (${tender.currency})` }));
  for (const line of tender.price_lines.filter((l) => !l.open_amount)) {
    const input = el("input", { type: "text", inputmode: "decimal", "data-code": line.code });
    prices[line.code] = input;
    const quantity = line.quantity === null ? "" : ` × ${line.quantity}`;
    price.append(...field(`${line.code}: ${line.description}, price per ${line.unit}${quantity}`, input, "For example 1234.50"));
  }
  const problems = el("ul", { class: "problem", role: "alert", id: "submission-problems" });
  const submit = el("button", { type: "submit", text: "Submit" });
  const form = el("form", {}, el("h2", { text: "Your submission" }),
    el("p", { text: "Both envelopes are sealed until the deadline. You may submit again until then; the last submission counts." }),
    technical, price, problems, submit);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    problems.replaceChildren();
    submit.disabled = true;
    try {
      let allUploaded = true;
      for (const entry of entries) if (!(await upload(id, entry))) allUploaded = false;
      if (!allUploaded) {
        problems.append(el("li", { text: "Nothing was submitted yet: see the files marked above." }));
        say("Nothing was submitted yet: some files need your attention.");
        return;
      }
      const body = { answers: {}, uploads: entries.map((e) => e.uploadId), prices: { currency: tender.currency, unit_prices: {} } };
      for (const [code, input] of Object.entries(answers)) if (input.value.trim()) body.answers[code] = input.value;
      for (const [code, input] of Object.entries(prices)) body.prices.unit_prices[code] = input.value;
      const result = await call("POST", `/vendor/tenders/${id}/submission`, body);
      if (result.ok) { say(`Submission ${result.data.submission} received and sealed.`); return openTender(id); }
      const listed = (result.data && result.data.problems) || [];
      if (!listed.length) problems.append(el("li", { text: errorText(result) }));
      for (const p of listed) {
        const entry = entries.find((e) => e.file.name === p.field);
        if (entry) { refuse(entry, p.message); entry.finished = false; entry.uploadId = null; }
        else problems.append(el("li", { text: `${p.field}: ${p.message}` }));
      }
      say("Nothing was submitted: see the problems shown.");
    } finally {
      submit.disabled = false;
    }
  });
  return form;
}

start();
