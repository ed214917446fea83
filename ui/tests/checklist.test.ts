import { describe, expect, it, vi } from "vitest";
import { fireEvent, render, screen, waitFor } from "@testing-library/svelte";
import ChecklistPane from "../src/views/review/ChecklistPane.svelte";
import { NO_FILTERS } from "../src/lib/review";
import { reviewFixture } from "./review-fixture";

function setup(selectedId: string | null = null) {
  const f = reviewFixture();
  const onselect = vi.fn();
  render(ChecklistPane, { items: f.review.items, type: f.type, filters: { ...NO_FILTERS }, selectedId, onselect });
  return { f, onselect };
}

const shown = () => screen.queryAllByTestId("checklist-item").map((e) => e.getAttribute("data-item-id"));

describe("Checklist pane", () => {
  it("groups items by section and marks status, confidence, risk, red flags and confirmation in words", () => {
    setup();
    const headings = Array.from(document.querySelectorAll("h3.section")).map((h) => h.textContent?.replace(/\s+/g, " ").trim());
    expect(headings).toEqual(["Parties (1)", "Confidentiality (1)", "Term and return (2)", "Remedies (1)"]);
    const definition = document.querySelector('[data-item-id="nda.confidentiality.definition"]')!;
    expect(definition.textContent).toContain("Partial");
    expect(definition.textContent).toContain("92\u00a0%");
    expect(definition.textContent).toContain("Critical");
    expect(definition.textContent).toContain("Red flag");
    const duration = document.querySelector('[data-item-id="nda.term.duration"]')!;
    expect(duration.textContent).toContain("Not evaluated");
    expect(duration.textContent).toContain("—");
    expect(document.querySelector('[data-item-id="nda.remedies.injunctive"]')!.textContent).toContain("Confirmed");
  });

  it("each filter narrows the list and they combine", async () => {
    setup();
    expect(shown()).toHaveLength(5);
    await fireEvent.click(screen.getByTestId("filter-critical"));
    await waitFor(() => expect(shown()).toEqual(["nda.confidentiality.definition", "nda.term.duration"]));
    await fireEvent.click(screen.getByTestId("filter-notEvaluated"));
    await waitFor(() => expect(shown()).toEqual(["nda.term.duration"]));
    await fireEvent.click(screen.getByTestId("filter-critical"));
    await fireEvent.click(screen.getByTestId("filter-notEvaluated"));
    await fireEvent.click(screen.getByTestId("filter-redFlags"));
    await waitFor(() => expect(shown()).toEqual(["nda.confidentiality.definition"]));
    await fireEvent.click(screen.getByTestId("filter-redFlags"));
    await fireEvent.click(screen.getByTestId("filter-unconfirmed"));
    await waitFor(() => expect(shown()).not.toContain("nda.remedies.injunctive"));
    expect(shown()).toHaveLength(4);
    expect(screen.getByTestId("checklist-counts").textContent).toContain("4 of 5 items shown");
  });

  it("says so when no item matches, and clicking an item selects it", async () => {
    const { onselect } = setup("nda.term.return");
    expect(document.querySelector('[data-item-id="nda.term.return"]')!.getAttribute("aria-selected")).toBe("true");
    await fireEvent.click(document.querySelector('[data-item-id="nda.parties.identified"]')!);
    expect(onselect).toHaveBeenCalledWith("nda.parties.identified");
    await fireEvent.click(screen.getByTestId("filter-redFlags"));
    await fireEvent.click(screen.getByTestId("filter-notEvaluated"));
    expect(await screen.findByText("No item matches these filters.")).toBeTruthy();
  });
});
