/** Words for workflow runs and approvals, shared by the approvals inbox and its tests. */
import type { Value as JsonValue } from "./bindings";

/** One line of evidence: a channel's name and its value as text a person can read. */
export interface EvidenceLine {
  key: string;
  text: string;
  /** Whether `text` is structured (shown preformatted). */
  structured: boolean;
}

/** The evidence an approver saw, as lines: scalars as they are, anything else as indented JSON. */
export function evidenceLines(value: JsonValue | null | undefined): EvidenceLine[] {
  if (value === null || value === undefined) return [];
  if (typeof value !== "object" || Array.isArray(value)) {
    return [{ key: "evidence", text: scalarOrJson(value), structured: typeof value === "object" }];
  }
  return Object.entries(value).map(([key, v]) => ({
    key,
    text: scalarOrJson(v ?? null),
    structured: v !== null && typeof v === "object",
  }));
}

function scalarOrJson(v: JsonValue | null): string {
  if (v === null) return "—";
  if (typeof v === "string") return v;
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  return JSON.stringify(v, null, 2);
}

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
