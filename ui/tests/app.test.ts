import { describe, expect, it } from "vitest";
import { fireEvent, render, screen, waitFor } from "@testing-library/svelte";
import App from "../src/App.svelte";
import { installBackend } from "./backend";

describe("App frame", () => {
  it("shows the session in the status line and every area in the rail", async () => {
    installBackend();
    render(App);
    await waitFor(() => expect(screen.getByTestId("status-session").textContent).toContain("Acme Legal · Ann (owner)"));
    const labels = screen.getAllByRole("button").map((b) => b.getAttribute("data-area")).filter(Boolean);
    expect(labels).toEqual(["queue", "documents", "contracts", "approvals", "prep", "assistant", "settings"]);
  });

  it("Alt+number switches areas and areas not built yet say so", async () => {
    installBackend();
    render(App);
    await fireEvent.keyDown(window, { key: "7", altKey: true });
    expect(await screen.findByText("/tmp/pactwise-data")).toBeTruthy();
    await fireEvent.keyDown(window, { key: "3", altKey: true });
    expect((await screen.findByTestId("upcoming")).textContent).toContain("Not built yet");
    await fireEvent.keyDown(window, { key: "5", altKey: true });
    expect((await screen.findByTestId("prep-empty")).textContent).toContain("No packages yet");
    await fireEvent.keyDown(window, { key: "1", altKey: true });
    expect((await screen.findByTestId("queue-empty")).textContent).toContain("Nothing waits for a person");
  });

  it("the status line says the model is offline without a key, and saving a key in Settings makes it online", async () => {
    const backend = installBackend();
    render(App);
    await waitFor(() => expect(screen.getByTestId("status-model").textContent).toContain("offline (no API key)"));
    await fireEvent.keyDown(window, { key: "7", altKey: true });
    const field = (await screen.findByTestId("api-key")) as HTMLInputElement;
    await fireEvent.input(field, { target: { value: "sk-ant-secret" } });
    await fireEvent.submit(field.form!);
    await waitFor(() => expect(screen.getByTestId("status-model").textContent).toContain("online"));
    expect(field.value).toBe("");
    expect(backend.calls.find((c) => c.cmd === "set_api_key")?.args).toEqual({ key: "sk-ant-secret" });
  });

  it("? opens the shortcut list and Escape closes it", async () => {
    installBackend();
    render(App);
    await fireEvent.keyDown(window, { key: "?" });
    const dialog = await screen.findByRole("dialog", { name: "Keyboard shortcuts" });
    expect(dialog.textContent).toContain("Alt+1 … Alt+7");
    await fireEvent.keyDown(dialog, { key: "Escape" });
    await waitFor(() => expect(screen.queryByRole("dialog")).toBeNull());
  });
});

describe("Review queue to review", () => {
  it("Enter on the queue opens the review in place; Escape goes back to the queue", async () => {
    const { installReviewBackend } = await import("./backend");
    installReviewBackend();
    render(App);
    await fireEvent.keyDown(window, { key: "1", altKey: true });
    await screen.findAllByTestId("queue-row");
    await fireEvent.keyDown(window, { key: "Enter" });
    expect(await screen.findByTestId("review")).toBeTruthy();
    await screen.findAllByTestId("checklist-item");
    await fireEvent.keyDown(window, { key: "Escape" });
    expect(await screen.findByTestId("queue-table")).toBeTruthy();
  });

  it("the shortcut list names the review keys", async () => {
    installBackend();
    render(App);
    await fireEvent.keyDown(window, { key: "?" });
    const dialog = await screen.findByRole("dialog", { name: "Keyboard shortcuts" });
    for (const text of ["Next unconfirmed item", "Confirm the selected item", "Jump to the item's quote", "Find in the document"]) {
      expect(dialog.textContent).toContain(text);
    }
  });
});
