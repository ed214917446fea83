// Pure helpers of the review workspace: words for codes, checklist filters and grouping, the text runs a range
// covers, find in document, selections turned into page offsets. No I/O here, so the component tests and the views
// share one definition of each rule. Where a quote stands on its page is the backend's to say (each quote comes with
// the character range its verification found): nothing here searches for quotes.
import type { ChecklistItem_Serialize, ContractType_Serialize, ItemStatus, QueueEntry_Serialize, ReviewItem_Serialize, TextRun } from "./bindings";

/** The gate's reasons as a sentence a reviewer reads (the backend's `detail` follows with the figures). */
const GATE_REASONS: Record<string, string> = {
  ocr_failed: "The pages could not be read, not even by OCR.",
  ocr_confidence_low: "OCR read some pages with low confidence.",
  ocr_confidence_estimated: "OCR confidence could only be estimated, so a person checks the text.",
  classification_unresolved: "The contract type is not certain.",
  red_flag: "A red flag was found.",
  critical_low_confidence: "A critical item is uncertain or could not be answered.",
  too_many_not_evaluated: "Too many items could not be evaluated.",
};

export function gateSentence(reason: string | null | undefined): string {
  if (!reason) return "Routed to a person.";
  return GATE_REASONS[reason] ?? `Routed to a person (${reason.replace(/_/g, " ")}).`;
}

export const STATUS_LABELS: Record<ItemStatus, string> = {
  present: "Present",
  partial: "Partial",
  absent: "Absent",
  not_evaluated: "Not evaluated",
};

export const STATUSES: ItemStatus[] = ["present", "partial", "absent", "not_evaluated"];

export function statusLabel(status: string): string {
  return STATUS_LABELS[status as ItemStatus] ?? status;
}

export function riskLabel(risk: string): string {
  return risk ? risk[0].toUpperCase() + risk.slice(1) : "";
}

/** "83 %" or "—" when there is no figure. */
export function percent(value: number | null | undefined): string {
  // A no-break space keeps the figure and its sign on one line.
  return value === null || value === undefined || Number.isNaN(value) ? "—" : `${Math.round(value * 100)}\u00a0%`;
}

/** Who or what produced an item's answer, in words. */
export function producedBy(item: ReviewItem_Serialize): string {
  switch (item.method) {
    case "model":
      return "Pre-filled by the model (Claude Haiku 5.5)";
    case "rules":
      return "Pre-filled by the offline rules";
    case "person":
      return item.confirmed_by ? `Confirmed by ${item.confirmed_by}` : "Confirmed by a person";
    default:
      return "Not answered yet";
  }
}

/** An item a person confirmed or corrected. */
export function isConfirmed(item: ReviewItem_Serialize): boolean {
  return item.method === "person";
}

/** How long ago, in words: "3 min", "2 h", "4 days". */
export function age(iso: string, now: Date = new Date()): string {
  const then = new Date(iso).getTime();
  if (Number.isNaN(then)) return "";
  const minutes = Math.max(0, Math.round((now.getTime() - then) / 60000));
  if (minutes < 1) return "just now";
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.round(minutes / 60);
  if (hours < 48) return `${hours} h`;
  return `${Math.round(hours / 24)} days`;
}

// ---------------------------------------------------------------------------------------------------------------
// Queue

export type QueueSort = "age" | "name" | "red_flags" | "critical" | "confidence";

export interface QueueFilter {
  text: string;
  reason: string;
}

export function filterQueue(entries: QueueEntry_Serialize[], filter: QueueFilter, sort: QueueSort): QueueEntry_Serialize[] {
  const text = filter.text.trim().toLowerCase();
  const kept = entries.filter(
    (e) =>
      (filter.reason === "" || e.reason === filter.reason) &&
      (text === "" ||
        e.name.toLowerCase().includes(text) ||
        (e.type_name ?? "").toLowerCase().includes(text) ||
        e.detail.toLowerCase().includes(text)),
  );
  const by: Record<QueueSort, (a: QueueEntry_Serialize, b: QueueEntry_Serialize) => number> = {
    // Oldest first: the longest-waiting document is the next to do.
    age: (a, b) => a.imported_at.localeCompare(b.imported_at),
    name: (a, b) => a.name.localeCompare(b.name),
    red_flags: (a, b) => b.red_flags - a.red_flags,
    critical: (a, b) => b.critical_unsure - a.critical_unsure,
    confidence: (a, b) => (a.min_confidence ?? 2) - (b.min_confidence ?? 2),
  };
  return [...kept].sort((a, b) => by[sort](a, b) || a.name.localeCompare(b.name));
}

// ---------------------------------------------------------------------------------------------------------------
// Checklist

export interface ChecklistFilters {
  critical: boolean;
  redFlags: boolean;
  unconfirmed: boolean;
  notEvaluated: boolean;
}

export const NO_FILTERS: ChecklistFilters = { critical: false, redFlags: false, unconfirmed: false, notEvaluated: false };

/** Items that pass every filter that is on (filters narrow together). */
export function filterItems(items: ReviewItem_Serialize[], f: ChecklistFilters): ReviewItem_Serialize[] {
  return items.filter(
    (i) =>
      (!f.critical || i.risk === "critical") &&
      (!f.redFlags || i.red_flags.length > 0) &&
      (!f.unconfirmed || !isConfirmed(i)) &&
      (!f.notEvaluated || i.status === "not_evaluated"),
  );
}

