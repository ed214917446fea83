import { describe, expect, it, vi } from "vitest";
import { fireEvent, render, screen, waitFor, within } from "@testing-library/svelte";
import Queue from "../src/views/Queue.svelte";
import { installBackend } from "./backend";
import { reviewFixture } from "./review-fixture";

function entries() {
  const a = reviewFixture().entry;
  const b = {
    ...a,
    document: "0193a0b4-0000-7000-8000-00000000d0c2",
    name: "scanned-lease.pdf",
    reason: "ocr_confidence_estimated",
    detail: "2 OCR pages with estimated confidence",
    type_name: null,
    type_confidence: null,
    red_flags: 0,
    critical_unsure: 3,
    imported_at: "2026-11-29T07:00:00Z",
  };
  return [a, b];
}

describe("Review queue", () => {
  it("says why each document needs a person in plain words, with one confidence, and the scores behind why?", async () => {
    installBackend({ queue: entries(), types: { nda: reviewFixture().type } });
    render(Queue);
    const rows = await screen.findAllByTestId("queue-row");
    // Oldest first by default.
    expect(rows[0].textContent).toContain("scanned-lease.pdf");
    expect(rows[0].textContent).toContain("Pages were read by OCR and how well cannot be measured");
    expect(rows[0].textContent).toContain("Unclassified");
    expect(rows[1].textContent).toContain("1 item carries a red flag: decide whether it is acceptable.");
    expect(rows[1].textContent).toContain("Non-Disclosure Agreement");
    // One confidence per row (the least sure answer); the classifier's score is not in the row.
    const cells = Array.from(rows[1].querySelectorAll("td")).map((td) => td.textContent!.trim());
    expect(cells.filter((c) => c.includes("%"))).toEqual(["40\u00a0%"]);
    expect(rows[1].textContent).not.toContain("nda.confidentiality.definition");
    expect(screen.queryAllByTestId("queue-why-details")).toHaveLength(0);
    // why? shows the classifier's score and the gate's check, the item named by its question.
    await fireEvent.click(within(rows[1]).getByTestId("queue-why-toggle"));
    const details = await within(rows[1]).findByTestId("queue-why-details");
    await waitFor(() => expect(details.textContent).toContain("“Is Confidential Information defined, including oral disclosures”"));
    expect(details.textContent).toContain("chosen by keywords: 50\u00a0% sure");
    expect(details.textContent).not.toContain("nda.confidentiality.definition");
    // The reason filter speaks words, not enum names.
    const options = Array.from(screen.getByTestId("queue-reason").querySelectorAll("option")).map((o) => o.textContent);
    expect(options).toEqual(["any", "OCR not measured", "Red flag"]);
  });

  it("arrow keys move the selection and Enter opens the selected document", async () => {
    installBackend({ queue: entries() });
    const onopen = vi.fn();
    render(Queue, { onopen });
    const rows = await screen.findAllByTestId("queue-row");
    expect(rows[0].getAttribute("aria-selected")).toBe("true");
    await fireEvent.keyDown(window, { key: "ArrowDown" });
    await waitFor(() => expect(screen.getAllByTestId("queue-row")[1].getAttribute("aria-selected")).toBe("true"));
    await fireEvent.keyDown(window, { key: "Enter" });
    expect(onopen).toHaveBeenCalledWith(reviewFixture().id, "mutual-nda-northwind-contoso.pdf");
  });

  it("filters by text and sorts by red flags", async () => {
    installBackend({ queue: entries() });
    render(Queue);
    await screen.findAllByTestId("queue-row");
    await fireEvent.input(screen.getByTestId("queue-filter"), { target: { value: "lease" } });
    await waitFor(() => expect(screen.getAllByTestId("queue-row")).toHaveLength(1));
    await fireEvent.input(screen.getByTestId("queue-filter"), { target: { value: "" } });
    await fireEvent.change(screen.getByTestId("queue-sort"), { target: { value: "red_flags" } });
    await waitFor(() => expect(screen.getAllByTestId("queue-row")[0].textContent).toContain("mutual-nda"));
  });

  it("says so when nothing waits for a person", async () => {
    installBackend();
    render(Queue);
    expect((await screen.findByTestId("queue-empty")).textContent).toContain("Nothing waits for a person");
  });
});
