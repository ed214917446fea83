import { describe, expect, it, vi } from "vitest";
import { fireEvent, render, screen, waitFor } from "@testing-library/svelte";
import { emit } from "@tauri-apps/api/event";
import Review from "../src/views/Review.svelte";
import { callsOf, installReviewBackend } from "./backend";
import { DOC, PAGE_1, PAGE_2, spanOn } from "./review-fixture";

const selectedId = () => document.querySelector('[data-testid=checklist-item][aria-selected="true"]')?.getAttribute("data-item-id");

async function open() {
  const backend = installReviewBackend();
  render(Review, { documentId: DOC, name: "mutual-nda-northwind-contoso.pdf" });
  await screen.findAllByTestId("checklist-item");
  // The first unconfirmed item is selected and its quote highlighted on page 1.
  await waitFor(() => expect(selectedId()).toBe("nda.parties.identified"));
  await waitFor(() => expect(document.querySelectorAll('[data-page="1"] .mark.current').length).toBe(7));
  return backend;
}

/** Selects `text` in the page's text layer the way a drag would, and lets the pane see it. */
function selectInPage(page: number, text: string) {
  const pieces = Array.from(document.querySelectorAll<HTMLElement>(`[data-page="${page}"] [data-start]`));
  const host = pieces.find((p) => p.textContent!.includes(text))!;
  const node = host.firstChild!;
  const at = node.textContent!.indexOf(text);
  const range = document.createRange();
  range.setStart(node, at);
  range.setEnd(node, at + text.length);
  const sel = window.getSelection()!;
  sel.removeAllRanges();
  sel.addRange(range);
  document.dispatchEvent(new Event("selectionchange"));
}

