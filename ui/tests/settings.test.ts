import { describe, expect, it } from "vitest";
import { fireEvent, render, screen, waitFor } from "@testing-library/svelte";
import Settings from "../src/views/Settings.svelte";
import { callsOf, installBackend } from "./backend";

describe("Settings: review gate and own names", () => {
  it("shows the thresholds and saves a changed one", async () => {
    const backend = installBackend();
    render(Settings, { session: null });
    const field = (await screen.findByTestId("threshold-critical_min_confidence")) as HTMLInputElement;
    await waitFor(() => expect(field.value).toBe("0.7"));
    await fireEvent.input(field, { target: { value: "0.85" } });
    await fireEvent.change(field);
    await waitFor(() => expect(callsOf(backend, "set_review_threshold")).toHaveLength(1));
    expect(callsOf(backend, "set_review_threshold")[0].args).toEqual({ name: "critical_min_confidence", value: 0.85 });
    expect(backend.thresholds.critical_min_confidence).toBe(0.85);
  });

  it("refuses a value outside 0..1 beside the field and keeps what was typed", async () => {
    const backend = installBackend();
    render(Settings, { session: null });
    const field = (await screen.findByTestId("threshold-ocr_min_confidence")) as HTMLInputElement;
    await waitFor(() => expect(field.value).toBe("0.8"));
    await fireEvent.input(field, { target: { value: "85" } });
    await fireEvent.change(field);
    expect((await screen.findByRole("alert")).textContent).toContain("from 0 to 1");
    expect(field.value).toBe("85");
    expect(callsOf(backend, "set_review_threshold")).toHaveLength(0);
  });

  it("saves the organization's own names, one per line", async () => {
    const backend = installBackend({ ownNames: ["Northwind Traders, Inc."] });
    render(Settings, { session: null });
    const names = (await screen.findByTestId("own-names")) as HTMLTextAreaElement;
    await waitFor(() => expect(names.value).toBe("Northwind Traders, Inc."));
    await fireEvent.input(names, { target: { value: "Northwind Traders, Inc.\nNorthwind\n" } });
    await fireEvent.click(screen.getByTestId("own-names-save"));
    await waitFor(() => expect(backend.ownNames).toEqual(["Northwind Traders, Inc.", "Northwind"]));
    expect(await screen.findByText("Saved 2 names.")).toBeTruthy();
  });

  it("stores a Voyage key, says what search uses now, clears the field, and removes it", async () => {
    const backend = installBackend();
    render(Settings, { session: null });
    const section = await screen.findByTestId("voyage-settings");
    await waitFor(() => expect(screen.getByTestId("voyage-status").textContent).toContain("model on this computer"));
    const remove = Array.from(section.querySelectorAll("button")).find((b) => b.textContent === "Remove key")!;
    expect(remove.disabled).toBe(true);
    const field = screen.getByTestId("voyage-key") as HTMLInputElement;
    await fireEvent.input(field, { target: { value: "pa-test-voyage-key" } });
    await fireEvent.submit(field.form!);
    await waitFor(() => expect(screen.getByTestId("voyage-status").textContent).toContain("Voyage (voyage-law-2)"));
    expect(field.value).toBe("");
    expect(callsOf(backend, "set_voyage_key")[0].args).toEqual({ key: "pa-test-voyage-key" });
    await waitFor(() => expect(remove.disabled).toBe(false));
    await fireEvent.click(remove);
    await waitFor(() => expect(screen.getByTestId("voyage-status").textContent).toContain("model on this computer"));
    expect(callsOf(backend, "clear_voyage_key")).toHaveLength(1);
  });
});
