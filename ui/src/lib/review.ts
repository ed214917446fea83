// Pure helpers of the review workspace: words for codes, checklist filters and grouping, the text runs a range
// covers, find in document, selections turned into page offsets. No I/O here, so the component tests and the views
// share one definition of each rule. Where a quote stands on its page is the backend's to say (each quote comes with
// the character range its verification found): nothing here searches for quotes.
import type {
  ChecklistItem_Serialize,
  ContractType_Serialize,
  DocumentReview_Serialize,
  ItemStatus,
  QueueEntry_Serialize,
  ReviewItem_Serialize,
  TextRun,
} from "./bindings";

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
  return GATE_REASONS[reason] ?? "Routed to a person.";
}

/** The gate's reasons as a short label (the queue's filter). */
const REASON_LABELS: Record<string, string> = {
  ocr_failed: "Pages not readable",
  ocr_confidence_low: "OCR unsure",
  ocr_confidence_estimated: "OCR not measured",
  classification_unresolved: "Contract type uncertain",
  red_flag: "Red flag",
  critical_low_confidence: "Critical item unsure",
  too_many_not_evaluated: "Many items unanswered",
};

export function reasonLabel(reason: string): string {
  return REASON_LABELS[reason] ?? "Other reason";
}

/** The pipeline's stages in words, in their order. */
const STAGE_LABELS: Record<string, string> = {
  extract: "Reading the pages",
  classify: "Telling the contract type",
  checklist: "Pre-filling the checklist",
  gate: "Review gate",
  finalize: "Contract record",
};

export function stageLabel(stage: string): string {
  return STAGE_LABELS[stage] ?? "Another step";
}

const STAGE_STATUS: Record<string, string> = {
  pending: "not run",
  running: "running",
  done: "done",
  degraded: "done, with less than usual",
  failed: "could not finish",
};

/** What a dry run says, in words: the route a real run would take and why, its model calls, and its stages. */
export interface DryRunSummary {
  route: string;
  why: string | null;
  calls: string;
  stages: string[];
}

export function dryRunSummary(review: DocumentReview_Serialize): DryRunSummary {
  const gate = review.gate;
  const route = !gate
    ? "A real run would stop before the review gate."
    : gate.route === "auto"
      ? "A real run would let this document go on without a person."
      : "A real run would send this document to a person.";
  const why = gate && gate.route !== "auto" ? gateSentence(gate.reason) : null;
  const n = review.planned_model_calls ?? 0;
  const calls =
    n === 0
      ? "It would make no model call: no model is available, so the offline rules would answer."
      : `It would make ${n} model call${n === 1 ? "" : "s"}: one to tell the contract type, the rest to pre-fill the checklist.`;
  const stages = review.stages.map((s) => {
    const words = `${stageLabel(s.stage)}: ${STAGE_STATUS[s.status] ?? s.status}`;
    // Why the pages could not be read is the person's to know; other stages' reasons carry codes and scores.
    return s.stage === "extract" && s.reason ? `${words} (${s.reason})` : words;
  });
  return { route, why, calls, stages };
}

/** What a person is asked to look at, counted: the figures behind the gate's reason. */
export interface NeedCounts {
  redFlags: number;
  criticalUnsure: number;
  notEvaluated: number;
  typeName: string | null;
}

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/**
 * Why a person is needed, in plain words and with the figures a reviewer acts on ("2 items carry a red flag: decide
 * whether they are acceptable."). No scores here: those stay behind the "why?" disclosure ({@link whyDetails}).
 */
export function whyPerson(reason: string | null | undefined, c: NeedCounts): string {
  switch (reason) {
    case "red_flag":
      return c.redFlags > 0
        ? `${plural(c.redFlags, "item carries", "items carry")} a red flag: decide whether ${c.redFlags === 1 ? "it is" : "they are"} acceptable.`
        : "A red flag was found: decide whether it is acceptable.";
    case "critical_low_confidence":
      return c.criticalUnsure > 0
        ? `${plural(c.criticalUnsure, "critical item needs", "critical items need")} a person: the pre-fill is unsure or found no answer.`
        : "A critical item needs a person: the pre-fill is unsure or found no answer.";
    case "classification_unresolved":
      return c.typeName ? `Check the contract type: it looks like a ${c.typeName}, but that is not certain.` : "Choose the contract type: it could not be told for certain.";
    case "too_many_not_evaluated":
      return `${plural(c.notEvaluated, "item", "items")} could not be answered automatically: answer them from the contract.`;
    case "ocr_failed":
      return "Some pages could not be read, not even by OCR: check the pages.";
    case "ocr_confidence_low":
      return "Some pages were read by OCR with low confidence: check the text against the page.";
    case "ocr_confidence_estimated":
      return "Pages were read by OCR and how well cannot be measured: check the text against the page.";
    default:
      return gateSentence(reason);
  }
}