describe("Review view", () => {
  it("draws the page's text layer from the runs and highlights every verified quote on it", async () => {
    const backend = await open();
    const layer = screen.getAllByTestId("text-layer")[0];
    expect(layer.querySelectorAll("span[data-start]").length).toBeGreaterThan(30);
    // The page image comes from the backend's renderer through the custom protocol.
    expect(document.querySelector<HTMLImageElement>('[data-page="1"] img')!.getAttribute("src")).toMatch(
      new RegExp(`^pwpage://localhost/${DOC}/1\\?scale=`),
    );
    // Two quotes on page 1: the selected one and the other item's.
    expect(document.querySelectorAll('[data-page="1"] .mark.quote').length).toBeGreaterThan(0);
    // Page 2 is synthetic: shown as text and labelled so.
    await waitFor(() => expect(screen.getByTestId("page-count").textContent).toContain("of 2"));
    await waitFor(() => expect(document.querySelector('[data-page="2"]')?.textContent).toContain("synthetic page"));
    // The page count comes with the first page: no page past the last one is ever asked for.
    const asked = callsOf(backend, "page_layout").map((c) => (c.args as { page: number }).page);
    expect(Math.max(...asked)).toBeLessThanOrEqual(2);
  });

  it("a quote is highlighted at the range the backend sends with it; one sent without a range is not marked", async () => {
    const backend = installReviewBackend();
    const items = backend.reviews[DOC].items;
    // The backend placed the parties quote on "Contoso Ltd." only: that is what is marked, whatever the quote says.
    items.find((i) => i.id === "nda.parties.identified")!.quote_span = spanOn(PAGE_1, "Contoso Ltd.");
    items.find((i) => i.id === "nda.confidentiality.definition")!.quote_span = null;
    render(Review, { documentId: DOC, name: "mutual-nda-northwind-contoso.pdf" });
    await screen.findAllByTestId("checklist-item");
    await waitFor(() => expect(selectedId()).toBe("nda.parties.identified"));
    await waitFor(() => expect(document.querySelectorAll('[data-page="1"] .mark.current').length).toBe(2));
    expect(document.querySelectorAll('[data-page="1"] .mark.quote').length).toBe(0);
  });

  it("a page image that cannot be rendered leaves its text layer visible in place, with a note", async () => {
    await open();
    await fireEvent.error(document.querySelector('[data-page="1"] img')!);
    await waitFor(() => expect(document.querySelector('[data-page="1"] [role=note]')?.textContent).toContain("could not be rendered"));
    expect(document.querySelector('[data-page="1"] [data-testid=text-layer]')!.classList.contains("visible")).toBe(true);
  });

  it("j/k and arrows move through the items in the checklist's order; n goes to the next unconfirmed", async () => {
    await open();
    await fireEvent.keyDown(window, { key: "j" });
    await waitFor(() => expect(selectedId()).toBe("nda.confidentiality.definition"));
    await fireEvent.keyDown(window, { key: "ArrowDown" });
    await fireEvent.keyDown(window, { key: "ArrowDown" });
    await fireEvent.keyDown(window, { key: "j" });
    await waitFor(() => expect(selectedId()).toBe("nda.remedies.injunctive"));
    await fireEvent.keyDown(window, { key: "k" });
    await waitFor(() => expect(selectedId()).toBe("nda.term.return"));
    // n skips the confirmed last item and wraps to the first unconfirmed.
    await fireEvent.keyDown(window, { key: "n" });
    await waitFor(() => expect(selectedId()).toBe("nda.parties.identified"));
  });

  it("c confirms the selected item and the checklist shows it confirmed at once", async () => {
    const backend = await open();
    await fireEvent.keyDown(window, { key: "c" });
    await waitFor(() => expect(callsOf(backend, "correct_item")).toHaveLength(1));
    expect(callsOf(backend, "correct_item")[0].args).toEqual({
      id: DOC,
      input: { item_id: "nda.parties.identified", confirm: true, status: null, quote: null, note: null, acknowledge_warnings: false },
    });
    await waitFor(() =>
      expect(document.querySelector('[data-item-id="nda.parties.identified"]')!.textContent).toContain("Confirmed"),
    );
    expect(screen.getByTestId("citation-by").textContent).toContain("Confirmed by Ann");
  });

  it("e opens the status menu; selected page text becomes the quote and is verified by the backend", async () => {
    const backend = await open();
    await fireEvent.keyDown(window, { key: "j" });
    await fireEvent.keyDown(window, { key: "j" });
    await waitFor(() => expect(selectedId()).toBe("nda.term.duration"));
    await fireEvent.keyDown(window, { key: "e" });
    const status = await screen.findByTestId("correct-status");
    expect(document.activeElement).toBe(status);
    // Typing in the form does not trigger the view's shortcuts.
    await fireEvent.keyDown(status, { key: "j" });
    expect(selectedId()).toBe("nda.term.duration");
    await fireEvent.change(status, { target: { value: "present" } });
    selectInPage(2, "survive for three years");
    await waitFor(() => expect(screen.getByTestId("selection-text").textContent).toBe("survive for three years"));
    await fireEvent.click(screen.getByTestId("correct-save"));
    await waitFor(() => expect(callsOf(backend, "correct_item")).toHaveLength(1));
    expect((callsOf(backend, "correct_item")[0].args as { input: unknown }).input).toEqual({
      item_id: "nda.term.duration",
      confirm: false,
      status: "present",
      quote: { text: "survive for three years", page: 2 },
      note: null,
      acknowledge_warnings: false,
    });
    await waitFor(() => expect(screen.queryByTestId("correct-form")).toBeNull());
    expect(screen.getByTestId("citation-quote").textContent).toContain("survive for three years");
    // The new quote is highlighted on its page.
    await waitFor(() => expect(document.querySelector('[data-page="2"] mark.current')?.textContent).toBe("survive for three years"));
  });

  it("a quote the backend cannot find is refused in the form, which keeps the note", async () => {
    const backend = await open();
    backend.pages[DOC][1].text = "Different text now.";
    await fireEvent.keyDown(window, { key: "e" });
    await screen.findByTestId("correct-form");
    selectInPage(2, "three years");
    await fireEvent.input(screen.getByTestId("correct-note"), { target: { value: "checked twice" } });
    await fireEvent.keyDown(screen.getByTestId("correct-note"), { key: "Enter", ctrlKey: true });
    expect((await screen.findByTestId("correct-error")).textContent).toContain("not found on page 2");
    expect((screen.getByTestId("correct-note") as HTMLTextAreaElement).value).toBe("checked twice");
  });

  it("a sync round that changed the review reads it again in place: the selection and a correction being typed stay", async () => {
    const backend = await open();
    await fireEvent.keyDown(window, { key: "e" });
    await screen.findByTestId("correct-form");
    await fireEvent.input(screen.getByTestId("correct-note"), { target: { value: "half typed" } });
    // Another desktop confirmed the second item.
    const other = backend.reviews[DOC].items.find((i) => i.id === "nda.confidentiality.definition")!;
    other.method = "person";
    other.confirmed_by = "Bob";
    const before = callsOf(backend, "document_review").length;
    await emit("records-changed-event", { rounds: 1 });
    await waitFor(() => expect(callsOf(backend, "document_review").length).toBe(before + 1));
    await waitFor(() =>
      expect(document.querySelector('[data-item-id="nda.confidentiality.definition"]')?.textContent).toContain("Confirmed"),
    );
    expect(selectedId()).toBe("nda.parties.identified");
    expect((screen.getByTestId("correct-note") as HTMLTextAreaElement).value).toBe("half typed");
  });

  it("Escape closes the correction form first, and only then leaves the review", async () => {
    installReviewBackend();
    let back = 0;
    render(Review, { documentId: DOC, name: "nda.pdf", onback: () => (back += 1) });
    await screen.findAllByTestId("checklist-item");
    await fireEvent.keyDown(window, { key: "e" });
    await screen.findByTestId("correct-form");
    await fireEvent.keyDown(window, { key: "Escape" });
    await waitFor(() => expect(screen.queryByTestId("correct-form")).toBeNull());
    expect(back).toBe(0);
    await fireEvent.keyDown(window, { key: "Escape" });
    expect(back).toBe(1);
  });

  it("finalize names the critical items still open, then finalizes with a new vendor and exports through the save dialog", async () => {
    const backend = await open();
    await fireEvent.keyDown(window, { key: "f" });
    const blocked = await screen.findByTestId("finalize-blocked");
    expect(blocked.textContent).toContain("2 critical items still need a person");
    expect(blocked.textContent).toContain("How long do the confidentiality obligations last?");
    expect((screen.getByTestId("finalize-submit") as HTMLButtonElement).disabled).toBe(true);
    await fireEvent.keyDown(screen.getByTestId("finalize-dialog"), { key: "Escape" });
    // Confirm both critical items with the keyboard.
    for (const id of ["nda.confidentiality.definition", "nda.term.duration"]) {
      await fireEvent.click(document.querySelector(`[data-item-id="${id}"]`)!);
      await fireEvent.keyDown(window, { key: "c" });
      await waitFor(() => expect(document.querySelector(`[data-item-id="${id}"]`)!.textContent).toContain("Confirmed"));
    }
    expect(screen.getByTestId("finalize-status").textContent).toContain("Every critical item is confirmed");
    await fireEvent.keyDown(window, { key: "f" });
    await screen.findByTestId("finalize-dialog");
    expect(screen.getByTestId("finalize-counterparty").textContent).toBe("Contoso Ltd.");
    expect(screen.getByTestId("finalize-dialog").textContent).toContain("New York");
    expect((screen.getByTestId("vendor-new-name") as HTMLInputElement).value).toBe("Contoso Ltd.");
    await fireEvent.click(screen.getByTestId("finalize-submit"));
    expect((await screen.findByTestId("finalized")).textContent).toContain("Finalized by Ann");
    expect(callsOf(backend, "finalize_review")[0].args).toEqual({
      id: DOC,
      input: { vendor_id: null, new_vendor_name: "Contoso Ltd." },
    });
    backend.savePath = "/home/ann/nda review.pdf";
    await fireEvent.click(screen.getByTestId("export-pdf"));
    await waitFor(() => expect(screen.getByTestId("export-notice").textContent).toContain("Saved /home/ann/nda review.pdf"));
    expect(callsOf(backend, "export_review")[0].args).toEqual({ id: DOC, format: "pdf", path: "/home/ann/nda review.pdf" });
  });

  it("Run again re-runs the whole pipeline and says the person's work is kept", async () => {
    const backend = await open();
    await fireEvent.click(screen.getByTestId("rerun"));
    await waitFor(() => expect(callsOf(backend, "rerun_pipeline")).toHaveLength(1));
    expect(callsOf(backend, "rerun_pipeline")[0].args).toEqual({ id: DOC, stage: null });
    expect((await screen.findByTestId("export-notice")).textContent).toContain("corrections are kept");
  });

  it("Dry run (button or d) says in words the route a real run would take, its model calls, and that nothing was saved", async () => {
    const stage = (s: string, status: string, reason: string | null = null) => ({
      stage: s,
      status,
      attempt: 1,
      model: null,
      input_tokens: 0,
      output_tokens: 0,
      cache_read_tokens: 0,
      latency_ms: 3,
      outcome: null,
      reason,
    });
    const backend = installReviewBackend({
      dryRun: (id) => {
        const r = structuredClone(backend.reviews[id]);
        return {
          ...r,
          mode: "dry_run",
          planned_model_calls: 9,
          gate: { route: "person", reason: "critical_low_confidence", detail: "critical item nda.term.duration answered with confidence 25%" },
          stages: [stage("extract", "done"), stage("classify", "done", "dry run: no model calls"), stage("checklist", "done"), stage("gate", "done"), stage("finalize", "done")],
        };
      },
    });
    render(Review, { documentId: DOC, name: "mutual-nda-northwind-contoso.pdf" });
    await screen.findAllByTestId("checklist-item");
    const before = structuredClone(backend.reviews[DOC]);

    await fireEvent.keyDown(window, { key: "d" });
    await waitFor(() => expect(callsOf(backend, "dry_run_pipeline")).toHaveLength(1));
    expect(callsOf(backend, "dry_run_pipeline")[0].args).toEqual({ id: DOC });
    const panel = await screen.findByTestId("dry-run-panel");
    expect(panel.textContent).toContain("nothing was saved and the model was not asked");
    expect(screen.getByTestId("dry-run-route").textContent).toBe(
      "A real run would send this document to a person. A critical item is uncertain or could not be answered.",
    );
    expect(screen.getByTestId("dry-run-calls").textContent).toContain("It would make 9 model calls");
    expect(panel.textContent).toContain("Reading the pages: done");
    expect(panel.textContent).toContain("Review gate: done");
    // People's words only: no codes, no stage or enum names, no item ids.
    for (const code of ["critical_low_confidence", "dry_run", "extract:", "classify", "nda.term"]) {
      expect(panel.textContent).not.toContain(code);
    }
    // The review on screen is the recorded one, untouched, and nothing else was asked of the backend.
    expect(screen.getByTestId("review-gate").textContent).toContain("red flag");
    expect(backend.reviews[DOC]).toEqual(before);
    expect(callsOf(backend, "rerun_pipeline")).toHaveLength(0);
    expect(callsOf(backend, "correct_item")).toHaveLength(0);

    // Without a model, and with pages that could not be read; the button does the same as d.
    backend.dryRun = (id) => ({
      ...structuredClone(backend.reviews[id]),
      mode: "dry_run",
      planned_model_calls: 0,
      gate: { route: "person", reason: "ocr_failed", detail: "no page could be read" },
      stages: [stage("extract", "degraded", "the pages could not be read: the file is damaged")],
    });
    await fireEvent.click(screen.getByRole("button", { name: "Close the dry run" }));
    expect(screen.queryByTestId("dry-run-panel")).toBeNull();
    await fireEvent.click(screen.getByTestId("dry-run"));
    await waitFor(() => expect(screen.getByTestId("dry-run-calls").textContent).toContain("no model call"));
    expect(screen.getByTestId("dry-run-route").textContent).toContain("not even by OCR");
    expect(screen.getByTestId("dry-run-panel").textContent).toContain("the pages could not be read: the file is damaged");
  });

  it("a dry run the backend refuses says so where the person is looking", async () => {
    const backend = installReviewBackend({
      dryRun: () => {
        throw { code: "not_found", message: "This document is not in your organization." };
      },
    });
    render(Review, { documentId: DOC, name: "mutual-nda-northwind-contoso.pdf" });
    await screen.findAllByTestId("checklist-item");
    await fireEvent.keyDown(window, { key: "d" });
    const panel = await screen.findByTestId("dry-run-panel");
    expect(panel.getAttribute("role")).toBe("alert");
    expect(panel.textContent).toContain("The dry run could not run: This document is not in your organization.");
    expect(callsOf(backend, "dry_run_pipeline")).toHaveLength(1);
  });

  it("g jumps to the quote and Ctrl+F finds in the document", async () => {
    await open();
    await fireEvent.keyDown(window, { key: "g" });
    await waitFor(() => expect(document.querySelector('[data-page="1"]')!.classList.contains("flash")).toBe(true));
    await fireEvent.keyDown(window, { key: "f", ctrlKey: true });
    const find = await screen.findByTestId("find-input");
    expect(document.activeElement).toBe(find);
    await fireEvent.input(find, { target: { value: "party" } });
    await waitFor(() => expect(screen.getByTestId("find-count").textContent).toContain("1 of 2"));
  });

  it("r and the Report button open the document's contract review report", async () => {
    installReviewBackend();
    const onreport = vi.fn();
    render(Review, { documentId: DOC, name: "mutual-nda-northwind-contoso.pdf", onreport });
    await screen.findAllByTestId("checklist-item");
    await fireEvent.keyDown(window, { key: "r" });
    expect(onreport).toHaveBeenLastCalledWith(DOC, "mutual-nda-northwind-contoso.pdf");
    await fireEvent.click(screen.getByTestId("open-report"));
    expect(onreport).toHaveBeenCalledTimes(2);
  });

  it("the header says why a person is needed in words, with the scores behind why?", async () => {
    await open();
    const header = document.querySelector<HTMLElement>("header.head")!;
    expect(screen.getByTestId("review-gate").textContent).toBe("1 item carries a red flag: decide whether it is acceptable.");
    // No score and no id in the header until the person asks why.
    expect(header.textContent).not.toMatch(/%|nda\./);
    await fireEvent.click(screen.getByTestId("review-why-toggle"));
    const why = screen.getByTestId("review-why");
    expect(why.textContent).toContain("Contract type Non-Disclosure Agreement, chosen by keywords: 50\u00a0% sure.");
    expect(why.textContent).toContain("Least sure answer of the pre-fill:");
    expect(why.textContent).toContain("“Is Confidential Information defined, including oral disclosures”");
    expect(why.textContent).not.toContain("nda.confidentiality.definition");
  });

  it("the finalize dialog names what it shows in words, never a type name of the bindings", async () => {
    await open();
    await fireEvent.keyDown(window, { key: "f" });
    const dialog = await screen.findByTestId("finalize-dialog");
    expect(dialog.querySelector("h3")!.textContent).toBe("Found in the contract");
    expect(dialog.textContent).not.toMatch(/_Serialize|_Deserialize/);
  });
});

