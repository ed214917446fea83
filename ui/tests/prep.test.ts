import { describe, expect, it } from "vitest";
import { fireEvent, render, screen, waitFor, within } from "@testing-library/svelte";
import PackageView from "../src/views/prep/PackageView.svelte";
import PrepStudio from "../src/views/PrepStudio.svelte";
import { bpToPercent, budgetFrom, majorToMinor, percentToBp, stateLabel } from "../src/lib/prep";
import {
  MEASURE_ERROR,
  PKG,
  PRICING_ERROR,
  WEIGHT_ERROR,
  callsOf,
  draftedPackage,
  emptyPackage,
  installPrepBackend,
  lock,
  viewOf,
} from "./prepBackend";
import type { Content, Package } from "../src/lib/bindings";

async function openPackage(model = "ready") {
  render(PackageView, { id: PKG, model });
  await screen.findByTestId("prep-package");
}

async function showArtifact(key: string, testid: string) {
  await fireEvent.keyDown(window, { key });
  return screen.findByTestId(testid);
}

function input(row: HTMLElement, field: string): HTMLInputElement {
  return row.querySelector(`[data-field=${field}]`) as HTMLInputElement;
}

function lastEdit(backend: ReturnType<typeof installPrepBackend>): Content {
  const edits = callsOf(backend, "prep_edit");
  return edits[edits.length - 1].args.content as Content;
}

