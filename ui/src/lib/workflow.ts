/** Words for workflow runs and approvals, shared by the approvals inbox and its tests. */

/** "due in 3 days", "overdue by 2 hours": relative to `now`, in words. */
export function dueLabel(dueAt: string | null | undefined, now: Date): string {
  if (!dueAt) return "no due date";
  const due = new Date(dueAt);
  if (Number.isNaN(due.getTime())) return dueAt;
  const ms = due.getTime() - now.getTime();
  const span = humanSpan(Math.abs(ms));
  return ms >= 0 ? `due in ${span}` : `overdue by ${span}`;
}

function humanSpan(ms: number): string {
  const minutes = Math.round(ms / 60_000);
  if (minutes < 60) return `${minutes} minute${minutes === 1 ? "" : "s"}`;
  const hours = Math.round(minutes / 60);
  if (hours < 48) return `${hours} hour${hours === 1 ? "" : "s"}`;
  const days = Math.round(hours / 24);
  return `${days} day${days === 1 ? "" : "s"}`;
}

/** A run's status in words (never colour alone). */
export function runStatusLabel(status: string): string {
  switch (status) {
    case "running":
      return "running";
    case "waiting":
      return "waiting for a decision or a timer";
    case "compensating":
      return "undoing completed steps";
    case "succeeded":
      return "finished";
    case "failed":
      return "failed";
    case "cancelled":
      return "cancelled";
    default:
      return status;
  }
}
