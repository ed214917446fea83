/** The assistant panel's pure parts: the question limit, what to do about an error, the cited range of a page. */
import type { ErrorCode } from "./bindings";

/** The longest question the assistant accepts (the backend checks the same limit). */
export const MAX_QUESTION_CHARS = 2000;

/** Characters as the backend counts them (Unicode scalar values, not UTF-16 units). */
export function charCount(text: string): number {
  return Array.from(text).length;
}

/** What to do about an assistant error, by its stable code; null when the message says it all. */
export function remedyFor(code: ErrorCode | null): string | null {
  switch (code) {
    case "model_unavailable":
      return "The assistant needs the model. Add your API key in Settings (Alt+7); everything else works offline.";
    case "budget_exhausted":
      return "This month's model budget is used up. An owner can raise the budget in Settings, or ask again next month.";
    case "rate_limited":
      return "Too many questions in the last minute. Wait a minute, then ask again.";
    case "model_tool_loop_cap":
      return "The assistant could not settle on an answer in its allowed steps. Ask a narrower question (name the contract or the clause).";
    case "invalid_input":
      return "Shorten or rephrase the question, then ask again.";
    default:
      return null;
  }
}

/** A page's text split around the cited character range `start..end` (Unicode scalar offsets, end exclusive). */
export function splitAtRange(text: string, start: number, end: number): { before: string; cited: string; after: string } {
  const chars = Array.from(text);
  const s = Math.max(0, Math.min(start, chars.length));
  const e = Math.max(s, Math.min(end, chars.length));
  return { before: chars.slice(0, s).join(""), cited: chars.slice(s, e).join(""), after: chars.slice(e).join("") };
}

/** A piece of a page: outside the cited passage, inside it, or one of its supporting sentences. */
export type PassageSegment = { text: string; kind: "page" | "passage" | "support" };

/**
 * A page's text cut into segments around the cited passage `start..end` and its supporting sentences (page ranges
 * inside the passage, in order; Unicode scalar offsets, ends exclusive). With no supporting sentences, the passage
 * itself is the support. Adjacent pieces of the same kind are never split.
 */
export function passageSegments(
  text: string,
  start: number,
  end: number,
  supporting: { start: number; end: number }[],
): PassageSegment[] {
  const chars = Array.from(text);
  const clamp = (n: number) => Math.max(0, Math.min(n, chars.length));
  const s = clamp(start);
  const e = Math.max(s, clamp(end));
  const support = supporting
    .map((r) => ({ start: Math.max(s, clamp(r.start)), end: Math.min(e, clamp(r.end)) }))
    .filter((r) => r.start < r.end)
    .sort((a, b) => a.start - b.start);
  const ranges = support.length > 0 ? support : [{ start: s, end: e }];
  const out: PassageSegment[] = [];
  const push = (from: number, to: number, kind: PassageSegment["kind"]) => {
    if (from >= to) return;
    const piece = chars.slice(from, to).join("");
    const last = out[out.length - 1];
    if (last && last.kind === kind) last.text += piece;
    else out.push({ text: piece, kind });
  };
  push(0, s, "page");
  let at = s;
  for (const r of ranges) {
    const from = Math.max(at, r.start);
    push(at, from, "passage");
    push(from, r.end, "support");
    at = Math.max(at, r.end);
  }
  push(at, e, "passage");
  push(e, chars.length, "page");
  return out;
}