describe("Prep Studio: the package", () => {
  it("shows the six artifacts with their states in words, the run's budget meter and the critic's findings", async () => {
    installPrepBackend();
    await openPackage();
    const tabs = screen.getAllByRole("tab");
    expect(tabs.map((t) => t.textContent?.replace(/\s+/g, " ").trim())).toEqual([
      "1 Intake valid, not approved",
      "2 Scope valid, not approved",
      "3 Requirements valid, not approved",
      "4 Evaluation criteria invalid: 1 error 1 finding",
      "5 Pricing schedule invalid: 1 error 1 finding",
      "6 Milestones valid, not approved",
    ]);
    expect(screen.getByTestId("meter-tokens").textContent).toBe("12,345 of 200,000");
    expect(screen.getByTestId("meter-cost").textContent).toBe("$0.0235 of $0.5000");
    expect(screen.getByTestId("run-status").textContent).toContain("critic cycles 3 (not converged)");
    const findings = screen.getAllByTestId("finding");
    expect(findings[0].textContent).toContain("Major");
    expect(findings[0].textContent).toContain("Pricing schedule");
    expect(findings[0].textContent).toContain("vendors cannot price visits");
    expect(findings[0].textContent).toContain("vendor's bid manager");
    expect(findings[1].textContent).toContain("Minor");
    expect(findings[1].textContent).toContain("yours to decide");
    expect(screen.getByTestId("precheck").textContent).toContain("the criteria is not approved");
    expect(stateLabel({ status: "stale" })).toBe("stale: something upstream changed");
  });

  it("requirements table: cells are edited by keyboard, Alt+Enter adds a row, Alt+Delete removes one, Ctrl+Enter saves", async () => {
    const backend = installPrepBackend();
    await openPackage();
    const editor = await showArtifact("3", "requirements-editor");
    let rows = within(editor).getAllByTestId("requirement-row");
    expect(rows).toHaveLength(3);
    expect(input(rows[1], "metric").value).toBe("median time to answer");

    // Alt+Enter in R-01 adds a row below it, focused on its code.
    input(rows[0], "text").focus();
    await fireEvent.keyDown(input(rows[0], "text"), { key: "Enter", altKey: true });
    rows = within(editor).getAllByTestId("requirement-row");
    expect(rows).toHaveLength(4);
    await waitFor(() => expect(document.activeElement).toBe(input(rows[1], "code")));
    await fireEvent.input(input(rows[1], "code"), { target: { value: "R-04" } });
    await fireEvent.input(input(rows[1], "text"), { target: { value: "Reports arrive monthly." } });
    await fireEvent.change(input(rows[1], "kind"), { target: { value: "scored" } });
    await fireEvent.input(input(rows[1], "metric"), { target: { value: "report delivered" } });
    await fireEvent.input(input(rows[1], "threshold"), { target: { value: "by the 5th working day" } });
    await fireEvent.change(input(rows[1], "verification"), { target: { value: "document" } });
    await fireEvent.input(input(rows[1], "needs"), { target: { value: "N1, N2" } });
    expect(screen.getByTestId("editor-dirty")).toBeTruthy();

    // Alt+↓ moves to the same cell one row down; Alt+Delete removes that row.
    input(rows[1], "text").focus();
    await fireEvent.keyDown(input(rows[1], "text"), { key: "ArrowDown", altKey: true });
    expect(document.activeElement).toBe(input(rows[2], "text"));
    await fireEvent.keyDown(input(rows[2], "text"), { key: "Delete", altKey: true });
    rows = within(editor).getAllByTestId("requirement-row");
    expect(rows.map((r) => input(r, "code").value)).toEqual(["R-01", "R-04", "R-03"]);

    // Ctrl+Enter saves the whole table as the requirements artifact.
    await fireEvent.keyDown(input(rows[0], "code"), { key: "Enter", ctrlKey: true });
    await waitFor(() => expect(callsOf(backend, "prep_edit")).toHaveLength(1));
    const content = lastEdit(backend);
    expect(content.artifact).toBe("requirements");
    expect(content.content).toEqual({
      items: [
        { code: "R-01", text: "Support 07:30-17:00 on school days.", kind: "mandatory", need_ids: ["N1"], measure: null },
        { code: "R-04", text: "Reports arrive monthly.", kind: "scored", need_ids: ["N1", "N2"], measure: { metric: "report delivered", threshold: "by the 5th working day", verification: "document" } },
        { code: "R-03", text: "Visits are prompt.", kind: "scored", need_ids: ["N2"], measure: { metric: "time to site", threshold: "<= 1 day", verification: "document" } },
      ],
    });
    expect(await screen.findByTestId("editor-message")).toHaveProperty("textContent", "Saved and validated.");
    expect(screen.queryByTestId("editor-dirty")).toBeNull();
    // Downstream artifacts are stale now (the backend says so; the tabs show it in words).
    expect(screen.getByTestId("state-criteria").textContent).toBe("stale: something upstream changed");
  });

  it("a validator error appears under the row it concerns, and the inputs point at it", async () => {
    const backend = installPrepBackend({ validate: (kind) => (kind === "requirements" ? [MEASURE_ERROR] : []) });
    await openPackage();
    const editor = await showArtifact("3", "requirements-editor");
    const rows = within(editor).getAllByTestId("requirement-row");
    await fireEvent.input(input(rows[2], "metric"), { target: { value: "" } });
    await fireEvent.input(input(rows[2], "threshold"), { target: { value: "" } });
    await fireEvent.change(input(rows[2], "verification"), { target: { value: "" } });
    await fireEvent.click(screen.getByTestId("editor-save"));
    await waitFor(() => expect(callsOf(backend, "prep_edit")).toHaveLength(1));
    const errorRow = await within(editor).findByTestId("row-errors");
    expect(errorRow.textContent).toContain("scored requirement R-03 needs a metric, a threshold and a verification method");
    // It sits right under R-03's row, and R-03's inputs are marked and described by it.
    const r03 = within(editor).getAllByTestId("requirement-row")[2];
    expect(r03.nextElementSibling).toBe(errorRow);
    expect(input(r03, "metric").getAttribute("aria-invalid")).toBe("true");
    const list = errorRow.querySelector("ul")!;
    expect(input(r03, "code").getAttribute("aria-describedby")).toBe(list.id);
    expect(input(within(editor).getAllByTestId("requirement-row")[1], "code").getAttribute("aria-invalid")).toBeNull();
    expect(screen.getByTestId("state-requirements").textContent).toBe("invalid: 1 error");
    expect(screen.getByTestId("prep-notice").textContent).toContain("1 validator error, shown next to the rows they concern");
  });

  it("criteria: the weight error sits at the total, the live total is exact, and fixing the weight clears it", async () => {
    const backend = installPrepBackend({
      validate: (_kind, content) => {
        const total = (content as { criteria: { weight_bp: number }[] }).criteria.reduce((s, c) => s + c.weight_bp, 0);
        return total === 10000 ? [] : [{ ...WEIGHT_ERROR, message: `criteria weights sum to ${total} basis points` }];
      },
    });
    await openPackage();
    const editor = await showArtifact("4", "criteria-editor");
    expect(within(editor).getByTestId("weight-errors").textContent).toContain("sum to 9500 basis points");
    expect(within(editor).getByTestId("weight-total").textContent).toBe("95.00 %");
    const rows = within(editor).getAllByTestId("criterion-row");
    expect(input(rows[1], "weight").getAttribute("aria-describedby")).toBe("crit-weight-errors");

    await fireEvent.input(input(rows[1], "weight"), { target: { value: "42.5" } });
    expect(within(editor).getByTestId("weight-total").textContent).toBe("92.50 %");
    await fireEvent.input(input(rows[1], "weight"), { target: { value: "50" } });
    expect(within(editor).getByTestId("weight-total").textContent).toBe("100.00 %");
    await fireEvent.keyDown(input(rows[1], "weight"), { key: "Enter", ctrlKey: true });
    await waitFor(() => expect(screen.getByTestId("state-criteria").textContent).toBe("valid, not approved"));
    expect(lastEdit(backend)).toEqual({
      artifact: "criteria",
      content: {
        criteria: [
          { id: "C1", name: "Responsiveness", description: "Answer and visit times.", weight_bp: 5000, requirement_codes: ["R-02"] },
          { id: "C2", name: "Visits", description: "On-site visits.", weight_bp: 5000, requirement_codes: ["R-03"] },
        ],
      },
    });
    expect(within(editor).queryByTestId("weight-errors")).toBeNull();

    // A weight that is not a percentage is refused before anything is sent, and what was typed stays.
    const saved = within(editor).getAllByTestId("criterion-row");
    await fireEvent.input(input(saved[0], "weight"), { target: { value: "fifty" } });
    await fireEvent.click(screen.getByTestId("editor-save"));
    expect(screen.getByTestId("editor-message").textContent).toContain("The weight of C1 is not a percentage");
    expect(callsOf(backend, "prep_edit")).toHaveLength(1);
    expect(input(saved[0], "weight").value).toBe("fifty");
  });

  it("pricing: the open line's error is under its row; a new row and a fixed line are saved", async () => {
    const backend = installPrepBackend();
    await openPackage();
    const editor = await showArtifact("5", "pricing-editor");
    const errorRow = within(editor).getByTestId("row-errors");
    expect(errorRow.textContent).toContain(PRICING_ERROR.message);
    let rows = within(editor).getAllByTestId("pricing-row");
    expect(rows[1].nextElementSibling).toBe(errorRow);
    expect(input(rows[1], "quantity").getAttribute("aria-invalid")).toBe("true");
    expect(input(rows[0], "quantity").getAttribute("aria-invalid")).toBeNull();

    await fireEvent.input(input(rows[1], "description"), { target: { value: "On-site visit" } });
    await fireEvent.input(input(rows[1], "quantity"), { target: { value: "200" } });
    await fireEvent.click(input(rows[1], "open"));
    await fireEvent.click(within(editor).getByTestId("add-row"));
    rows = within(editor).getAllByTestId("pricing-row");
    await waitFor(() => expect(document.activeElement).toBe(input(rows[2], "code")));
    await fireEvent.input(input(rows[2], "code"), { target: { value: "P-03" } });
    await fireEvent.input(input(rows[2], "description"), { target: { value: "Monthly report" } });
    await fireEvent.input(input(rows[2], "unit"), { target: { value: "report" } });
    await fireEvent.change(input(rows[2], "basis"), { target: { value: "fixed_price" } });
    await fireEvent.keyDown(input(rows[2], "unit"), { key: "Enter", ctrlKey: true });
    await waitFor(() => expect(callsOf(backend, "prep_edit")).toHaveLength(1));
    expect(lastEdit(backend)).toEqual({
      artifact: "pricing",
      content: {
        currency: "GBP",
        lines: [
          { code: "P-01", description: "Service desk operation", unit: "school-month", quantity: 480, basis: "subscription", open_amount: false },
          { code: "P-02", description: "On-site visit", unit: "visit", quantity: 200, basis: null, open_amount: false },
          { code: "P-03", description: "Monthly report", unit: "report", quantity: null, basis: "fixed_price", open_amount: false },
        ],
      },
    });
    await waitFor(() => expect(within(editor).queryByTestId("row-errors")).toBeNull());
  });

  it("switching artifacts with unsaved changes is refused where the buyer looks, keeping what was typed", async () => {
    installPrepBackend();
    await openPackage();
    const editor = await showArtifact("5", "pricing-editor");
    const rows = within(editor).getAllByTestId("pricing-row");
    await fireEvent.input(input(rows[0], "unit"), { target: { value: "school-year" } });
    await fireEvent.click(screen.getByTestId("tab-scope"));
    expect(screen.getByTestId("prep-notice").textContent).toContain("Save (Ctrl+Enter) or revert your changes to Pricing schedule first");
    expect(screen.getByTestId("pricing-editor")).toBeTruthy();
    expect(input(rows[0], "unit").value).toBe("school-year");
  });
});

