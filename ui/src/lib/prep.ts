/** Words and small arithmetic for Prep Studio, shared by its views and tests. Validation is not here: the
 * backend's validators decide (they run offline); this file only turns what they say into words and places. */
import type { ArtifactKind, ArtifactState, ErrorCode, PrepExportFormat, RunBudget, RunStep, Violation } from "./bindings";

export interface ArtifactInfo {
  kind: ArtifactKind;
  label: string;
  /** What the artifact holds, in one line. */
  hint: string;
}

/** The six artifacts in dependency order: each depends on every one before it. */
export const ARTIFACTS: ArtifactInfo[] = [
  { kind: "intake", label: "Intake", hint: "What the buyer needs, the budget ceiling and the timeline" },
  { kind: "scope", label: "Scope", hint: "What is in and out of scope, and the deliverables" },
  { kind: "requirements", label: "Requirements", hint: "Mandatory and scored requirements; scored ones are measurable" },
  { kind: "criteria", label: "Evaluation criteria", hint: "Weights summing to exactly 100 %; each scored requirement under one criterion" },
  { kind: "pricing", label: "Pricing schedule", hint: "Lines vendors can price: a unit, a quantity or basis, no open amounts" },
  { kind: "milestones", label: "Milestones", hint: "Dates computed from the intake on a business-day calendar; you write the rationale" },
];

/** The formats a package exports to: the button's label, the file's extension and the save dialog's filter name. */
export const PREP_EXPORT_FORMATS: { format: PrepExportFormat; label: string; extension: string; filterName: string }[] = [
  { format: "docx", label: "DOCX", extension: "docx", filterName: "Word document" },
  { format: "pdf", label: "PDF", extension: "pdf", filterName: "PDF" },
  { format: "ocds", label: "OCDS", extension: "json", filterName: "OCDS 1.1 release (JSON)" },
];

export function artifactLabel(kind: ArtifactKind | string): string {
  return ARTIFACTS.find((a) => a.kind === kind)?.label ?? kind;
}

/** An artifact's state in words (never colour alone). */
export function stateLabel(state: ArtifactState): string {
  switch (state.status) {
    case "empty":
      return "empty";
    case "drafting":
      return "drafting…";
    case "drafted":
      return "drafted, not validated";
    case "invalid":
      return `invalid: ${state.errors.length} ${state.errors.length === 1 ? "error" : "errors"}`;
    case "valid":
      return "valid, not approved";
    case "approved":
      return "approved";
    case "stale":
      return "stale: something upstream changed";
    default:
      return "unknown";
  }
}

/** The validator errors of an artifact (none unless it is invalid). */
export function errorsOf(state: ArtifactState): Violation[] {
  return state.status === "invalid" ? state.errors : [];
}

/** The errors about one row (a requirement code, a criterion's requirement, a pricing line, a milestone). */
export function errorsFor(errors: Violation[], subject: string | null | undefined): Violation[] {
  const key = (subject ?? "").trim();
  return errors.filter((e) => (e.subject ?? "").trim() === key && key !== "");
}

/** Errors that name no row of the table (shown above it). */
export function generalErrors(errors: Violation[], subjects: string[]): Violation[] {
  const known = new Set(subjects.map((s) => s.trim()).filter(Boolean));
  return errors.filter((e) => !e.subject || !known.has(e.subject.trim()));
}

/** "45", "45.5", "45.25" (per cent) → basis points as an exact integer; null if it is not such a number. */
export function percentToBp(text: string): number | null {
  const m = /^\s*(\d{1,3})(?:[.,](\d{1,2}))?\s*%?\s*$/.exec(text);
  if (!m) return null;
  const bp = Number(m[1]) * 100 + Number((m[2] ?? "").padEnd(2, "0") || "0");
  return bp <= 10000 ? bp : null;
}

/** Basis points as a per-cent figure with two decimals: 4550 → "45.50". */
export function bpToPercent(bp: number): string {
  return `${Math.floor(bp / 100)}.${String(bp % 100).padStart(2, "0")}`;
}

/** "450000" or "450,000.50" (major units) → minor units as an exact integer; null if it is not an amount. */
export function majorToMinor(text: string): number | null {
  const m = /^(\d{1,13})(?:\.(\d{1,2}))?$/.exec(text.replace(/[,_\s]/g, ""));
  if (!m) return null;
  return Number(m[1]) * 100 + Number((m[2] ?? "").padEnd(2, "0") || "0");
}

export function minorToMajor(minor: number | null | undefined): string {
  if (minor === null || minor === undefined) return "";
  const cents = minor % 100;
  return cents === 0 ? String(Math.floor(minor / 100)) : `${Math.floor(minor / 100)}.${String(cents).padStart(2, "0")}`;
}

/** "N1, N2" → ["N1", "N2"]. */
export function splitList(text: string): string[] {
  return text
    .split(/[,;]/)
    .map((s) => s.trim())
    .filter(Boolean);
}

/** One entry a line: "a\nb" → ["a", "b"]. */
export function splitLines(text: string): string[] {
  return text
    .split("\n")
    .map((s) => s.trim())
    .filter(Boolean);
}

/** A drafting step in words. */
export function stepLabel(step: RunStep): string {
  return step.step === "critique" ? "the red-team critic reviews the draft" : `drafting the ${artifactLabel(step.artifact).toLowerCase()}`;
}

/** Micro-dollars as dollars with four decimals ("$0.0123"). */
export function dollars(micros: number): string {
  return `$${(micros / 1_000_000).toFixed(4)}`;
}

export function thousands(n: number): string {
  return n.toLocaleString("en-US");
}

