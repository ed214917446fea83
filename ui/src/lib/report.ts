// The contract review report as the UI shows it: status sentences, the order clauses are stepped through, and
// what an unprocessed part or a rejected extraction says. Pure functions, tested in tests/report-lib.test.ts.
import type { ContractReport_Serialize, ReportClause, ReportView_Serialize, UnprocessedPart_Serialize, UnprocessedReason } from "./bindings";
import { shortDateTime } from "./format";

/** The report's state in words (never colour alone). */
export function statusLabel(view: ReportView_Serialize): string {
  const complete = view.report?.completeness === "complete";
  switch (view.status) {
    case "running":
      return "Running (or interrupted: Run report resumes it)";
    case "awaiting_sign_off":
      return complete ? "Complete, awaiting sign-off" : "Incomplete, awaiting sign-off";
    case "signed_off":
      return `Signed off by ${view.sign_off?.by ?? "a person"} on ${shortDateTime(view.sign_off?.at ?? "")}`;
    case "sign_off_refused":
      return `Sign-off declined by ${view.sign_off?.by ?? "a person"} on ${shortDateTime(view.sign_off?.at ?? "")}`;
    case "failed":
      return `Failed: ${view.reason ?? "no reason was recorded"}`;
    case "cancelled":
      return `Cancelled${view.reason ? `: ${view.reason}` : ""}`;
  }
}

const REASONS: Record<UnprocessedReason, string> = {
  call_budget: "the model-call budget was used up",
  time_limit: "the time limit was reached",
  model_failed: "the model call failed twice",
  tool_failed: "reading the pages failed twice",
  playbook_bound: "beyond the 40 clause types a run asks about",
};

export function reasonLabel(reason: UnprocessedReason): string {
  return REASONS[reason];
}

/** "Window 3 (pages 5–6)" or "Clause type nda.term.duration". */
export function partLabel(part: UnprocessedPart_Serialize): string {
  return part.part === "window" ? `Window ${part.id} (${part.label})` : `Clause type ${part.id}`;
}

/** A selectable clause of the report: under a type (or unassigned), in the order shown. */
export interface ClauseEntry {
  key: string;
  typeId: string | null;
  clause: ReportClause;
}

/** Every clause in the order the report shows them: by type in playbook order, then the unassigned ones. */
export function clauseEntries(report: ContractReport_Serialize): ClauseEntry[] {
  const entries: ClauseEntry[] = [];
  for (const t of report.clause_types) {
    for (const c of t.clauses) entries.push({ key: `${t.item_id}/${c.clause_id}`, typeId: t.item_id, clause: c });
  }
  for (const c of report.unassigned) entries.push({ key: `-/${c.clause_id}`, typeId: null, clause: c });
  return entries;
}

/** "30 of 60 model calls · 12 s of 300 s". */
export function boundsLabel(report: ContractReport_Serialize): string {
  const b = report.bounds;
  return `${b.calls_used} of ${b.call_limit} model calls · ${Math.round(b.time_used_ms / 1000)} s of ${Math.round(b.time_limit_ms / 1000)} s`;
}

/** Progress of a running report. */
export function progressLabel(view: ReportView_Serialize): string | null {
  const p = view.progress;
  if (!p) return null;
  return `Windows ${p.windows_done} of ${p.windows} · clause types ${p.clause_types_done} of ${p.clause_types} · ${p.calls_used} model calls`;
}