describe("Prep Studio: approval", () => {
  it("approve is offered only for a valid artifact, and sends exactly the hash shown", async () => {
    const backend = installPrepBackend();
    await openPackage();
    await showArtifact("4", "criteria-editor");
    expect((screen.getByTestId("approve") as HTMLButtonElement).disabled).toBe(true);
    expect(screen.getByTestId("approve-blocked").textContent).toBe("Fix the validator errors first.");

    await showArtifact("2", "scope-editor");
    const shown = screen.getByTestId("content-hash").textContent;
    const hash = backend.view.package.artifacts.scope.content_hash!;
    expect(hash.startsWith(shown!)).toBe(true);
    expect(screen.getByTestId("approve").getAttribute("title")).toContain(shown!);
    await fireEvent.keyDown(window, { key: "a" });
    await waitFor(() => expect(callsOf(backend, "prep_approve")).toHaveLength(1));
    expect(callsOf(backend, "prep_approve")[0].args).toEqual({ id: PKG, kind: "scope", seenHash: hash });
    expect((await screen.findByTestId("approved-note")).textContent).toContain(`bound to version ${shown}`);
    expect(screen.getByTestId("state-scope").textContent).toBe("approved");
    expect(screen.getByTestId("prep-notice").textContent).toContain(`Scope approved (version ${shown})`);
  });

  it("an approval of content that changed meanwhile is refused (approval_outdated): the package is reloaded", async () => {
    const backend = installPrepBackend();
    await openPackage();
    await showArtifact("1", "intake-form");
    backend.failNext.prep_approve = { code: "approval_outdated", message: "the content changed since you saw it" };
    const shows = callsOf(backend, "prep_show").length;
    await fireEvent.click(screen.getByTestId("approve"));
    expect((await screen.findByTestId("prep-notice")).textContent).toContain("The content changed since you saw it. It was reloaded");
    await waitFor(() => expect(callsOf(backend, "prep_show").length).toBe(shows + 1));
    expect(screen.getByTestId("state-intake").textContent).toBe("valid, not approved");
  });

  it("unsaved edits are not approved: the buyer is asked to save first", async () => {
    const backend = installPrepBackend();
    await openPackage();
    const editor = await showArtifact("6", "milestones-editor");
    const rows = within(editor).getAllByTestId("milestone-row");
    expect(within(rows[1]).getByTestId("milestone-date").textContent).toContain("2027-04-12");
    await fireEvent.input(input(rows[1], "rationale"), { target: { value: "Five working days for questions." } });
    expect((screen.getByTestId("approve") as HTMLButtonElement).disabled).toBe(true);
    await fireEvent.keyDown(window, { key: "a" });
    expect(callsOf(backend, "prep_approve")).toHaveLength(0);
    // Saving sends the computed dates with the buyer's rationale.
    await fireEvent.keyDown(input(rows[1], "rationale"), { key: "Enter", ctrlKey: true });
    await waitFor(() => expect(callsOf(backend, "prep_edit")).toHaveLength(1));
    const content = lastEdit(backend).content as { items: { kind: string; date: string; rationale: string }[] };
    expect(content.items.map((m) => m.date)).toEqual(["2027-04-05", "2027-04-12", "2027-05-11", "2027-05-25", "2027-06-01", "2027-06-29"]);
    expect(content.items[1].rationale).toBe("Five working days for questions.");
  });
});

