/** The Runs area's form and words helpers. The backend checks every form (one home, in Rust); this only turns what
 * a person typed into the input object and finds the field an error names. */
import type { FormField, RunFilter, RunStatus } from "./bindings";

/** What a form field holds while it is being filled in. */
export type FieldValue = string | boolean | string[] | Row[];
export type Row = Record<string, FieldValue>;
export type FormValues = Record<string, FieldValue>;

/** The starting values of a form: a table's rows from the organization's records, blanks elsewhere. */
export function initialValues(fields: FormField[]): FormValues {
  const values: FormValues = {};
  for (const f of fields) values[f.key] = initialValue(f);
  return values;
}

function initialValue(f: FormField): FieldValue {
  switch (f.kind) {
    case "flag":
      return false;
    case "tags":
      return f.options.length ? [] : "";
    case "table": {
      const rows = Array.isArray(f.initial) ? f.initial : [];
      return rows.map((r) => {
        const row: Row = {};
        for (const c of f.columns) {
          const given = r && typeof r === "object" && !Array.isArray(r) ? (r as Record<string, unknown>)[c.key] : undefined;
          row[c.key] = given === undefined || given === null ? initialValue(c) : String(given);
        }
        return row;
      });
    }
    default:
      return typeof f.initial === "string" ? f.initial : "";
  }
}

/** An empty row of a table. */
export function emptyRow(table: FormField): Row {
  const row: Row = {};
  for (const c of table.columns) row[c.key] = initialValue(c);
  return row;
}

/** A field's value as the input wants it; `undefined` when left blank (the backend says whether it is required). */
function toInput(f: FormField, v: FieldValue | undefined): unknown {
  if (v === undefined) return undefined;
  switch (f.kind) {
    case "flag":
      return v === true;
    case "tags": {
      const list = Array.isArray(v) ? (v as string[]) : String(v).split(",");
      const words = list.map((w) => String(w).trim()).filter((w) => w !== "");
      return words.length ? words : undefined;
    }
    case "whole_number": {
      const text = String(v).trim();
      if (text === "") return undefined;
      return /^-?\d+$/.test(text) ? Number(text) : text;
    }
    case "table": {
      const rows = (v as Row[]).map((row) => {
        const out: Record<string, unknown> = {};
        for (const c of f.columns) {
          const value = toInput(c, row[c.key]);
          if (value !== undefined) out[c.key] = value;
        }
        return out;
      });
      const kept = rows.filter((r) => Object.keys(r).length > 0);
      return kept.length ? kept : undefined;
    }
    default: {
      const text = String(v).trim();
      return text === "" ? undefined : text;
    }
  }
}

/** The run's input: each field at its place (dots make nested objects), blanks left out. */
export function buildInput(fields: FormField[], values: FormValues): Record<string, unknown> {
  const input: Record<string, unknown> = {};
  for (const f of fields) {
    const value = toInput(f, values[f.key]);
    if (value === undefined) continue;
    const parts = f.key.split(".");
    let at = input;
    for (const part of parts.slice(0, -1)) {
      if (typeof at[part] !== "object" || at[part] === null) at[part] = {};
      at = at[part] as Record<string, unknown>;
    }
    at[parts[parts.length - 1]] = value;
  }
  return input;
}

/** The field an error message names ("Budget: must be an amount…", "Vendors, row 2: Price: …"), if any. */
export function fieldOfError(fields: FormField[], message: string): string | null {
  const named = [...fields].sort((a, b) => b.label.length - a.label.length);
  for (const f of named) {
    if (message.startsWith(`${f.label}:`) || message.startsWith(`${f.label}, row `)) return f.key;
  }
  return null;
}

/** Run statuses in words for the filter. */
export const STATUS_CHOICES: { value: RunStatus; label: string }[] = [
  { value: "waiting", label: "Waiting" },
  { value: "running", label: "Running" },
  { value: "compensating", label: "Undoing steps" },
  { value: "succeeded", label: "Finished" },
  { value: "failed", label: "Failed" },
  { value: "cancelled", label: "Cancelled" },
];

/** The filter the backend gets: dates (YYYY-MM-DD, the reader's own days) become instants. */
export function filterOf(f: { status: string; graph: string; startedBy: string; from: string; to: string }): RunFilter {
  const day = (text: string, plus: number) => {
    if (!/^\d{4}-\d{2}-\d{2}$/.test(text)) return null;
    const [y, m, d] = text.split("-").map(Number);
    return new Date(y, m - 1, d + plus).toISOString();
  };
  return {
    status: (f.status || null) as RunStatus | null,
    graph: f.graph || null,
    started_by: f.startedBy || null,
    since: day(f.from, 0),
    until: day(f.to, 1),
  };
}

/** "10:42" today, else "30 Nov 10:42", in the reader's time. */
export function clockTime(iso: string, now: Date = new Date()): string {
  const t = new Date(iso);
  if (Number.isNaN(t.getTime())) return iso;
  const hm = t.toLocaleTimeString(undefined, { hour: "2-digit", minute: "2-digit" });
  if (t.toDateString() === now.toDateString()) return hm;
  return `${t.toLocaleDateString(undefined, { day: "numeric", month: "short" })} ${hm}`;
}
