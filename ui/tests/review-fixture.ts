// A small review for the component tests: one NDA in the queue, its checklist type, two pages (a PDF page with a
// text layer, then a synthetic text page) and a review with items in every state the panes show.
import type {
  ContractType_Serialize,
  DocumentReview_Serialize,
  PageLayout,
  QueueEntry_Serialize,
  ReviewItem_Serialize,
  TextRun,
  TextSpan,
} from "../src/lib/bindings";

export const DOC = "0193a0b4-0000-7000-8000-00000000d0c1";

export const PAGE_1 = [
  "MUTUAL NON-DISCLOSURE AGREEMENT",
  "This Agreement is made between Northwind Traders and Contoso Ltd.",
  '"Confidential Information" means all information disclosed in writing',
  "by either party. The Recipient shall return all materials on request.",
].join("\n");

export const PAGE_2 = "The obligations survive for three years.\nEither party may seek injunctive relief.";

/**
 * The character range at which the backend finds `quote` on a fixture page (whitespace runs may differ, as the
 * backend's verification allows), as it sends it with each quote.
 */
export function spanOn(page: string, quote: string): TextSpan {
  const words = quote.trim().split(/\s+/).map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  const found = new RegExp(words.join("\\s+"), "u").exec(page);
  if (!found) throw new Error(`${quote} is not on the fixture page`);
  const start = Array.from(page.slice(0, found.index)).length;
  return { start, end: start + Array.from(found[0]).length };
}

/** Runs of a page laid out as a typewriter would: one run per word, 6 points per character, 14 per line. */
export function typewriterRuns(text: string): TextRun[] {
  const runs: TextRun[] = [];
  const chars = Array.from(text);
  let line = 0;
  let col = 0;
  let start = -1;
  const close = (end: number) => {
    if (start >= 0) {
      runs.push({ start, end, x: 72 + (col - (end - start)) * 6, y: 72 + line * 14, width: (end - start) * 6, height: 12 });
      start = -1;
    }
  };
  chars.forEach((c, i) => {
    if (c === "\n") {
      close(i);
      line += 1;
      col = 0;
      return;
    }
    if (/\s/.test(c)) close(i);
    else if (start < 0) start = i;
    col += 1;
  });
  close(chars.length);
  return runs;
}

function item(extra: Partial<ReviewItem_Serialize> & Pick<ReviewItem_Serialize, "id" | "section" | "question" | "risk">): ReviewItem_Serialize {
  return {
    status: "present",
    confidence: 0.5,
    quote: null,
    page: null,
    verified: false,
    method: "rules",
    reason: null,
    red_flags: [],
    note: null,
    confirmed_by: null,
    confirmed_at: null,
    value: null,
    normalized: null,
    warnings: [],
    ...extra,
    // The backend sends where each quote stands on its page.
    quote_span: extra.quote && extra.page ? spanOn(extra.page === 1 ? PAGE_1 : PAGE_2, extra.quote) : null,
  };
}