describe("Prep Studio: lock, drafting, publish and export", () => {
  it("another person's live lease makes the package read only; an expired one can be taken over", async () => {
    const backend = installPrepBackend();
    backend.view.lock = lock({ holder_name: "Bob", held_by_me: false, expired: false });
    const first = render(PackageView, { id: PKG, model: "ready" });
    await screen.findByTestId("prep-package");
    expect(screen.getByTestId("prep-lock").textContent).toContain("Read only: Bob holds the edit lease");
    const editor = await showArtifact("5", "pricing-editor");
    expect(input(within(editor).getAllByTestId("pricing-row")[0], "unit").readOnly).toBe(true);
    expect(screen.queryByTestId("editor-save")).toBeNull();
    expect((screen.getByTestId("draft") as HTMLButtonElement).disabled).toBe(true);
    first.unmount();

    backend.view.lock = lock({ holder_name: "Bob", held_by_me: false, expired: true });
    await openPackage();
    expect(screen.getByTestId("prep-lock").textContent).toContain("Bob's edit lease expired");
    await fireEvent.keyDown(window, { key: "t" });
    await waitFor(() => expect(callsOf(backend, "prep_lock")).toHaveLength(1));
    expect(callsOf(backend, "prep_lock")[0].args).toMatchObject({ id: PKG, takeOver: true });
    await waitFor(() => expect(screen.getByTestId("prep-lock").textContent).toContain("You (Ann) hold the edit lease"));
  });

  it("a lease held on the sync service says so; taking a free lease never asks to take over", async () => {
    const backend = installPrepBackend();
    backend.view.lock = lock({ holder_name: "Bob", held_by_me: false, expired: false, on_service: true });
    const first = render(PackageView, { id: PKG, model: "ready" });
    await screen.findByTestId("prep-package");
    expect(screen.getByTestId("prep-lock").textContent).toContain(
      "Bob holds the edit lease for all of the organization's desktops until",
    );
    first.unmount();

    backend.view.lock = null;
    await openPackage();
    await fireEvent.click(screen.getByTestId("take-lease"));
    await waitFor(() => expect(callsOf(backend, "prep_lock")).toHaveLength(1));
    expect(callsOf(backend, "prep_lock")[0].args).toMatchObject({ id: PKG, takeOver: false });
  });

  it("the service refusing a take-over (someone else was first) shows its words where the buyer looks", async () => {
    const backend = installPrepBackend();
    backend.view.lock = lock({ holder_name: "Bob", held_by_me: false, expired: true, on_service: true });
    await openPackage();
    backend.failNext.prep_lock = {
      code: "package_locked",
      message: "Carol is editing this package until 2030-01-01 11:00 UTC; try again after that, or ask them to close it",
    };
    await fireEvent.click(screen.getByTestId("take-over"));
    const shown = await screen.findByTestId("prep-notice");
    expect(shown.getAttribute("role")).toBe("alert");
    expect(shown.textContent).toContain("Read only: Carol is editing this package until 2030-01-01 11:00 UTC");
  });

  it("offline without a live lease held here, a save is refused with what to do and the change stays", async () => {
    const backend = installPrepBackend();
    await openPackage();
    const editor = await showArtifact("2", "scope-editor");
    await fireEvent.input(within(editor).getByLabelText("Summary"), { target: { value: "Typed while offline." } });
    backend.failNext.prep_edit = {
      code: "sync_unavailable",
      message:
        "the sync service cannot be reached (connection refused), and this desktop holds no live edit lease for this package, so another person may be editing it; edit it again when the service can be reached",
    };
    await fireEvent.click(screen.getByTestId("editor-save"));
    expect((await screen.findByTestId("editor-message")).textContent).toContain(
      "Not saved: the sync service cannot be reached",
    );
    expect((within(editor).getByLabelText("Summary") as HTMLTextAreaElement).value).toBe("Typed while offline.");
  });

  it("a save refused because someone else took the lease (package_locked) says who, reloads, and keeps what was typed", async () => {
    const backend = installPrepBackend();
    await openPackage();
    const editor = await showArtifact("5", "pricing-editor");
    const rows = within(editor).getAllByTestId("pricing-row");
    await fireEvent.input(input(rows[1], "quantity"), { target: { value: "200" } });
    backend.view.lock = lock({ holder_name: "Bob", held_by_me: false, expired: false });
    backend.failNext.prep_edit = { code: "package_locked", message: "Bob holds the edit lock until 10:30; it can be taken over once it expires" };
    await fireEvent.keyDown(input(rows[1], "quantity"), { key: "Enter", ctrlKey: true });
    expect((await screen.findByTestId("editor-message")).textContent).toBe(
      "Read only: Bob holds the edit lock until 10:30; it can be taken over once it expires",
    );
    await waitFor(() => expect(screen.getByTestId("prep-lock").textContent).toContain("Read only: Bob holds the edit lease"));
    expect(input(within(editor).getAllByTestId("pricing-row")[1], "quantity").value).toBe("200");
    expect(screen.getByTestId("editor-dirty")).toBeTruthy();
  });

  it("a save that lost a race (edit_conflict) asks to apply the change again on the reloaded package", async () => {
    const backend = installPrepBackend();
    await openPackage();
    const editor = await showArtifact("2", "scope-editor");
    await fireEvent.input(within(editor).getByLabelText("Summary"), { target: { value: "A managed service desk for 40 schools." } });
    backend.failNext.prep_edit = { code: "edit_conflict", message: "the package changed since it was read" };
    await fireEvent.click(screen.getByTestId("editor-save"));
    expect((await screen.findByTestId("editor-message")).textContent).toContain("The package changed since you opened it");
    expect(callsOf(backend, "prep_show").length).toBe(2);
    expect((within(editor).getByLabelText("Summary") as HTMLTextAreaElement).value).toBe("A managed service desk for 40 schools.");
  });

  it("drafting needs the model: without a key the reason is shown and nothing is sent", async () => {
    const backend = installPrepBackend({ view: viewOf(emptyPackage()) });
    await openPackage("no_api_key");
    expect((screen.getByTestId("draft") as HTMLButtonElement).disabled).toBe(true);
    expect(screen.getByTestId("draft-blocked").textContent).toContain("no API key is stored: add one in Settings (Alt+7). Editing and validation work offline.");
    await fireEvent.keyDown(window, { key: "d" });
    expect(callsOf(backend, "prep_draft")).toHaveLength(0);
    expect(screen.getByTestId("prep-notice").textContent).toContain("no API key");
  });

  it("a long draft shows its progress step by step, then the drafted package", async () => {
    const backend = installPrepBackend({ view: viewOf(emptyPackage()), holdDraft: true });
    await openPackage();
    expect(screen.getByTestId("draft").textContent).toContain("Draft with the model");
    await fireEvent.keyDown(window, { key: "d" });
    const progress = await screen.findByTestId("draft-progress");
    await waitFor(() => expect(progress.textContent).toContain("Step 2 of 6: drafting the requirements"));
    expect(progress.textContent).toContain("1,800 tokens, $0.0030 so far");
    expect(callsOf(backend, "prep_draft")[0].args).toEqual({ id: PKG, budget: null, resume: false });
    backend.finishDraft?.();
    await waitFor(() => expect(screen.queryByTestId("draft-progress")).toBeNull());
    expect(screen.getByTestId("prep-notice").textContent).toContain("Drafted: 13 model calls, 3 critic cycles");
    expect(screen.getByTestId("state-criteria").textContent).toBe("invalid: 1 error");
  });

  it("a refused publish says why (publish_blocked) and reloads", async () => {
    const backend = installPrepBackend();
    await openPackage();
    await fireEvent.click(screen.getByTestId("publish-button"));
    expect((await screen.findByTestId("publish-notice")).textContent).toContain("Not published: the gate refused");
    await waitFor(() => expect(callsOf(backend, "prep_show").length).toBe(2));
  });

  it("export is offered once everything is approved, through the save dialog", async () => {
    const p: Package = draftedPackage();
    for (const kind of ["intake", "scope", "requirements", "criteria", "pricing", "milestones"] as const) {
      p.artifacts[kind].state = { status: "approved", hash: p.artifacts[kind].content_hash! };
    }
    const backend = installPrepBackend({ view: viewOf(p) });
    await openPackage();
    expect(screen.getByTestId("precheck-ready")).toBeTruthy();
    await fireEvent.click(screen.getByTestId("export-pdf"));
    await waitFor(() => expect(callsOf(backend, "prep_export")).toHaveLength(1));
    expect(callsOf(backend, "plugin:dialog|save")[0].args.options).toMatchObject({ defaultPath: "IT service desk for schools.pdf" });
    expect(callsOf(backend, "prep_export")[0].args).toEqual({ id: PKG, format: "pdf", path: "/tmp/exports/rfp.pdf" });
    expect((await screen.findByTestId("publish-notice")).textContent).toBe("Saved /tmp/exports/rfp.pdf (24.6 KB).");
  });

  it("with PACTWISE_SAVE_DIR the save path is the suggested name in that folder (no dialog)", async () => {
    const p: Package = draftedPackage();
    for (const kind of ["intake", "scope", "requirements", "criteria", "pricing", "milestones"] as const) {
      p.artifacts[kind].state = { status: "approved", hash: p.artifacts[kind].content_hash! };
    }
    const backend = installPrepBackend({ view: viewOf(p) });
    window.__PACTWISE_SAVE_DIR__ = "/tmp/e2e-saved/";
    try {
      await openPackage();
      await fireEvent.click(screen.getByTestId("export-ocds"));
      await waitFor(() => expect(callsOf(backend, "prep_export")).toHaveLength(1));
      expect(callsOf(backend, "prep_export")[0].args).toEqual({ id: PKG, format: "ocds", path: "/tmp/e2e-saved/IT service desk for schools ocds.json" });
      expect(callsOf(backend, "plugin:dialog|save")).toHaveLength(0);
    } finally {
      delete window.__PACTWISE_SAVE_DIR__;
    }
  });
});