export interface SectionGroup {
  id: string;
  name: string;
  items: ReviewItem_Serialize[];
}

/** Items grouped by the type's sections, in the type's order; sections with no visible item are left out. */
export function groupBySection(items: ReviewItem_Serialize[], type: ContractType_Serialize | null): SectionGroup[] {
  const names = new Map((type?.sections ?? []).map((s) => [s.id, s.name]));
  const order = (type?.sections ?? []).map((s) => s.id);
  const groups = new Map<string, SectionGroup>();
  for (const id of order) groups.set(id, { id, name: names.get(id) ?? id, items: [] });
  for (const item of items) {
    let g = groups.get(item.section);
    if (!g) {
      g = { id: item.section, name: names.get(item.section) ?? item.section.replace(/_/g, " "), items: [] };
      groups.set(item.section, g);
    }
    g.items.push(item);
  }
  return [...groups.values()].filter((g) => g.items.length > 0);
}

/** The items in the order the checklist pane shows them (by section), for next/previous. */
export function displayOrder(items: ReviewItem_Serialize[], type: ContractType_Serialize | null): ReviewItem_Serialize[] {
  return groupBySection(items, type).flatMap((g) => g.items);
}

/** The next item after `current` (wrapping) that no person has confirmed yet. */
export function nextUnconfirmed(ordered: ReviewItem_Serialize[], current: string | null): ReviewItem_Serialize | null {
  const at = ordered.findIndex((i) => i.id === current);
  for (let k = 1; k <= ordered.length; k++) {
    const item = ordered[(at + k + ordered.length) % ordered.length];
    if (item && !isConfirmed(item)) return item;
  }
  return null;
}

/** Critical items of the type that no person has confirmed or corrected yet (what blocks finalize). */
export function openCriticalItems(type: ContractType_Serialize | null, items: ReviewItem_Serialize[]): ChecklistItem_Serialize[] {
  if (!type) return [];
  const confirmed = new Set(items.filter(isConfirmed).map((i) => i.id));
  return type.items.filter((i) => i.risk === "critical" && !confirmed.has(i.id));
}

// ---------------------------------------------------------------------------------------------------------------
// Text: quotes, runs, find, selections. Offsets are in characters (Unicode scalars), as the backend counts them.

/** The page's text as an array of characters, so offsets match the backend's. */
export function charsOf(text: string): string[] {
  return Array.from(text);
}

function isSpace(c: string): boolean {
  return /\s/u.test(c);
}

/** Indexes of the runs that overlap [start, end). */
export function runsCovering(runs: TextRun[], start: number, end: number): number[] {
  const out: number[] = [];
  runs.forEach((r, i) => {
    if (r.start < end && r.end > start) out.push(i);
  });
  return out;
}

/**
 * Find in document: every place the person's `query` occurs in the page, ignoring case, where any run of whitespace
 * in the query matches any run of whitespace on the page (a line break included). Character ranges [start, end), at
 * most `limit`, in page order and not overlapping.
 */
export function findAll(chars: string[], query: string, limit = 1000): [number, number][] {
  const out: [number, number][] = [];
  const want = charsOf(query.trim().replace(/\s+/gu, " ").toLowerCase());
  if (want.length === 0) return out;
  // The page in lower case with each run of whitespace made one space, and where each of its characters stands.
  const hay: string[] = [];
  const at: number[] = [];
  chars.forEach((c, i) => {
    if (!isSpace(c)) {
      hay.push(c.toLowerCase());
      at.push(i);
    } else if (hay.length > 0 && hay[hay.length - 1] !== " ") {
      hay.push(" ");
      at.push(i);
    }
  });
  let i = 0;
  while (i + want.length <= hay.length && out.length < limit) {
    let j = 0;
    while (j < want.length && hay[i + j] === want[j]) j++;
    if (j === want.length) {
      out.push([at[i], at[i + want.length - 1] + 1]);
      i += want.length;
    } else {
      i += 1;
    }
  }
  return out;
}

/** Splits a page's characters into plain and marked segments for the text view of synthetic pages. */
export interface Segment {
  start: number;
  text: string;
  mark: "" | "quote" | "current" | "find";
}

export function segments(chars: string[], marks: { start: number; end: number; kind: Segment["mark"] }[]): Segment[] {
  const kinds: Segment["mark"][] = new Array(chars.length).fill("");
  const rank = { "": 0, quote: 1, find: 2, current: 3 };
  for (const m of marks) {
    for (let i = Math.max(0, m.start); i < Math.min(chars.length, m.end); i++) {
      if (rank[m.kind] > rank[kinds[i]]) kinds[i] = m.kind;
    }
  }
  const out: Segment[] = [];
  let i = 0;
  while (i < chars.length) {
    let j = i;
    while (j < chars.length && kinds[j] === kinds[i]) j++;
    out.push({ start: i, text: chars.slice(i, j).join(""), mark: kinds[i] });
    i = j;
  }
  return out;
}

/**
 * A DOM selection point inside a text piece (an element with `data-start`, the character offset of its first
 * character) as a character offset into the page. `utf16Offset` is the DOM offset into the piece's text node.
 */
export function pointToOffset(pieceStart: number, pieceText: string, utf16Offset: number): number {
  return pieceStart + charsOf(pieceText.slice(0, utf16Offset)).length;
}
