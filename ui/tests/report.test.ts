import { describe, expect, it } from "vitest";
import { fireEvent, render, screen, waitFor, within } from "@testing-library/svelte";
import Report from "../src/views/Report.svelte";
import { callsOf, installReviewBackend } from "./backend";
import { DOC } from "./review-fixture";
import { INVENTED, RUN, reportView } from "./report-fixture";

const NAME = "mutual-nda-northwind-contoso.pdf";

describe("Report view", () => {
  it("shows clauses by type, a clause under two types marked, the rejected extraction apart and what was not processed", async () => {
    installReviewBackend({ reports: { [DOC]: [reportView()] } });
    render(Report, { documentId: DOC, name: NAME });
    expect((await screen.findByTestId("report-status")).textContent).toBe("Incomplete, awaiting sign-off");
    expect(screen.getByTestId("report-bounds").textContent).toBe("6 of 6 model calls · 4 s of 300 s");
    const types = screen.getAllByTestId("report-type");
    expect(types.map((t) => t.getAttribute("data-item-id"))).toEqual(["nda.parties.identified", "nda.parties.mutual", "nda.term.survival"]);
    const marks = screen.getAllByTestId("also-under").map((m) => m.textContent);
    expect(marks).toEqual(["Also under: nda.parties.mutual", "Also under: nda.parties.identified"]);
    // The invented clause is listed as rejected, never as a clause.
    const clauses = screen.getAllByTestId("report-clause").map((c) => c.textContent ?? "");
    expect(clauses.some((c) => c.includes(INVENTED))).toBe(false);
    const rejected = within(screen.getByTestId("report-rejected")).getByTestId("rejected-extraction");
    expect(rejected.textContent).toContain(INVENTED);
    expect(rejected.textContent).toContain("Not on page 1");
    expect(rejected.textContent).toContain("nda.term.survival");
    expect(screen.getByTestId("report-unprocessed").textContent).toContain(
      "Clause type nda.remedies.injunctive: the model-call budget was used up",
    );
    expect(screen.getByTestId("report-dropped").textContent).toContain("page 9 is outside the window");
    expect(screen.getByText("No clause found for 1 clause type")).toBeTruthy();
  });

  it("j and a click select a clause and its text is highlighted on its page", async () => {
    installReviewBackend({ reports: { [DOC]: [reportView()] } });
    render(Report, { documentId: DOC, name: NAME });
    await screen.findAllByTestId("report-clause");
    await fireEvent.keyDown(window, { key: "j" });
    await waitFor(() => expect(screen.getAllByTestId("report-clause")[0].getAttribute("aria-pressed")).toBe("true"));
    await waitFor(() => expect(document.querySelectorAll('[data-page="1"] .mark.current').length).toBeGreaterThan(0));
    // Page 2 is synthetic text: the clause is marked in the text.
    await fireEvent.click(screen.getAllByTestId("report-clause")[2]);
    await waitFor(() =>
      expect(document.querySelector('[data-page="2"] mark.current')?.textContent).toBe("The obligations survive for three years."),
    );
  });

  it("a sign-off needs a reason, is recorded with who signed, and then the report can be exported", async () => {
    const backend = installReviewBackend({ reports: { [DOC]: [reportView()] }, savePath: "/tmp/nda report.docx" });
    render(Report, { documentId: DOC, name: NAME });
    await fireEvent.click(await screen.findByTestId("sign-off"));
    expect((await screen.findByTestId("sign-off-error")).textContent).toContain("Give a reason");
    expect(callsOf(backend, "sign_off_report")).toHaveLength(0);
    await fireEvent.input(screen.getByTestId("sign-off-reason"), { target: { value: "Checked every clause against the pages" } });
    await fireEvent.click(screen.getByTestId("sign-off"));
    await waitFor(() => expect(screen.getByTestId("report-status").textContent).toMatch(/^Signed off by Ann on /));
    expect(callsOf(backend, "sign_off_report")[0].args).toEqual({
      run: RUN,
      decision: "approve",
      reason: "Checked every clause against the pages",
    });
    expect(screen.getByTestId("sign-off-record").textContent).toContain("Signed off by Ann");
    expect(screen.queryByTestId("sign-off-form")).toBeNull();
    await fireEvent.click(screen.getByTestId("export-report-docx"));
    await waitFor(() => expect(callsOf(backend, "export_report")).toHaveLength(1));
    expect(callsOf(backend, "export_report")[0].args).toEqual({ run: RUN, format: "docx", path: "/tmp/nda report.docx" });
    expect((await screen.findByTestId("report-notice")).textContent).toContain("Saved /tmp/nda report.docx");
  });

  it("without a report, r runs one; a run that fails shows its reason", async () => {
    const backend = installReviewBackend({
      runReport: () => reportView({ status: "failed", report: null, approval: null, reason: "the contract review report needs the model" }),
    });
    render(Report, { documentId: DOC, name: NAME });
    await screen.findByTestId("report-empty");
    await fireEvent.keyDown(window, { key: "r" });
    await waitFor(() => expect(callsOf(backend, "start_report")).toHaveLength(1));
    expect(callsOf(backend, "start_report")[0].args).toEqual({ document: DOC, options: { max_calls: null, time_limit_secs: null } });
    expect((await screen.findByTestId("report-status")).textContent).toBe("Failed: the contract review report needs the model");
    expect(screen.getByTestId("report-none").textContent).toContain("needs the model");
    // A failed report can be run again.
    expect(screen.getByTestId("run-report").textContent).toContain("Run report again");
  });

  it("a report awaiting sign-off cannot be run again over it", async () => {
    installReviewBackend({ reports: { [DOC]: [reportView()] } });
    render(Report, { documentId: DOC, name: NAME });
    await screen.findByTestId("report-status");
    expect(screen.queryByTestId("run-report")).toBeNull();
  });
});