describe("Prep Studio: the list and a new package", () => {
  it("n opens the intake form; the package is created from it and opened", async () => {
    const backend = installPrepBackend();
    render(PrepStudio, { model: "ready" });
    await screen.findAllByTestId("prep-row");
    await fireEvent.keyDown(window, { key: "n" });
    const title = (await screen.findByTestId("intake-title")) as HTMLInputElement;
    await waitFor(() => expect(document.activeElement).toBe(title));
    // A title is required before anything is sent.
    await fireEvent.input(title, { target: { value: "" } });
    await fireEvent.submit(screen.getByTestId("intake-form"));
    expect(screen.getByTestId("intake-message").textContent).toBe("Give the package a title.");
    await fireEvent.input(title, { target: { value: "Fleet telematics" } });
    await fireEvent.input(screen.getByTestId("intake-buyer"), { target: { value: "City of Example" } });
    await fireEvent.input(screen.getByTestId("intake-ceiling"), { target: { value: "250,000.50" } });
    await fireEvent.input(screen.getByTestId("intake-publication"), { target: { value: "2027-03-01" } });
    await fireEvent.input(screen.getByTestId("intake-country"), { target: { value: "de" } });
    await fireEvent.input(screen.getByTestId("intake-contact"), { target: { value: "Ann Buyer, ann@example.org" } });
    await fireEvent.click(screen.getByTestId("add-need"));
    const need = screen.getAllByTestId("need-row")[0].querySelectorAll("input");
    await fireEvent.input(need[1], { target: { value: "Track vehicle positions" } });
    await fireEvent.keyDown(title, { key: "Enter", ctrlKey: true });
    await waitFor(() => expect(callsOf(backend, "prep_new")).toHaveLength(1));
    expect(callsOf(backend, "prep_new")[0].args.intake).toMatchObject({
      title: "Fleet telematics",
      buyer: "City of Example",
      budget_ceiling_minor: 25000050,
      needs: [{ id: "N1", text: "Track vehicle positions" }],
      timeline: { publication: "2027-03-01", question_days: 10, submission_days: 20, evaluation_days: 10, award_days: 5, contract_start_days: 20 },
      country: "DE",
      contact: "Ann Buyer, ann@example.org",
      checklist_type: null,
    });
    expect((await screen.findByTestId("prep-title")).textContent).toBe("Fleet telematics");
    expect(screen.getByTestId("state-scope").textContent).toBe("empty");
  });
});

