// Words for the organization switcher and for what a sync sign-in does to the organizations on this computer.
import type { BringOverReport } from "./bindings";

/** What signing in to sync will do, said before it happens. */
export function signInConsequence(currentOrg: string): string {
  return (
    `Signing in makes your organization on the sync service the current one on this computer. ` +
    `"${currentOrg}" and everything in it (documents, corrections, runs, approvals) stays on this computer, ` +
    `apart from the synced organization; switch back to it any time under Organizations.`
  );
}

/** What bringing documents over did, in a sentence. */
export function broughtSummary(report: BringOverReport, from: string, to: string): string {
  const n = (count: number, one: string, many: string) => `${count} ${count === 1 ? one : many}`;
  const parts = [`${n(report.brought, "document", "documents")} from "${from}" are now in "${to}"`];
  if (report.corrections > 0) parts.push(`with ${n(report.corrections, "correction", "corrections")}`);
  let text = parts.join(" ") + ".";
  if (report.already_there > 0) text += ` ${n(report.already_there, "document was", "documents were")} there already.`;
  if (report.failed.length > 0) text += ` Not brought: ${report.failed.join("; ")}.`;
  text += ` "${from}" keeps its own copies.`;
  return text;
}
