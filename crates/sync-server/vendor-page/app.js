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
  const response = await fetch(API + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
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

function readFile(file) {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result).split(",", 2)[1] || "");
    reader.onerror = () => reject(reader.error);
    reader.readAsDataURL(file);
  });
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
  const prices = {};
  const price = el("fieldset", {}, el("legend", { text: `Price envelope (${tender.currency})` }));
  for (const line of tender.price_lines.filter((l) => !l.open_amount)) {
    const input = el("input", { type: "text", inputmode: "decimal", "data-code": line.code });
    prices[line.code] = input;
    const quantity = line.quantity === null ? "" : ` × ${line.quantity}`;
    price.append(...field(`${line.code}: ${line.description}, price per ${line.unit}${quantity}`, input, "For example 1234.50"));
  }
  const progress = el("progress", { max: "100", value: "0", hidden: "" });
  const problems = el("ul", { class: "problem", role: "alert" });
  const form = el("form", {}, el("h2", { text: "Your submission" }),
    el("p", { text: "Both envelopes are sealed until the deadline. You may submit again until then; the last submission counts." }),
    technical, price, problems, progress, el("button", { type: "submit", text: "Submit" }));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    problems.replaceChildren();
    const body = { answers: {}, files: [], prices: { currency: tender.currency, unit_prices: {} } };
    for (const [code, input] of Object.entries(answers)) if (input.value.trim()) body.answers[code] = input.value;
    for (const [code, input] of Object.entries(prices)) body.prices.unit_prices[code] = input.value;
    for (const file of files.files) body.files.push({ name: file.name, content_base64: await readFile(file) });
    progress.hidden = false;
    const result = await send(`/vendor/tenders/${id}/submission`, body, (share) => { progress.value = share; });
    progress.hidden = true;
    if (result.ok) { say(`Submission ${result.data.submission} received and sealed.`); return openTender(id); }
    const listed = (result.data && result.data.problems) || [];
    if (!listed.length) problems.append(el("li", { text: errorText(result) }));
    for (const p of listed) problems.append(el("li", { text: `${p.field}: ${p.message}` }));
  });
  return form;
}

// A submission with upload progress (fetch does not report it).
function send(path, body, onProgress) {
  return new Promise((resolve) => {
    const request = new XMLHttpRequest();
    request.open("POST", API + path);
    request.setRequestHeader("Content-Type", "application/json");
    request.setRequestHeader("Authorization", `Bearer ${session()}`);
    request.upload.onprogress = (event) => { if (event.lengthComputable) onProgress(Math.round((100 * event.loaded) / event.total)); };
    request.onload = () => {
      let data = null;
      try { data = JSON.parse(request.responseText); } catch (_) { data = null; }
      resolve({ ok: request.status >= 200 && request.status < 300, status: request.status, data });
    };
    request.onerror = () => resolve({ ok: false, status: 0, data: { error: { message: "The connection broke; nothing was submitted. Try again." } } });
    request.send(JSON.stringify(body));
  });
}

start();
