/** Words for what people asked for and could not find: model spend (Settings → Usage), the audit log, a
 * document's stage log and earlier assistant answers. Money arrives in the ledger's unit, micro-dollars. */
import type { StageLogEntry, UsageFeature } from "./bindings";
import { gateSentence, stageLabel } from "./review";

/** Micro-dollars as money people read: two decimals, four below a cent, and "under $0.0001" below that, so a
 * small call never reads as nothing. */
export function money(value: number | null | undefined): string {
  const micros = value ?? 0;
  const sign = micros < 0 ? "−" : "";
  const dollars = Math.abs(micros) / 1_000_000;
  if (dollars > 0 && dollars < 0.0001) return `${sign === "" ? "under" : "−under"} $0.0001`;
  if (dollars > 0 && dollars < 0.01) return `${sign}$${dollars.toFixed(4)}`;
  return `${sign}$${dollars.toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
}

/** What remains of a budget, in words ("$1.20 left", "$0.30 over"), or a dash when there is no budget. */
export function remainingWords(remaining: number | null | undefined): string {
  if (remaining == null) return "—";
  return remaining < 0 ? `${money(-remaining)} over` : `${money(remaining)} left`;
}

export function tokens(n: number | null | undefined): string {
  return Math.round(n ?? 0).toLocaleString("en-US");
}

/** `2026-11` as "November 2026". */
export function monthLabel(month: string): string {
  const [y, m] = month.split("-").map(Number);
  if (!y || !m) return month;
  return new Date(Date.UTC(y, m - 1, 1)).toLocaleString("en-US", { month: "long", year: "numeric", timeZone: "UTC" });
}

const FEATURES: Record<UsageFeature, string> = {
  classification: "Telling contract types",
  checklist: "Pre-filling checklists",
  assistant: "Contract Assistant",
  prep_drafting: "Prep Studio drafting",
  review_report: "Contract review reports",
  agent_steps: "Workflow agent steps",
  search_embeddings: "Meaning-based search (Voyage)",
  other: "Other",
};

export function featureLabel(feature: UsageFeature): string {
  return FEATURES[feature] ?? "Other";
}

const STATUS: Record<string, string> = {
  pending: "Not run yet",
  running: "Running",
  done: "Done",
  degraded: "Done with less than usual",
  failed: "Could not finish",
};

/** A stage's outcome in words. */
function outcomeWords(stage: string, outcome: string | null | undefined): string | null {
  switch (`${stage}:${outcome ?? ""}`) {
    case "extract:text":
      return "Text read from the file";
    case "extract:ocr":
      return "Text recognised from scanned pages";
    case "extract:unreadable":
      return "No page could be read";
    case "classify:model":
      return "The model told the contract type";
    case "classify:keyword":
      return "Told from keywords (no model call)";
    case "classify:keyword_fallback":
      return "Told from keywords instead of the model";
    case "checklist:model":
      return "The model pre-filled the checklist";
    case "checklist:rules":
      return "The rules pre-filled the checklist (no model call)";
    case "checklist:rules_and_classifier":
      return "The rules and the local clause classifier pre-filled the checklist (no model call)";
    case "checklist:rules_fallback":
      return "The rules pre-filled the checklist instead of the model";
    case "checklist:no_text":
      return "Nothing to pre-fill: the document has no text";
    case "gate:auto":
      return "No person needed";
    case "finalize:created":
      return "Contract recorded; a vendor was created";
    case "finalize:matched":
      return "Contract recorded; matched to a vendor";
    case "finalize:needs_review":
      return "Contract recorded; the vendor needs a person";
  }
  if (stage === "gate" && outcome) return "Sent to a person";
  if (stage === "finalize") return "Contract recorded";
  if (outcome === "failed") return "Stopped";
  return null;
}

/** Why a stage did less than usual, in a person's words: never a code. */
function whyWords(s: StageLogEntry): string | null {
  const reason = s.reason ?? "";
  if (s.stage === "gate" && s.outcome && s.outcome !== "auto") return gateSentence(s.outcome);
  if (s.status !== "degraded" && s.status !== "failed") return null;
  if (s.stage === "classify") {
    return /unavailable|unreachable|budget|key/i.test(reason)
      ? "The model could not be reached, so the type was told from keywords."
      : "The model's answer was not a contract type the catalog knows, so the type was told from keywords.";
  }
  if (s.stage === "checklist" && s.outcome === "rules_fallback") {
    return "Every checklist section failed at the model, so the rules answered instead.";
  }
  if (s.status === "failed") return "This step could not finish; run the review again from the review view.";
  // The extract and checklist stages write their reasons as sentences for people.
  return reason ? reason.charAt(0).toUpperCase() + reason.slice(1) + (reason.endsWith(".") ? "" : ".") : null;
}

export interface StageLine {
  what: string;
  status: string;
  outcome: string | null;
  why: string | null;
  model: string;
  tokens: string;
  latency: string;
}

export function stageLine(s: StageLogEntry): StageLine {
  const t = s.input_tokens + s.cache_read_tokens;
  return {
    what: stageLabel(s.stage),
    status: STATUS[s.status] ?? "Unknown",
    outcome: outcomeWords(s.stage, s.outcome),
    why: whyWords(s),
    model: s.model ? "Claude Haiku 5.5" : "No model",
    tokens: s.model ? `${tokens(t)} in · ${tokens(s.output_tokens)} out` : "—",
    latency: s.latency_ms >= 1000 ? `${(s.latency_ms / 1000).toFixed(1)} s` : `${s.latency_ms} ms`,
  };
}
