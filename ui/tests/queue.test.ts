import { describe, expect, it, vi } from "vitest";
import { fireEvent, render, screen, waitFor } from "@testing-library/svelte";
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
  it("lists each document with the gate's reason as a sentence plus its detail, type, counts and confidence", async () => {
    installBackend({ queue: entries() });
    render(Queue);
    const rows = await screen.findAllByTestId("queue-row");
    // Oldest first by default.
    expect(rows[0].textContent).toContain("scanned-lease.pdf");
    expect(rows[0].textContent).toContain("OCR confidence could only be estimated");
    expect(rows[0].textContent).toContain("2 OCR pages with estimated confidence");
    expect(rows[0].textContent).toContain("Unclassified");
    expect(rows[1].textContent).toContain("A red flag was found.");
    expect(rows[1].textContent).toContain("Non-Disclosure Agreement");
    expect(rows[1].textContent).toContain("40\u00a0%");
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