describe("words on screen", () => {
  it("no view writes a bindings type name (Extracted_Serialize …) as text", () => {
    // A rename of the generated types once rewrote a heading to "Extracted_Serialize from the contract".
    const sources = import.meta.glob("../src/**/*.svelte", { query: "?raw", import: "default", eager: true }) as Record<string, string>;
    expect(Object.keys(sources).length).toBeGreaterThan(20);
    for (const [file, source] of Object.entries(sources)) {
      const markup = source.replace(/<script[\s\S]*?<\/script>/g, "").replace(/<style[\s\S]*?<\/style>/g, "");
      // Text between tags, outside {expressions}.
      const text = markup.replace(/<[^>]*>/g, " ").replace(/\{[^}]*\}/g, " ");
      expect(text, file).not.toMatch(/\b\w+_(Serialize|Deserialize)\b/);
    }
  });

  it("an item's value stands beside its status; Confirm on a doubtful quote shows why first and a second c keeps it", async () => {
    const backend = installReviewBackend();
    const items = backend.reviews[DOC].items;
    const term = items.find((i) => i.id === "nda.term.duration")!;
    term.value = "3 years";
    term.warnings = [
      { concern: "table_of_contents", message: "the quote is in the table of contents, which only names the clause; quote the clause in the body" },
    ];
    render(Review, { documentId: DOC, name: "mutual-nda-northwind-contoso.pdf" });
    await screen.findAllByTestId("checklist-item");
    const row = () => document.querySelector('[data-item-id="nda.term.duration"]')!;
    expect(row().querySelector("[data-testid=item-value]")!.textContent).toBe("3 years");
    expect(row().querySelector("[data-testid=item-warning]")!.textContent).toContain("Check the quote");
    await fireEvent.click(row());
    expect(screen.getByTestId("citation-value").textContent).toContain("3 years");
    expect(screen.getByTestId("quote-warnings").textContent).toContain("table of contents");
    await fireEvent.keyDown(window, { key: "c" });
    // Nothing is saved yet: the warnings are shown where the person looks, and Confirm now says what it does.
    expect((await screen.findByTestId("confirm-warnings")).textContent).toContain("only names the clause");
    expect(callsOf(backend, "correct_item")).toHaveLength(0);
    expect(screen.getByTestId("confirm").textContent).toContain("Confirm anyway");
    await fireEvent.keyDown(window, { key: "c" });
    await waitFor(() => expect(callsOf(backend, "correct_item")).toHaveLength(1));
    expect((callsOf(backend, "correct_item")[0].args as { input: { acknowledge_warnings: boolean } }).input.acknowledge_warnings).toBe(true);
    await waitFor(() => expect(row().textContent).toContain("Confirmed"));
  });

  it("a corrected quote the backend doubts is kept only with Save anyway", async () => {
    const backend = await open();
    await fireEvent.keyDown(window, { key: "e" });
    selectInPage(1, "MUTUAL");
    await waitFor(() => expect(screen.getByTestId("selection-text").textContent).toBe("MUTUAL"));
    await fireEvent.click(screen.getByTestId("correct-save"));
    const check = await screen.findByTestId("correct-check");
    expect(check.textContent).toContain("only a section's heading");
    expect(screen.getByTestId("correct-form")).toBeTruthy();
    await fireEvent.click(screen.getByTestId("correct-save-anyway"));
    await waitFor(() => expect(screen.queryByTestId("correct-form")).toBeNull());
    const sent = callsOf(backend, "correct_item").map((c) => (c.args as { input: { acknowledge_warnings: boolean } }).input.acknowledge_warnings);
    expect(sent).toEqual([false, true]);
  });

  it("a finalized review hides Confirm and Correct; Reopen asks why and opens it again", async () => {
    const backend = installReviewBackend();
    backend.reviews[DOC].finalized_at = "2026-11-30T11:00:00Z";
    backend.reviews[DOC].finalized_by = "Ann";
    render(Review, { documentId: DOC, name: "mutual-nda-northwind-contoso.pdf" });
    await screen.findByTestId("finalized");
    expect(screen.queryByTestId("confirm")).toBeNull();
    expect(screen.queryByTestId("correct")).toBeNull();
    expect(screen.getByTestId("citation-finalized").textContent).toContain("reopen it");
    await fireEvent.keyDown(window, { key: "c" });
    expect(callsOf(backend, "correct_item")).toHaveLength(0);
    await fireEvent.click(screen.getByTestId("reopen"));
    await fireEvent.click(screen.getByTestId("reopen-submit"));
    expect((await screen.findByTestId("reopen-error")).textContent).toContain("Say why");
    expect(callsOf(backend, "reopen_review")).toHaveLength(0);
    await fireEvent.input(screen.getByTestId("reopen-reason"), { target: { value: "the term was misread" } });
    await fireEvent.click(screen.getByTestId("reopen-submit"));
    await waitFor(() => expect(screen.queryByTestId("finalized")).toBeNull());
    expect(callsOf(backend, "reopen_review")[0].args).toEqual({ id: DOC, reason: "the term was misread" });
    expect(screen.getByTestId("confirm")).toBeTruthy();
  });

  it("opened at a quote no item carries (a field of the Contracts area), it shows that quote marked on its page", async () => {
    installReviewBackend();
    const at = spanOn(PAGE_2, "Either party may seek injunctive relief");
    render(Review, { documentId: DOC, name: "mutual-nda-northwind-contoso.pdf", quote: { page: 2, start: at.start, end: at.end } });
    await screen.findAllByTestId("checklist-item");
    await waitFor(() =>
      expect(document.querySelector('[data-page="2"] mark.current')?.textContent).toBe("Either party may seek injunctive relief"),
    );
    expect(selectedId()).toBeFalsy();
  });
});

describe("the review's stage log", () => {
  it("opens with s, asks for this document's log, and closes with Esc", async () => {
    const backend = installReviewBackend();
    render(Review, { documentId: DOC, name: "mutual-nda-northwind-contoso.pdf" });
    await screen.findByTestId("open-stage-log");
    await fireEvent.keyDown(window, { key: "s" });
    const log = await screen.findByTestId("stage-log");
    await waitFor(() => expect(callsOf(backend, "stage_log")).toHaveLength(1));
    expect(callsOf(backend, "stage_log")[0].args).toEqual({ id: DOC });
    expect(log.textContent).toContain("has not been through the pipeline yet");
    await fireEvent.keyDown(log, { key: "Escape" });
    await waitFor(() => expect(screen.queryByTestId("stage-log")).toBeNull());
  });
});
