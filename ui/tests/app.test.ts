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
    expect(labels).toEqual(["queue", "documents", "contracts", "approvals", "prep", "assistant", "settings", "runs", "vendors", "tenders"]);
  });

  it("a crash report from an earlier run is said where the person looks, with where it is, and Dismiss puts it aside", async () => {
    const backend = installBackend();
    backend.crashReports = [
      { path: "/tmp/pactwise-data/crash-reports/crash-20261203T100000.000Z-42.txt", at: "2026-12-03T10:00:00Z", summary: "bad [text withheld] value" },
    ];
    render(App);
    const alert = await screen.findByTestId("crash-reports");
    expect(alert.getAttribute("role")).toBe("alert");
    expect(alert.textContent).toContain("/tmp/pactwise-data/crash-reports/crash-20261203T100000.000Z-42.txt");
    expect(alert.textContent).toContain("no document text and no secrets");
    expect(alert.textContent).not.toContain("withheld"); // the summary is the report's, not the window's
    await fireEvent.click(screen.getByRole("button", { name: "Dismiss" }));
    await waitFor(() => expect(screen.queryByTestId("crash-reports")).toBeNull());
    expect(backend.calls.some((c) => c.cmd === "dismiss_crash_reports")).toBe(true);
  });

  it("Alt+number switches areas", async () => {
    installBackend();
    render(App);
    await fireEvent.keyDown(window, { key: "7", altKey: true });
    expect(await screen.findByText("/tmp/pactwise-data")).toBeTruthy();
    await fireEvent.keyDown(window, { key: "3", altKey: true });
    expect((await screen.findByTestId("contracts-empty")).textContent).toContain("No finalized contracts yet");
    await fireEvent.keyDown(window, { key: "5", altKey: true });
    expect((await screen.findByTestId("prep-empty")).textContent).toContain("No packages yet");
    await fireEvent.keyDown(window, { key: "0", altKey: true });
    expect((await screen.findByTestId("tenders-empty")).textContent).toContain("No tenders yet");
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

  it("the status line says where model requests go when the endpoint is not the default", async () => {
    const backend = installBackend();
    backend.modelEndpoint = "http://127.0.0.1:5601";
    render(App);
    const note = await screen.findByTestId("status-model-endpoint");
    expect(note.textContent).toContain("http://127.0.0.1:5601");
    expect(note.textContent).toContain("not the default API");
  });

  it("the status line says nothing about the endpoint when it is the default", async () => {
    installBackend();
    render(App);
    await waitFor(() => expect(screen.getByTestId("status-model").textContent).toContain("offline (no API key)"));
    expect(screen.queryByTestId("status-model-endpoint")).toBeNull();
  });

  it("a reviewer is told in Settings that only an owner or an admin can change the API key, and what was typed stays", async () => {
    const backend = installBackend();
    backend.role = "reviewer";
    render(App);
    await fireEvent.keyDown(window, { key: "7", altKey: true });
    expect((await screen.findByTestId("key-role-hint")).textContent).toContain("Only an owner or an admin");
    const field = (await screen.findByTestId("api-key")) as HTMLInputElement;
    await fireEvent.input(field, { target: { value: "sk-ant-secret" } });
    await fireEvent.submit(field.form!);
    const alert = await screen.findByRole("alert");
    expect(alert.textContent).toContain("Only an owner or an admin of this organization can change the API key");
    expect(field.value).toBe("sk-ant-secret");
    expect(backend.model ?? "no_api_key").toBe("no_api_key");
  });

  it("? opens the shortcut list and Escape closes it", async () => {
    installBackend();
    render(App);
    await fireEvent.keyDown(window, { key: "?" });
    const dialog = await screen.findByRole("dialog", { name: "Keyboard shortcuts" });
    expect(dialog.textContent).toContain("Alt+1 … Alt+9");
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
