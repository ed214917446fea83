import { describe, expect, it, vi } from "vitest";
import { fireEvent, render, screen } from "@testing-library/svelte";
import CitationPane from "../src/views/review/CitationPane.svelte";
import { reviewFixture } from "./review-fixture";

function setup(itemId: string, extra: Record<string, unknown> = {}) {
  const f = reviewFixture();
  const item = f.review.items.find((i) => i.id === itemId)!;
  const spec = f.type.items.find((i) => i.id === itemId)!;
  const onjump = vi.fn();
  const oncorrect = vi.fn(async () => null);
  render(CitationPane, { item, spec, rejected: f.review.rejected, onjump, oncorrect, ...extra });
  return { onjump, oncorrect, item };
}

describe("Citation pane", () => {
  it("shows the verified quote with its page; clicking it jumps there", async () => {
    const { onjump } = setup("nda.confidentiality.definition");
    const quote = screen.getByTestId("citation-quote");
    expect(quote.textContent).toContain("means all information disclosed in writing by either party.");
    expect(quote.textContent).toContain("page 1");
    await fireEvent.click(quote);
    expect(onjump).toHaveBeenCalledWith(1, "means all information disclosed in writing by either party.");
  });

  it("shows guidance, benchmark, preferred and fallback positions, regulatory references and red flags", () => {
    setup("nda.confidentiality.definition");
    const pane = screen.getByTestId("citation").textContent!;
    expect(screen.getByTestId("citation-guidance").textContent).toContain("Partial: only some of it.");
    expect(pane).toContain("Most NDAs cover written and oral disclosures");
    expect(pane).toContain("Cover every form of disclosure.");
    expect(pane).toContain("Oral disclosures confirmed in writing within 30 days.");
    expect(pane).toContain("18 U.S.C. 1839(3)");
    expect(pane).toContain("The definition leaves out oral disclosures.");
  });

  it("says who or what produced the answer", () => {
    setup("nda.confidentiality.definition");
    expect(screen.getByTestId("citation-by").textContent).toContain("Pre-filled by the model");
  });

  it("a person's confirmation names them and shows the note", () => {
    setup("nda.remedies.injunctive");
    expect(screen.getByTestId("citation-by").textContent).toContain("Confirmed by Bob");
    expect(screen.getByTestId("citation").textContent).toContain("Standard wording.");
  });

  it("an item without a verified quote says so and lists its rejected extraction first", () => {
    setup("nda.term.duration");
    expect(screen.queryByTestId("citation-quote")).toBeNull();
    expect(screen.getByTestId("citation").textContent).toContain("No verified quote");
    const rejected = screen.getByTestId("rejected");
    expect(rejected.textContent).toContain("Rejected extractions (1)");
    expect(rejected.textContent).toContain("obligations survive for five years");
    expect(rejected.textContent).toContain("This item");
    expect(rejected.textContent).toContain("claimed page 2");
  });

  it("the correction form sends the selected text and its page, and keeps the note when the backend refuses", async () => {
    const f = reviewFixture();
    const item = f.review.items.find((i) => i.id === "nda.term.duration")!;
    const oncorrect = vi.fn(async () => "the selected text was not found on page 2; select the supporting words on the page itself");
    render(CitationPane, {
      item,
      spec: null,
      selection: { page: 2, text: "The obligations survive for three years." },
      oncorrect,
    });
    await fireEvent.click(screen.getByTestId("correct"));
    const status = screen.getByTestId("correct-status") as HTMLSelectElement;
    await fireEvent.keyDown(status, { key: "1" });
    await fireEvent.input(screen.getByTestId("correct-note"), { target: { value: "Three years from disclosure." } });
    expect(screen.getByTestId("selection-text").textContent).toBe("The obligations survive for three years.");
    await fireEvent.click(screen.getByTestId("correct-save"));
    expect(oncorrect).toHaveBeenCalledWith({
      item_id: "nda.term.duration",
      confirm: false,
      status: "present",
      quote: { text: "The obligations survive for three years.", page: 2 },
      note: "Three years from disclosure.",
      acknowledge_warnings: false,
    });
    expect((await screen.findByTestId("correct-error")).textContent).toContain("not found on page 2");
    expect((screen.getByTestId("correct-note") as HTMLTextAreaElement).value).toBe("Three years from disclosure.");
  });
});