describe("Prep Studio: leaving a package", () => {
  it("Escape goes back to the list, but not while the open editor holds unsaved changes", async () => {
    installPrepBackend();
    render(PrepStudio, { model: "ready" });
    await screen.findAllByTestId("prep-row");
    const list = screen.getByTestId("prep-list");
    await fireEvent.keyDown(list, { key: "Enter" });
    await screen.findByTestId("prep-package");
    const editor = await showArtifact("5", "pricing-editor");
    await fireEvent.input(input(within(editor).getAllByTestId("pricing-row")[0], "unit"), { target: { value: "school-year" } });
    (document.activeElement as HTMLElement | null)?.blur();
    await fireEvent.keyDown(window, { key: "Escape" });
    expect(screen.getByTestId("prep-nav-error").textContent).toContain("Save (Ctrl+Enter) or revert your changes");
    expect(screen.getByTestId("prep-package")).toBeTruthy();
    await fireEvent.click(screen.getByTestId("editor-revert"));
    await fireEvent.keyDown(window, { key: "Escape" });
    await waitFor(() => expect(screen.queryByTestId("prep-package")).toBeNull());
    expect(screen.queryByTestId("prep-nav-error")).toBeNull();
  });
});

describe("Prep Studio words and arithmetic", () => {
  it("percentages and amounts are exact integers; budgets are parsed or refused with a message", () => {
    expect(percentToBp("45")).toBe(4500);
    expect(percentToBp("32.5")).toBe(3250);
    expect(percentToBp("33,33")).toBe(3333);
    expect(percentToBp("0.07")).toBe(7);
    expect(percentToBp("100.01")).toBeNull();
    expect(percentToBp("12.345")).toBeNull();
    expect(percentToBp("-5")).toBeNull();
    expect(bpToPercent(4550)).toBe("45.50");
    expect(bpToPercent(7)).toBe("0.07");
    expect(majorToMinor("450000")).toBe(45000000);
    expect(majorToMinor("1,234.5")).toBe(123450);
    expect(majorToMinor("12.345")).toBeNull();
    expect(budgetFrom("400000", "2.50", "600")).toEqual({ budget: { max_tokens: 400000, max_cost_micros: 2500000, max_seconds: 600 } });
    expect(budgetFrom("lots", "2", "600")).toEqual({ error: "The token budget must be a whole number above 0." });
  });
});