/** The scores and the gate's own words, for the "why?" disclosure: item ids are replaced by the items' questions. */
export function whyDetails(
  gateDetail: string,
  type: { name: string; confidence: number | null; method: string | null } | null,
  minConfidence: number | null,
  questions: { id: string; question: string }[] = [],
): string[] {
  const out: string[] = [];
  if (type) {
    const how = type.method === "model" ? "by the model" : "by keywords";
    out.push(`Contract type ${type.name}, chosen ${how}: ${percent(type.confidence)} sure.`);
  }
  if (minConfidence !== null && minConfidence !== undefined) out.push(`Least sure answer of the pre-fill: ${percent(minConfidence)}.`);
  const detail = inWords(gateDetail, questions);
  if (detail) out.push(`Review gate: ${detail}.`);
  return out;
}

/** Text with every checklist item id in it replaced by the item's question in quotes. */
export function inWords(text: string, questions: { id: string; question: string }[]): string {
  let out = text.trim().replace(/\.$/, "");
  // Longest ids first, so an id that is a prefix of another never cuts it.
  for (const q of [...questions].sort((a, b) => b.id.length - a.id.length)) {
    out = out.split(q.id).join(`“${q.question.replace(/\?$/, "")}”`);
  }
  return out;
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

/** Hyphens a line may end with when a word is broken across lines (pdfium reports a soft one as U+0002). */
const BREAK_HYPHENS = new Set(["-", "\u00ad", "\u2010", "\u0002"]);

/**
 * Find in document: every place the person's `query` occurs in the page, ignoring case, where any run of whitespace
 * in the query matches any run of whitespace on the page (a line break included), and a word the page breaks across
 * lines with a hyphen ("indem-⏎nify") matches the whole word ("indemnify") or the hyphenated one ("non-compete").
 * Character ranges [start, end), at most `limit`, in page order and not overlapping.
 */
export function findAll(chars: string[], query: string, limit = 1000): [number, number][] {
  const out: [number, number][] = [];
  const want = charsOf(query.trim().replace(/\s+/gu, " ").toLowerCase());
  if (want.length === 0) return out;
  // The page in lower case with each run of whitespace made one space, where each of its characters stands, and
  // which hyphens end a line (followed by a run of whitespace holding a line break).
  const hay: string[] = [];
  const at: number[] = [];
  const soft: boolean[] = [];
  chars.forEach((c, i) => {
    if (!isSpace(c)) {
      hay.push(c.toLowerCase());
      at.push(i);
      soft.push(false);
      return;
    }
    const last = hay.length - 1;
    if (last >= 0 && hay[last] !== " ") {
      hay.push(" ");
      at.push(i);
      soft.push(false);
    }
    if ((c === "\n" || c === "\r") && last >= 0) {
      // The hyphen before this run of whitespace (the run started right after it).
      const h = hay[last] === " " ? last - 1 : last;
      if (h >= 0 && BREAK_HYPHENS.has(hay[h]) && hay[h + 1] === " ") soft[h] = true;
    }
  });
  // The index in `hay` just past a match of want[j..] starting at hay[i], or -1.
  const match = (i: number, j: number): number => {
    while (j < want.length) {
      if (i >= hay.length) return -1;
      if (soft[i]) {
        // The word joined over the break, or the hyphen kept and the break dropped.
        const joined = match(i + 2, j);
        if (joined >= 0) return joined;
        if (want[j] === "-" || want[j] === hay[i]) {
          const kept = match(i + 2, j + 1);
          if (kept >= 0) return kept;
        }
      }
      if (hay[i] !== want[j]) return -1;
      i += 1;
      j += 1;
    }
    return i;
  };
  let i = 0;
  while (i < hay.length && out.length < limit) {
    const end = hay[i] === want[0] ? match(i, 0) : -1;
    if (end > i) {
      out.push([at[i], at[end - 1] + 1]);
      i = end;
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

// ---------------------------------------------------------------------------------------------------------------
// The contract pane: zoom, the reader's place, the panes' layout.

/** CSS pixels per PDF point. */
export const POINT = 96 / 72;
/** The smallest zoom the fitted page gets: 10-point text is then ~11 px, readable. A narrower pane scrolls sideways. */
export const READABLE_ZOOM = 0.8;

/** The zoom that fits a page `pageWidth` points wide into `available` CSS pixels, never below {@link READABLE_ZOOM}. */
export function fitZoom(available: number, pageWidth: number): number {
  if (!(available > 100) || !(pageWidth > 0)) return 1;
  return Math.max(READABLE_ZOOM, Math.min(3, available / (pageWidth * POINT)));
}

/** A page's place in the scrolling pane (CSS pixels from the top of the content). */
export interface PageBox {
  page: number;
  top: number;
  height: number;
}

/** The reader's place: the page at the top of the view, how far into it (share of its height), and the view's
 * horizontal centre as a share of the content's width. */
export interface ViewPlace {
  page: number;
  within: number;
  across: number;
}

export function placeOf(
  pages: PageBox[],
  view: { top: number; left: number; width: number; contentWidth: number },
): ViewPlace | null {
  let at: PageBox | null = null;
  for (const p of pages) {
    if (p.top <= view.top + 1) at = p;
    else break;
  }
  at ??= pages[0] ?? null;
  if (!at) return null;
  const within = at.height > 0 ? Math.min(1, Math.max(0, (view.top - at.top) / at.height)) : 0;
  const across = view.contentWidth > 0 ? (view.left + view.width / 2) / view.contentWidth : 0.5;
  return { page: at.page, within, across };
}

/** Where to scroll so `place` is where it was, once the pages have their new size. */
export function scrollFor(
  place: ViewPlace,
  pages: PageBox[],
  view: { width: number; contentWidth: number },
): { top: number; left: number } {
  const p = pages.find((b) => b.page === place.page);
  const top = p ? p.top + place.within * p.height : 0;
  const left = Math.max(0, place.across * view.contentWidth - view.width / 2);
  return { top, left };
}

/** Side panes of the review, each open or folded to a strip. */
export interface Folded {
  checklist: boolean;
  citation: boolean;
}

/** The panes' default widths (contract, checklist) in percent of the review; the citation pane takes the rest. */
export const DEFAULT_WIDTHS: [number, number] = [56, 22];
/** The width of a folded pane's strip. */
export const FOLDED_STRIP = 30;

/** The review grid's columns: contract, splitter, checklist, splitter, citation. A folded pane is a strip and the
 * contract takes the width it leaves; splitters show only between two open panes. */
export function paneColumns(widths: [number, number], folded: Folded): string {
  const [a, b] = widths;
  const c = Math.max(10, 100 - a - b);
  if (!folded.checklist && !folded.citation) return `${a}% 6px ${b}% 6px 1fr`;
  if (folded.checklist && folded.citation) return `1fr 0 ${FOLDED_STRIP}px 0 ${FOLDED_STRIP}px`;
  if (folded.checklist) return `1fr 0 ${FOLDED_STRIP}px 6px ${c}%`;
  return `1fr 6px ${b}% 0 ${FOLDED_STRIP}px`;
}

/** The contract pane's width in CSS pixels for a review area `total` pixels wide. */
export function contractWidth(total: number, widths: [number, number], folded: Folded): number {
  const [a, b] = widths;
  const c = Math.max(10, 100 - a - b);
  if (!folded.checklist && !folded.citation) return (total * a) / 100;
  if (folded.checklist && folded.citation) return total - 2 * FOLDED_STRIP;
  if (folded.checklist) return total - FOLDED_STRIP - 6 - (total * c) / 100;
  return total - 6 - (total * b) / 100 - FOLDED_STRIP;
}
