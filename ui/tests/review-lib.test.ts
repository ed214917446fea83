import { describe, expect, it } from "vitest";
import {
  charsOf,
  filterItems,
  filterQueue,
  findAll,
  gateSentence,
  groupBySection,
  NO_FILTERS,
  nextUnconfirmed,
  openCriticalItems,
  runsCovering,
  segments,
} from "../src/lib/review";
import * as reviewLib from "../src/lib/review";
import { PAGE_1, reviewFixture, spanOn, typewriterRuns } from "./review-fixture";

describe("quote ranges and find in document", () => {
  it("find matches across line breaks, and a word hyphenated over a line break whole or hyphenated", () => {
    const page = charsOf("The Supplier shall\r\nindem-\r\nnify the Customer; the non-\ncompete lasts two\n  years.");
    const text = (r: [number, number]) => page.slice(r[0], r[1]).join("");
    expect(findAll(page, "shall indemnify").map(text)).toEqual(["shall\r\nindem-\r\nnify"]);
    expect(findAll(page, "non-compete").map(text)).toEqual(["non-\ncompete"]);
    expect(findAll(page, "noncompete").map(text)).toEqual(["non-\ncompete"]);
    expect(findAll(page, "lasts two years").map(text)).toEqual(["lasts two\n  years"]);
    // A hyphen inside a line stays a hyphen.
    expect(findAll(charsOf("a well-known term"), "wellknown")).toEqual([]);
    // pdfium reports a soft hyphen at a line's end as U+0002.
    expect(findAll(charsOf("limita\u0002\r\ntion of liability"), "limitation of liability")).toHaveLength(1);
  });

  it("zoom keeps the place: the page at the top and how far into it, and the horizontal centre", () => {
    const before = [
      { page: 1, top: 12, height: 800 },
      { page: 2, top: 826, height: 800 },
    ];
    const place = reviewLib.placeOf(before, { top: 826 + 200, left: 0, width: 600, contentWidth: 600 })!;
    expect(place).toEqual({ page: 2, within: 0.25, across: 0.5 });
    const after = [
      { page: 1, top: 12, height: 1600 },
      { page: 2, top: 1626, height: 1600 },
    ];
    expect(reviewLib.scrollFor(place, after, { width: 600, contentWidth: 1200 })).toEqual({ top: 1626 + 400, left: 300 });
  });

  it("the UI has no quote search of its own: a quote's place comes from the backend with the quote", () => {
    expect("locate" in reviewLib).toBe(false);
    const item = reviewFixture().review.items.find((i) => i.id === "nda.confidentiality.definition")!;
    const chars = charsOf(PAGE_1);
    expect(chars.slice(item.quote_span!.start, item.quote_span!.end).join("")).toBe(
      "means all information disclosed in writing\nby either party.",
    );
  });

  it("the runs a range covers are the words in it", () => {
    const chars = charsOf(PAGE_1);
    const runs = typewriterRuns(PAGE_1);
    const { start, end } = spanOn(PAGE_1, "Northwind Traders");
    const covered = runsCovering(runs, start, end).map((i) => chars.slice(runs[i].start, runs[i].end).join(""));
    expect(covered).toEqual(["Northwind", "Traders"]);
  });

  it("find in document returns every occurrence, case-insensitively", () => {
    const chars = charsOf(PAGE_1);
    const hits = findAll(chars, "information");
    expect(hits.map(([s, e]) => chars.slice(s, e).join(""))).toEqual(["Information", "information"]);
    expect(findAll(chars, "")).toEqual([]);
    expect(findAll(chars, "   ")).toEqual([]);
    expect(findAll(chars, "governed by the laws of Delaware")).toEqual([]);
  });

  it("find matches across line breaks and repeated spaces, in character offsets", () => {
    const chars = charsOf(PAGE_1);
    const [[start, end]] = findAll(chars, "disclosed in  writing by\teither party");
    expect(chars.slice(start, end).join("")).toBe("disclosed in writing\nby either party");
  });

  it("find counts characters, not UTF-16 units, so offsets after an emoji or accented letters match the backend's", () => {
    const chars = charsOf("Société 🙂 Générale shall pay");
    expect(findAll(chars, "générale SHALL")).toEqual([[10, 24]]);
    expect(findAll(charsOf("aaaa"), "aa", 1)).toEqual([[0, 2]]);
    expect(findAll(charsOf("aaaa"), "aa")).toEqual([
      [0, 2],
      [2, 4],
    ]);
  });

  it("segments split the text where marks start and end, the strongest mark winning", () => {
    const chars = charsOf("abcdef");
    const segs = segments(chars, [
      { start: 1, end: 4, kind: "quote" },
      { start: 2, end: 3, kind: "current" },
    ]);
    expect(segs.map((s) => [s.text, s.mark])).toEqual([
      ["a", ""],
      ["b", "quote"],
      ["c", "current"],
      ["d", "quote"],
      ["ef", ""],
    ]);
  });
});