describe("Prep Studio inside the app", () => {
  it("Alt+number and the rail do not leave the studio while an editor holds unsaved changes", async () => {
    installPrepBackend();
    const { default: App } = await import("../src/App.svelte");
    render(App);
    await fireEvent.keyDown(window, { key: "5", altKey: true });
    await fireEvent.keyDown(await screen.findByTestId("prep-list"), { key: "Enter" });
    await screen.findByTestId("prep-package");
    const editor = await showArtifact("5", "pricing-editor");
    await fireEvent.input(input(within(editor).getAllByTestId("pricing-row")[0], "unit"), { target: { value: "school-year" } });
    await fireEvent.keyDown(window, { key: "1", altKey: true });
    expect(screen.getByTestId("prep-nav-error").textContent).toContain("Save (Ctrl+Enter) or revert your changes");
    await fireEvent.click(document.querySelector<HTMLElement>('[data-area="approvals"]')!);
    expect(input(within(screen.getByTestId("pricing-editor")).getAllByTestId("pricing-row")[0], "unit").value).toBe("school-year");
    await fireEvent.click(screen.getByTestId("editor-revert"));
    await fireEvent.keyDown(window, { key: "1", altKey: true });
    await waitFor(() => expect(screen.queryByTestId("prep-package")).toBeNull());
  });
});

