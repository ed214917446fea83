/** The Contracts area's words and arithmetic, kept out of the view so they are tested on their own. */
import type { ContractQuery_Deserialize, ContractRow_Serialize } from "./bindings";

/** The list's row height in pixels: the virtualised list places rows by it. */
export const ROW_HEIGHT = 34;
/** Rows asked for at a time as the list scrolls. */
export const PAGE_SIZE = 100;

/** The filters a person sets in the toolbar ("" and 0 mean no filter). */
export interface ContractFilters {
  search: string;
  type: string;
  counterparty: string;
  law: string;
  risk: string;
  expiringWithin: number;
  noticeWithin: number;
  order: "name" | "expires_on" | "notice_by" | "finalized";
}

export const NO_CONTRACT_FILTERS: ContractFilters = {
  search: "",
  type: "",
  counterparty: "",
  law: "",
  risk: "",
  expiringWithin: 0,
  noticeWithin: 0,
  order: "name",
};

/** The backend's query for a page of the list under these filters. */
export function queryOf(f: ContractFilters, offset: number, limit = PAGE_SIZE): ContractQuery_Deserialize {
  const text = (s: string) => (s.trim() ? s.trim() : null);
  return {
    search: text(f.search),
    type_id: text(f.type),
    counterparty: text(f.counterparty),
    governing_law: text(f.law),
    risk: text(f.risk),
    expiring_within_days: f.expiringWithin > 0 ? f.expiringWithin : null,
    notice_within_days: f.noticeWithin > 0 ? f.noticeWithin : null,
    order: f.order,
    offset,
    limit,
  };
}

/** Which rows to draw for a scroll position: those in view plus a few either side, within the list. */
export function visibleRange(scrollTop: number, viewport: number, total: number, overscan = 8): { start: number; end: number } {
  const height = viewport > 0 ? viewport : 600;
  const start = Math.max(0, Math.floor(scrollTop / ROW_HEIGHT) - overscan);
  const end = Math.min(total, Math.ceil((scrollTop + height) / ROW_HEIGHT) + overscan);
  return { start, end: Math.max(start, end) };
}

/** The pages (by offset) that hold rows start..end-1. */
export function pagesFor(start: number, end: number): number[] {
  const out: number[] = [];
  for (let p = Math.floor(start / PAGE_SIZE) * PAGE_SIZE; p < end; p += PAGE_SIZE) out.push(p);
  return out;
}

/** A risk in words, never only a colour. */
export function riskLabel(risk: string | null | undefined): string {
  switch (risk) {
    case "high":
      return "High risk";
    case "medium":
      return "Medium risk";
    case "low":
      return "Low risk";
    default:
      return "Not assessed";
  }
}

/** Why the risk is what it is, in a sentence. */
export function riskWhy(row: Pick<ContractRow_Serialize, "risk" | "red_flags" | "critical_gaps">): string {
  const flags = row.red_flags === 1 ? "1 item carries a red flag" : `${row.red_flags} items carry red flags`;
  const gaps = row.critical_gaps === 1 ? "1 critical item is missing or partial" : `${row.critical_gaps} critical items are missing or partial`;
  if (row.risk === "high") return row.critical_gaps > 0 ? `${flags}; ${gaps}.` : `${flags}.`;
  if (row.risk === "medium") return `${gaps}.`;
  if (row.risk === "low") return "No red flags, and every critical item is covered.";
  return "Not assessed yet.";
}

const MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"];

/** "2027-03-31" → "31 March 2027"; anything else as it is; null as a dash. */
export function dateLabel(iso: string | null | undefined): string {
  if (!iso) return "—";
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(iso);
  if (!m) return iso;
  return `${Number(m[3])} ${MONTHS[Number(m[2]) - 1] ?? m[2]} ${m[1]}`;
}

/** How far a date is from today, in words ("in 12 days", "today", "3 days ago"). */
export function dueIn(iso: string | null | undefined, today: string): string {
  if (!iso) return "";
  const days = Math.round((Date.parse(`${iso}T00:00:00Z`) - Date.parse(`${today}T00:00:00Z`)) / 86_400_000);
  if (Number.isNaN(days)) return "";
  if (days === 0) return "today";
  if (days === 1) return "tomorrow";
  if (days > 0) return `in ${days} days`;
  return days === -1 ? "yesterday" : `${-days} days ago`;
}

/** Today as the person's calendar has it, YYYY-MM-DD. */
export function localToday(now: Date = new Date()): string {
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${now.getFullYear()}-${pad(now.getMonth() + 1)}-${pad(now.getDate())}`;
}

/** The first day of this month, YYYY-MM-DD. */
export function monthStart(today: string): string {
  return `${today.slice(0, 7)}-01`;
}