describe("checklist rules", () => {
  const f = reviewFixture();

  it("filters narrow together", () => {
    const ids = (filters: Partial<typeof NO_FILTERS>) => filterItems(f.review.items, { ...NO_FILTERS, ...filters }).map((i) => i.id);
    expect(ids({})).toHaveLength(5);
    expect(ids({ critical: true })).toEqual(["nda.confidentiality.definition", "nda.term.duration"]);
    expect(ids({ redFlags: true })).toEqual(["nda.confidentiality.definition"]);
    expect(ids({ notEvaluated: true })).toEqual(["nda.term.duration"]);
    expect(ids({ unconfirmed: true })).not.toContain("nda.remedies.injunctive");
    expect(ids({ critical: true, notEvaluated: true })).toEqual(["nda.term.duration"]);
  });

  it("groups items by the type's sections, in the type's order, leaving out empty sections", () => {
    const groups = groupBySection(filterItems(f.review.items, { ...NO_FILTERS, critical: true }), f.type);
    expect(groups.map((g) => [g.name, g.items.length])).toEqual([
      ["Confidentiality", 1],
      ["Term and return", 1],
    ]);
  });

  it("next unconfirmed skips confirmed items and wraps around", () => {
    const items = f.review.items;
    expect(nextUnconfirmed(items, "nda.term.return")?.id).toBe("nda.parties.identified");
    expect(nextUnconfirmed(items, null)?.id).toBe("nda.parties.identified");
  });

  it("finalize is blocked by every critical item no person confirmed", () => {
    expect(openCriticalItems(f.type, f.review.items).map((i) => i.id)).toEqual([
      "nda.confidentiality.definition",
      "nda.term.duration",
    ]);
  });
});

describe("queue", () => {
  it("says the gate's reason as a sentence, and never shows an unknown reason's raw label", () => {
    expect(gateSentence("red_flag")).toBe("A red flag was found.");
    expect(gateSentence("some_new_reason")).toBe("Routed to a person.");
    expect(reviewLib.reasonLabel("critical_low_confidence")).toBe("Critical item unsure");
    expect(reviewLib.reasonLabel("some_new_reason")).not.toContain("_");
  });

  it("says why a person is needed in plain words with the figures, and no score", () => {
    const counts = { redFlags: 2, criticalUnsure: 1, notEvaluated: 5, typeName: "Distribution Agreement" };
    expect(reviewLib.whyPerson("red_flag", counts)).toBe("2 items carry a red flag: decide whether they are acceptable.");
    expect(reviewLib.whyPerson("red_flag", { ...counts, redFlags: 1 })).toBe("1 item carries a red flag: decide whether it is acceptable.");
    expect(reviewLib.whyPerson("critical_low_confidence", counts)).toBe(
      "1 critical item needs a person: the pre-fill is unsure or found no answer.",
    );
    expect(reviewLib.whyPerson("classification_unresolved", counts)).toContain("looks like a Distribution Agreement");
    expect(reviewLib.whyPerson("too_many_not_evaluated", counts)).toContain("5 items could not be answered");
    for (const reason of ["red_flag", "critical_low_confidence", "classification_unresolved", "too_many_not_evaluated", "ocr_failed", "ocr_confidence_low", "ocr_confidence_estimated", null]) {
      const said = reviewLib.whyPerson(reason, counts);
      expect(said).not.toMatch(/%|_/);
    }
  });

  it("the why? details hold the scores and the gate's words, with item ids turned into their questions", () => {
    const f = reviewFixture();
    const details = reviewLib.whyDetails(
      "critical item nda.term.duration answered with confidence 40% (below 70%)",
      { name: "Non-Disclosure Agreement", confidence: 0.5, method: "keyword" },
      0.4,
      f.type.items,
    );
    expect(details[0]).toBe("Contract type Non-Disclosure Agreement, chosen by keywords: 50\u00a0% sure.");
    expect(details[1]).toBe("Least sure answer of the pre-fill: 40\u00a0%.");
    expect(details[2]).toBe(
      "Review gate: critical item “How long do the confidentiality obligations last” answered with confidence 40% (below 70%).",
    );
    expect(details.join(" ")).not.toContain("nda.term.duration");
  });

  it("filters by text and reason and sorts", () => {
    const a = reviewFixture().entry;
    const b = { ...a, document: "b", name: "lease.pdf", reason: "ocr_confidence_low", red_flags: 3, imported_at: "2026-11-29T07:00:00Z" };
    expect(filterQueue([a, b], { text: "", reason: "" }, "age").map((e) => e.name)).toEqual(["lease.pdf", a.name]);
    expect(filterQueue([a, b], { text: "", reason: "" }, "red_flags")[0].name).toBe("lease.pdf");
    expect(filterQueue([a, b], { text: "contoso", reason: "" }, "age").map((e) => e.name)).toEqual([a.name]);
    expect(filterQueue([a, b], { text: "", reason: "ocr_confidence_low" }, "age").map((e) => e.name)).toEqual(["lease.pdf"]);
  });
});