/** A budget meter's figures: used against the limit, as a fraction (capped at 1) and in words. */
export function meter(used: number, limit: number): { fraction: number; over: boolean } {
  if (limit <= 0) return { fraction: 1, over: used > 0 };
  return { fraction: Math.min(1, used / limit), over: used >= limit };
}

/** A budget from the buyer's figures (tokens, dollars, seconds); null with a message when one is not a number. */
export function budgetFrom(tokens: string, dollarsText: string, seconds: string): { budget: RunBudget } | { error: string } {
  const t = Number(tokens.replace(/[,_\s]/g, ""));
  const s = Number(seconds.replace(/[,_\s]/g, ""));
  const m = /^\s*\$?\s*(\d{1,6})(?:\.(\d{1,6}))?\s*$/.exec(dollarsText);
  if (!Number.isInteger(t) || t <= 0) return { error: "The token budget must be a whole number above 0." };
  if (!m) return { error: "The cost budget must be an amount in dollars, e.g. 0.50." };
  if (!Number.isInteger(s) || s <= 0) return { error: "The time budget must be a whole number of seconds above 0." };
  const micros = Number(m[1]) * 1_000_000 + Number((m[2] ?? "").padEnd(6, "0") || "0");
  return { budget: { max_tokens: t, max_cost_micros: micros, max_seconds: s } };
}

/** What to tell the buyer for an error code, and whether the package must be reloaded to show what is true now. */
export function advice(code: ErrorCode, message: string): { text: string; reload: boolean } {
  switch (code) {
    case "package_locked":
      return { text: `Read only: ${message}`, reload: true };
    case "edit_conflict":
      return {
        text: "The package changed since you opened it (another save came first). It was reloaded; apply your change again.",
        reload: true,
      };
    case "approval_outdated":
      return { text: "The content changed since you saw it. It was reloaded: review it again, then approve.", reload: true };
    case "publish_blocked":
      return { text: `Not published: ${message}`, reload: true };
    case "sync_unavailable":
      return { text: `Not saved: ${message}. Your change is still in the editor.`, reload: false };
    case "model_unavailable":
      return { text: `The model cannot be reached now: ${message} Editing and validation still work offline.`, reload: false };
    case "budget_exhausted":
      return { text: `The budget is spent: ${message}`, reload: true };
    default:
      return { text: message, reload: false };
  }
}

/** Why drafting cannot start, from the model's availability; null when it can. */
export function draftBlocker(model: string | null): string | null {
  switch (model) {
    case "ready":
      return null;
    case "no_api_key":
      return "Drafting needs the model, and no API key is stored: add one in Settings (Alt+7). Editing and validation work offline.";
    case "keychain_unavailable":
      return "Drafting needs the model, and the OS keychain holding the API key cannot be reached. Editing and validation work offline.";
    case "paused":
      return "Drafting needs the model, which is paused after repeated errors; try again in a minute. Editing and validation work offline.";
    case null:
      return "Checking whether the model is available…";
    default:
      return `Drafting needs the model (${model}).`;
  }
}

/** A short form of a content hash for people ("3f2a9c1e"). */
export function shortHash(hash: string | null | undefined): string {
  return hash ? hash.slice(0, 12) : "—";
}

/** Moves focus to the same column in the row above or below (`Alt+↑/↓` in the table editors). */
export function moveInColumn(event: KeyboardEvent, delta: number): boolean {
  const cell = (event.target as HTMLElement | null)?.closest("td");
  const row = cell?.closest("tr");
  const body = row?.parentElement;
  if (!cell || !row || !body) return false;
  const column = Array.from(row.children).indexOf(cell);
  const rows = Array.from(body.children).filter((r) => r.matches("tr[data-row]"));
  const target = rows[rows.indexOf(row) + delta]?.children[column]?.querySelector<HTMLElement>("input, select, textarea, button");
  if (!target) return false;
  target.focus();
  return true;
}

/** What a row of a Prep Studio table does: save the table, add a row below this one, remove this one. */
export interface RowActions {
  save: () => void;
  addRow: () => void;
  removeRow: () => void;
}

/**
 * The keys every Prep Studio table row answers: Ctrl+Enter or Ctrl+S saves; unless the table is read-only,
 * Alt+Enter adds a row below, Alt+Delete (or Alt+Backspace) removes the row, Alt+↓ and Alt+↑ move to the same
 * cell of the next or previous row.
 */
export function onRowKeydown(event: KeyboardEvent, readonly: boolean, act: RowActions): void {
  if ((event.ctrlKey || event.metaKey) && (event.key === "Enter" || event.key.toLowerCase() === "s")) {
    event.preventDefault();
    act.save();
  } else if (readonly || !event.altKey) {
    return;
  } else if (event.key === "Enter") {
    event.preventDefault();
    act.addRow();
  } else if (event.key === "Delete" || event.key === "Backspace") {
    event.preventDefault();
    act.removeRow();
  } else if (event.key === "ArrowDown" || event.key === "ArrowUp") {
    if (moveInColumn(event, event.key === "ArrowDown" ? 1 : -1)) event.preventDefault();
  }
}

/** After row `index` was removed: focus the `cell` (by default the first) of the row now in its place (or the last
 * row), else the table's add-row button. */
export function focusAfterRemoval(table: HTMLTableElement | null, index: number, remaining: number, cell = "td:first-child"): void {
  const inputs = table?.querySelectorAll<HTMLInputElement>(`tr[data-row] ${cell} input`);
  (inputs?.[Math.min(index, remaining - 1)] ?? table?.querySelector<HTMLElement>("[data-testid=add-row]"))?.focus();
}
