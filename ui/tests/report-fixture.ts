// A contract review report for the component tests, on the review fixture's document (tests/review-fixture.ts): an
// incomplete report awaiting sign-off with a clause under two types, an unassigned clause, an invented clause among
// the rejected, a dropped item and an unprocessed clause type.
import type { ContractReport_Serialize, ReportView_Serialize } from "../src/lib/bindings";
import { DOC, PAGE_1, PAGE_2, spanOn } from "./review-fixture";

export const RUN = "0193a0b4-0000-7000-8000-0000000000a1";
export const INVENTED = "Either party may terminate at will.";

export function reportFixture(): ContractReport_Serialize {
  const parties = { clause_id: "W1-c1", text: "This Agreement is made between Northwind Traders and Contoso Ltd.", page: 1, window: 1 };
  return {
    document: DOC,
    contract_type: "nda",
    contract_type_name: "Non-Disclosure Agreement",
    page_count: 2,
    completeness: "incomplete",
    clause_types: [
      { item_id: "nda.parties.identified", section: "Parties", question: "Are the parties identified?", risk: "high", processed: true,
        clauses: [{ ...parties, also_under: ["nda.parties.mutual"] }] },
      { item_id: "nda.parties.mutual", section: "Parties", question: "Is the agreement mutual?", risk: "medium", processed: true,
        clauses: [{ ...parties, also_under: ["nda.parties.identified"] }] },
      { item_id: "nda.term.survival", section: "Term", question: "How long do the obligations survive?", risk: "critical", processed: true,
        clauses: [{ clause_id: "W2-c1", text: "The obligations survive for three years.", page: 2, window: 2, also_under: [] }] },
      { item_id: "nda.general.law", section: "General", question: "Which law governs?", risk: "low", processed: true, clauses: [] },
      { item_id: "nda.remedies.injunctive", section: "Remedies", question: "Is injunctive relief available?", risk: "high", processed: false, clauses: [] },
    ],
    unassigned: [{ clause_id: "W2-c2", text: "Either party may seek injunctive relief.", page: 2, window: 2, also_under: [] }],
    rejected: [
      { clause_id: "W1-c3", text: INVENTED, page: 1, window: 1, reason: "quote_not_found", claimed_types: ["nda.term.survival"] },
    ],
    dropped: [{ edge: "extract", window: 1, item_id: null, reason: "page 9 is outside the window (page 1)", received: '{"clause_id":"c9","page":9}' }],
    unprocessed: [{ part: "clause_type", id: "nda.remedies.injunctive", label: "Is injunctive relief available?", reason: "call_budget", detail: null }],
    windows: [
      { index: 1, first_page: 1, last_page: 1, processed: true, clauses: 2 },
      { index: 2, first_page: 2, last_page: 2, processed: true, clauses: 2 },
    ],
    bounds: { calls_used: 6, call_limit: 6, time_used_ms: 4200, time_limit_ms: 300000 },
  };
}

export function reportView(extra: Partial<ReportView_Serialize> = {}): ReportView_Serialize {
  const report = reportFixture();
  // The backend sends where each clause it shows stands on its page.
  const shown = [...report.clause_types.flatMap((t) => t.clauses), ...report.unassigned];
  const spans = new Map(shown.map((c) => [c.clause_id, { clause_id: c.clause_id, page: c.page, span: spanOn(c.page === 1 ? PAGE_1 : PAGE_2, c.text) }]));
  return {
    run: RUN,
    document: DOC,
    document_name: "mutual-nda-northwind-contoso.pdf",
    status: "awaiting_sign_off",
    reason: null,
    report,
    clause_spans: [...spans.values()],
    progress: { windows_done: 2, windows: 2, clause_types_done: 5, clause_types: 5, calls_used: 6 },
    approval: "0193a0b4-0000-7000-8000-0000000000b1",
    sign_off: null,
    started_at: "2026-11-30T09:00:00Z",
    updated_at: "2026-11-30T09:01:00Z",
    ...extra,
  };
}