export function reviewFixture() {
  const id = DOC;
  const type: ContractType_Serialize = {
    id: "nda",
    name: "Non-Disclosure Agreement",
    aliases: [],
    description: "Protects confidential information.",
    cuad_type: null,
    signals: { title_patterns: [], distinctive_terms: [], negative_cues: [] },
    sections: [
      { id: "parties", name: "Parties" },
      { id: "confidentiality", name: "Confidentiality" },
      { id: "term", name: "Term and return" },
      { id: "remedies", name: "Remedies" },
    ],
    items: [
      spec("nda.parties.identified", "parties", "Are the parties identified by their legal names?", "medium"),
      {
        ...spec("nda.confidentiality.definition", "confidentiality", "Is Confidential Information defined, including oral disclosures?", "critical"),
        benchmark: "Most NDAs cover written and oral disclosures, with oral ones confirmed in writing within 30 days.",
        preferred_position: "Cover every form of disclosure.",
        fallback_position: "Oral disclosures confirmed in writing within 30 days.",
        regulatory: [{ citation: "18 U.S.C. 1839(3)", note: "Trade secrets need reasonable measures to keep them secret." }],
        red_flags: ["The definition leaves out oral disclosures."],
      },
      spec("nda.term.duration", "term", "How long do the confidentiality obligations last?", "critical"),
      spec("nda.term.return", "term", "Must the recipient return or destroy materials?", "high"),
      spec("nda.remedies.injunctive", "remedies", "Is injunctive relief available?", "low"),
    ],
  };
  const review: DocumentReview_Serialize = {
    file: null,
    document: id,
    type: { id: "nda", name: "Non-Disclosure Agreement", confidence: 0.5, method: "keyword", reason: "title" },
    items: [
      item({
        id: "nda.parties.identified",
        section: "parties",
        question: "Are the parties identified by their legal names?",
        risk: "medium",
        confidence: 0.45,
        quote: "made between Northwind Traders and Contoso Ltd.",
        page: 1,
        verified: true,
      }),
      item({
        id: "nda.confidentiality.definition",
        section: "confidentiality",
        question: "Is Confidential Information defined, including oral disclosures?",
        risk: "critical",
        status: "partial",
        confidence: 0.92,
        quote: "means all information disclosed in writing by either party.",
        page: 1,
        verified: true,
        method: "model",
        red_flags: ["The definition leaves out oral disclosures."],
      }),
      item({
        id: "nda.term.duration",
        section: "term",
        question: "How long do the confidentiality obligations last?",
        risk: "critical",
        status: "not_evaluated",
        confidence: null,
        method: "model",
        reason: "quote_not_found",
      }),
      item({
        id: "nda.term.return",
        section: "term",
        question: "Must the recipient return or destroy materials?",
        risk: "high",
        status: "absent",
        confidence: 0.4,
      }),
      item({
        id: "nda.remedies.injunctive",
        section: "remedies",
        question: "Is injunctive relief available?",
        risk: "low",
        status: "present",
        confidence: 0.6,
        quote: "Either party may seek injunctive relief.",
        page: 2,
        verified: true,
        method: "person",
        note: "Standard wording.",
        confirmed_by: "Bob",
        confirmed_at: "2026-11-30T08:00:00Z",
      }),
    ],
    rejected: [
      { item_id: "nda.term.duration", quote: "obligations survive for five years", page: 2, reason: "quote_not_found", method: "model" },
    ],
    gate: { route: "person", reason: "red_flag", detail: "1 red flag on nda.confidentiality.definition" },
    extractions: {
      parties: [
        { value: "Northwind Traders", quote: null, confidence: 0.9 },
        { value: "Contoso Ltd.", quote: null, confidence: 0.9 },
      ],
      agreement_date: null,
      effective_date: null,
      expiration_date: null,
      renewal: null,
      governing_law: { value: "New York", quote: null, confidence: 0.8 },
      value: null,
      pricing: null,
      scope: null,
      key_terms: [],
    },
    counterparty: "Contoso Ltd.",
    vendor_match: "needs_review",
    summary: null,
    stages: [],
    mode: "recorded",
    planned_model_calls: null,
    halted_at: null,
    vendor: null,
    vendor_link: null,
    finalized_by: null,
    finalized_at: null,
  };
  const pages: PageLayout[] = [
    {
      number: 1,
      text: PAGE_1,
      source: "text",
      confidence: { kind: "none" },
      synthetic: false,
      width: 612,
      height: 792,
      renderable: true,
      runs: typewriterRuns(PAGE_1),
      page_count: 2,
    },
    {
      number: 2,
      text: PAGE_2,
      source: "text",
      confidence: { kind: "none" },
      synthetic: true,
      width: 0,
      height: 0,
      renderable: false,
      runs: [],
      page_count: 2,
    },
  ];
  const entry: QueueEntry_Serialize = {
    document: id,
    name: "mutual-nda-northwind-contoso.pdf",
    imported_at: "2026-11-30T07:00:00Z",
    reason: "red_flag",
    detail: "1 red flag on nda.confidentiality.definition",
    type_id: "nda",
    type_name: "Non-Disclosure Agreement",
    type_confidence: 0.5,
    red_flags: 1,
    critical_unsure: 1,
    not_evaluated: 1,
    min_confidence: 0.4,
  };
  return { id, type, review, pages, entry };
}

function spec(id: string, section: string, question: string, risk: "critical" | "high" | "medium" | "low") {
  return {
    id,
    type: "nda",
    section,
    question,
    risk,
    guidance: {
      present: `Present: ${question}`,
      partial: "Partial: only some of it.",
      absent: "Absent: nothing on it.",
    },
    cuad_category: null,
    benchmark: null,
    red_flags: [] as string[],
    preferred_position: null,
    fallback_position: null,
    regulatory: [] as { citation: string; note: string }[],
    signals: { present: ["x"], partial: [], absent: [] },
  };
}
