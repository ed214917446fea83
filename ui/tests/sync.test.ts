import { describe, expect, it } from "vitest";
import { fireEvent, render, screen, waitFor } from "@testing-library/svelte";
import App from "../src/App.svelte";
import Settings from "../src/views/Settings.svelte";
import { callsOf, installBackend, syncedStatus } from "./backend";
import type { SyncStatusView, SyncStatusView_Serialize } from "../src/lib/bindings";

describe("Sync in the status line", () => {
  it("says local only when this computer does not sync, and offers no retry", async () => {
    installBackend();
    render(App);
    await waitFor(() => expect(screen.getByTestId("status-sync").textContent).toBe("Sync: local only"));
    expect(screen.queryByTestId("sync-retry")).toBeNull();
  });

  it("says synced, with where and when in its tooltip", async () => {
    installBackend({ sync: syncedStatus() });
    render(App);
    const line = await screen.findByTestId("status-sync");
    await waitFor(() => expect(line.textContent).toBe("Sync: synced"));
    expect(line.getAttribute("title")).toContain("Alpha LLP on https://sync.example.com");
    expect(line.getAttribute("title")).toContain("0 pending upload(s)");
  });

  it("counts pending uploads and files to fetch", async () => {
    installBackend({ sync: syncedStatus({ phase: "pending", pending_uploads: 3, files_waiting: 1 }) });
    render(App);
    await waitFor(() =>
      expect(screen.getByTestId("status-sync").textContent).toBe("Sync: 3 pending uploads, 1 file to fetch"),
    );
  });

  it("shows the error while stuck, and Retry asks to sync now", async () => {
    const stuck: SyncStatusView_Serialize = syncedStatus({
      phase: "waiting_to_retry",
      pending_uploads: 2,
      last_error: {
        code: "sync_unavailable",
        message: "the sync service cannot be reached (connection refused or lost); work goes on locally and sync retries by itself",
      },
      next_retry_at: "2026-11-30T10:05:00Z",
    });
    const backend = installBackend({ sync: stuck });
    render(App);
    await waitFor(() => expect(screen.getByTestId("status-sync").textContent).toBe("Sync: waiting to retry"));
    expect(screen.getByTestId("status-sync-error").textContent).toContain("cannot be reached");
    backend.sync = syncedStatus();
    await fireEvent.click(screen.getByTestId("sync-retry"));
    expect(callsOf(backend, "sync_retry")).toHaveLength(1);
    await waitFor(() => expect(screen.getByTestId("status-sync").textContent).toBe("Sync: synced"));
    expect(screen.queryByTestId("status-sync-error")).toBeNull();
    expect(screen.queryByTestId("sync-retry")).toBeNull();
  });
});

describe("Sync in Settings", () => {
  function fill(values: Record<string, string>) {
    return Promise.all(
      Object.entries(values).map(([k, v]) => fireEvent.input(screen.getByTestId(`sync-${k}`), { target: { value: v } })),
    );
  }

  it("refuses to sign in with a field missing, without calling the service", async () => {
    const backend = installBackend();
    render(Settings, { session: null });
    await fill({ server: "https://sync.example.com", org: "alpha", email: "ann@alpha.example" });
    await fireEvent.submit(screen.getByTestId("sync-form"));
    expect((await screen.findByTestId("sync-error")).textContent).toContain("the password");
    expect(callsOf(backend, "sync_sign_in")).toHaveLength(0);
  });

  it("a refused sign-in says what to check and keeps what was typed", async () => {
    installBackend();
    render(Settings, { session: null });
    await fill({ server: "https://sync.example.com", org: "alpha", email: "ann@alpha.example", password: "wrong" });
    await fireEvent.submit(screen.getByTestId("sync-form"));
    expect((await screen.findByTestId("sync-error")).textContent).toContain("check the organization, the email and the password");
    expect((screen.getByTestId("sync-org") as HTMLInputElement).value).toBe("alpha");
    expect((screen.getByTestId("sync-email") as HTMLInputElement).value).toBe("ann@alpha.example");
  });

  it("signs in with what was typed, then shows the signed-in state and signs out", async () => {
    const backend = installBackend();
    let status: SyncStatusView | null = null;
    let sessionChanged = 0;
    const view = render(Settings, {
      session: null,
      onsync: (s: SyncStatusView) => (status = s),
      onsession: () => (sessionChanged += 1),
    });
    await fill({ server: " https://sync.example.com ", org: "alpha", email: "ann@alpha.example", password: "right-password" });
    await fireEvent.click(screen.getByTestId("sync-sign-in"));
    await waitFor(() => expect(callsOf(backend, "sync_sign_in")).toHaveLength(1));
    expect(callsOf(backend, "sync_sign_in")[0].args).toEqual({
      input: { server: "https://sync.example.com", org: "alpha", email: "ann@alpha.example", password: "right-password" },
    });
    await waitFor(() => expect(status?.phase).toBe("not_synced_yet"));
    expect(sessionChanged).toBe(1);

    // The app passes the new status back in: Settings shows who is signed in where.
    await view.rerender({ session: null, sync: status });
    expect((await screen.findByTestId("sync-state")).textContent).toContain("not synced yet");
    expect(screen.getByText("Alpha LLP (alpha)")).toBeTruthy();
    expect(screen.queryByTestId("sync-form")).toBeNull();
    await fireEvent.click(screen.getByTestId("sync-sign-out"));
    await waitFor(() => expect(status?.phase).toBe("not_signed_in"));
    expect(callsOf(backend, "sync_sign_out")).toHaveLength(1);
  });

  it("lists the changes the service refused, with its reason", async () => {
    installBackend();
    const refused = syncedStatus({
      refused_total: 1,
      refused_changes: [
        {
          what: "the review thresholds",
          reason: "your role (reviewer) cannot change the review thresholds; ask an owner or admin of the organization",
          refused_at: "2026-11-30T10:00:00Z",
        },
      ],
    });
    render(Settings, { session: null, sync: refused });
    const list = await screen.findByTestId("sync-refused");
    expect(list.textContent).toContain("Not accepted by the sync service (1)");
    expect(list.textContent).toContain("the review thresholds");
    expect(list.textContent).toContain("ask an owner or admin");
  });
});