describe("Prep Studio: critic findings", () => {
  it("a finding left to the buyer is dismissed with a reason, by keyboard; an empty reason is refused in the row", async () => {
    const backend = installPrepBackend();
    await openPackage();
    const rows = screen.getAllByTestId("finding");
    const open = rows.findIndex((r) => within(r).queryByTestId("dismiss-finding"));
    expect(open).toBeGreaterThanOrEqual(0);
    expect(within(rows[0]).queryByTestId("dismiss-finding")).toBeNull();
    await fireEvent.click(within(rows[open]).getByTestId("dismiss-finding"));
    const reason = await within(rows[open]).findByTestId("dismiss-reason");
    await waitFor(() => expect(document.activeElement).toBe(reason));
    await fireEvent.submit(reason.closest("form")!);
    expect(within(rows[open]).getByTestId("dismiss-error").textContent).toContain("Say why");
    expect(callsOf(backend, "prep_dismiss_finding")).toHaveLength(0);
    await fireEvent.input(reason, { target: { value: "Responsiveness is scored by the SLA table." } });
    await fireEvent.submit(reason.closest("form")!);
    await waitFor(() => expect(callsOf(backend, "prep_dismiss_finding")).toHaveLength(1));
    expect(callsOf(backend, "prep_dismiss_finding")[0].args).toEqual({ id: PKG, index: open, reason: "Responsiveness is scored by the SLA table." });
    const row = (await screen.findAllByTestId("finding"))[open];
    await waitFor(() => expect(within(row).getByTestId("dismissal").textContent).toContain("Responsiveness is scored by the SLA table."));
    expect(within(row).queryByTestId("dismiss-finding")).toBeNull();
  });
});
