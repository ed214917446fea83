/** Helpers of the Tenders area (PactWise Source on the buyer's desktop): the scoring grid's cells and the keys of
 * its entries. The figures themselves come from the backend (code), never from here. */

/** One cell of the scoring grid: a vendor's points on a criterion, with the reason, and whether it was recorded. */
export interface ScoreCell {
  points: string;
  reason: string;
  saved: boolean;
}

export function cellKey(vendorAccount: string, criterionId: string): string {
  return `${vendorAccount}|${criterionId}`;
}

/** What is wrong with a cell before it is sent (null when it can be sent): points 0 to max, a reason. */
export function cellProblem(cell: ScoreCell, max: number): string | null {
  const text = cell.points.trim();
  if (!/^\d+$/.test(text) || Number(text) > max) return `Give points from 0 to ${max}.`;
  if (!cell.reason.trim()) return "Give a reason for the score.";
  return null;
}

/** A file name for an export, from the tender's title: letters, digits and dashes. */
export function exportName(title: string, suffix: string): string {
  const stem = title.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-+|-+$/g, "") || "tender";
  return `${stem}-${suffix}`;
}
