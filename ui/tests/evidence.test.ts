import { describe, expect, it, vi } from "vitest";
import { fireEvent, render, screen } from "@testing-library/svelte";
import Evidence from "../src/views/runs/Evidence.svelte";
import type { ApprovalEvidence } from "../src/lib/bindings";
import { SHORTLIST } from "./workflowBackend";

const DOC = "0193a0b4-0000-7000-8000-00000000d001";

function shown(evidence: ApprovalEvidence, onopen = vi.fn()) {
  render(Evidence, { evidence, onopen });
  const root = screen.getByTestId("evidence");
  // Never JSON or ids on screen.
  expect(root.textContent).not.toMatch(/[{}]|"\w+":/);
  expect(root.textContent).not.toContain(DOC);
  return { root, onopen };
}

describe("what an approver reads", () => {
  it("the shortlist is a table with the vendors left out and how it was made", () => {
    const { root } = shown(SHORTLIST);
    const rows = screen.getByTestId("shortlist").querySelectorAll("tbody tr");
    expect(Array.from(rows).map((r) => r.textContent)).toEqual([
      "Globex8200.0010 daysOffice furniture, Delivery",
      "Initrode9100.00—Office furniture, Delivery",
    ]);
    expect(root.textContent).toContain("Left out: Acme: over the budget");
    expect(root.textContent).toContain("Shortlisted by code");
  });

  it("a contract's risk shows its red flags and a link that opens the contract", async () => {
    const link = { label: "Open the contract", name: "Cloud MSA", target: { to: "contract" as const, document: DOC, page: null } };
    const { onopen } = shown({
      kind: "contract_risk",
      contract: "Cloud MSA",
      value: "300000.00",
      level: "High risk",
      high: true,
      reasons: ["value 300000.00 is at or above 250000.00", "flagged term: uncapped_liability"],
      red_flags: ["Uncapped liability"],
      link,
    });
    expect(screen.getByTestId("risk-level").textContent).toBe("High risk");
    expect(screen.getByTestId("red-flags").textContent).toBe("Uncapped liability");
    await fireEvent.click(screen.getByTestId("evidence-link"));
    expect(onopen).toHaveBeenCalledWith(link);
  });

  it("a report's clauses are grouped by question, each with a link to its page, and the report opens", async () => {
    const page = { label: "page 4", name: "MSA", target: { to: "contract" as const, document: DOC, page: 4 } };
    const report = { label: "Open the report", name: "MSA", target: { to: "report" as const, document: DOC } };
    const { root, onopen } = shown({
      kind: "report_clauses",
      contract_type: "Master services agreement",
      complete: true,
      completeness: "Complete: every window of pages and every clause type was processed",
      clause_types: [{ question: "Is liability capped?", section: "Risk", risk: "high", clauses: [{ text: "Liability is capped at fees paid.", page: 4, link: page }] }],
      without_clause: 3,
      rejected: 1,
      unprocessed: [],
      link: report,
    });
    expect(root.textContent).toContain("Is liability capped?");
    expect(root.textContent).toContain("Liability is capped at fees paid.");
    expect(root.textContent).toContain("3 clause type(s) with no clause found");
    const links = screen.getAllByTestId("evidence-link");
    await fireEvent.click(links[0]);
    await fireEvent.click(links[1]);
    expect(onopen.mock.calls.map((c) => c[0])).toEqual([report, page]);
  });

  it("invoices, budgets and vendors have their own views", () => {
    shown({ kind: "invoice_match", invoice: "INV-9", total: "10.00", matched: false, exceptions: ["A: invoiced 2 but received 1"] });
    expect(screen.getByTestId("exceptions").textContent).toContain("A: invoiced 2 but received 1");
    document.body.innerHTML = "";
    const budget = shown({
      kind: "budget_plan", year: "2027", departments: [{ label: "IT", amount: "600.00" }], total: "1100.00",
      previous_total: "1000.00", change: "+10.00 %", cap: "1050.00", over_cap: true,
    });
    expect(budget.root.textContent).toContain("over the cap");
    expect(budget.root.textContent).toContain("+10.00 %");
    document.body.innerHTML = "";
    const vendor = shown({
      kind: "vendor_check", vendor: "Acme", tax_id: null, provided: ["W9"], missing: ["Insurance certificate"],
      screening: "Flagged", flagged: true, reasons: ["the sanctions list check returned a possible match"],
    });
    expect(vendor.root.textContent).toContain("none given");
    expect(vendor.root.textContent).toContain("Flagged: the sanctions list check returned a possible match");
  });

  it("unknown evidence falls back to labelled rows in words", () => {
    const { root } = shown({
      kind: "generic",
      rows: [{ label: "Input · Request note", text: "urgent" }, { label: "Flag", text: "yes" }],
      links: [{ label: "Open the Prep package (Package)", name: "Prep package", target: { to: "prep_package", package: "pkg-1" } }],
    });
    expect(Array.from(root.querySelectorAll("dt")).map((d) => d.textContent)).toEqual(["Input · Request note", "Flag"]);
    expect(Array.from(root.querySelectorAll("dd")).map((d) => d.textContent)).toEqual(["urgent", "yes"]);
    expect(screen.getByTestId("evidence-link").textContent).toBe("Open the Prep package (Package)");
  });
});
