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
  it("says the gate's reason as a sentence, and an unknown reason in words", () => {
    expect(gateSentence("red_flag")).toBe("A red flag was found.");
    expect(gateSentence("some_new_reason")).toContain("some new reason");
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
