import { beforeEach, describe, expect, it } from "vitest";
import { fireEvent, render, screen, waitFor } from "@testing-library/svelte";
import App from "../src/App.svelte";
import { ApprovalNotifier, resetNotificationPermission } from "../src/lib/notify";
import { approval, callsOf, installWorkflowBackend } from "./workflowBackend";

const NOW = () => new Date("2026-11-30T12:00:00Z");
const SECOND = "0193a0b4-0000-7000-8000-00000000b002";

function notices(backend: ReturnType<typeof installWorkflowBackend>) {
  return callsOf(backend, "plugin:notification|notify").map((c) => (c.args as { options: { title: string; body: string } }).options);
}

beforeEach(() => {
  localStorage.clear();
  resetNotificationPermission();
});

describe("native notification for a new approval", () => {
  it("is requested once per new pending approval, however often the inbox is seen, and not again after a restart", async () => {
    const backend = installWorkflowBackend();
    const notifier = new ApprovalNotifier(undefined, undefined, NOW);
    expect(await notifier.notice([approval()])).toBe(1);
    expect(await notifier.notice([approval()])).toBe(0);
    expect(notices(backend)).toEqual([{ title: "Approval needed", body: "Choose the vendor for this purchase (due in 3 days)" }]);

    // A second approval arrives beside the first: only it is announced.
    const second = approval({ id: SECOND, title: "Approve the onboarding of Initech", due_at: null });
    expect(await notifier.notice([approval(), second])).toBe(1);
    expect(notices(backend).map((n) => n.body)).toEqual([
      "Choose the vendor for this purchase (due in 3 days)",
      "Approve the onboarding of Initech (no due date)",
    ]);

    // The app starts again: what was announced is remembered.
    const afterRestart = new ApprovalNotifier(undefined, undefined, NOW);
    expect(await afterRestart.notice([approval(), second])).toBe(0);
    expect(notices(backend)).toHaveLength(2);
    // Decided or cancelled approvals are never announced.
    expect(await afterRestart.notice([approval({ id: "0193a0b4-0000-7000-8000-00000000b003", status: "approved" })])).toBe(0);
    expect(notices(backend)).toHaveLength(2);
  });

  it("fails quietly on a desktop without a notification daemon, and does not retry at every look", async () => {
    const backend = installWorkflowBackend({ notifyFails: true });
    const notifier = new ApprovalNotifier(undefined, undefined, NOW);
    await expect(notifier.notice([approval()])).resolves.toBe(1);
    await expect(notifier.notice([approval()])).resolves.toBe(0);
    expect(callsOf(backend, "plugin:notification|notify")).toHaveLength(1);
  });

  it("is not sent when the desktop refuses the app's notifications", async () => {
    const backend = installWorkflowBackend({ notificationsDenied: true });
    const notifier = new ApprovalNotifier(undefined, undefined, NOW);
    expect(await notifier.notice([approval()])).toBe(1);
    expect(callsOf(backend, "plugin:notification|is_permission_granted")).toHaveLength(1);
    expect(callsOf(backend, "plugin:notification|notify")).toHaveLength(0);
  });

  it("many new approvals at once make one summary instead of a burst", async () => {
    const backend = installWorkflowBackend();
    const many = [1, 2, 3, 4, 5].map((i) => approval({ id: `0193a0b4-0000-7000-8000-00000000c00${i}`, title: `Step ${i}` }));
    expect(await new ApprovalNotifier(undefined, undefined, NOW).notice(many)).toBe(5);
    expect(notices(backend)).toEqual([{ title: "5 new approvals need a decision", body: "Step 1; Step 2; Step 3; …" }]);
  });

  it("the app announces a new approval wherever the user is, and opening the inbox does not announce it again", async () => {
    const backend = installWorkflowBackend();
    render(App);
    await waitFor(() => expect(notices(backend)).toHaveLength(1));
    expect(notices(backend)[0].body).toContain("Choose the vendor for this purchase");

    // A second approval is in the inbox when the user opens it: that one, and only that one, is announced.
    backend.inbox = [approval(), approval({ id: SECOND, title: "Approve the onboarding of Initech" })];
    await fireEvent.keyDown(window, { key: "4", altKey: true });
    await screen.findAllByTestId("approval-row");
    await waitFor(() => expect(notices(backend)).toHaveLength(2));
    expect(notices(backend)[1].body).toContain("Approve the onboarding of Initech");
    await fireEvent.click(screen.getByTestId("refresh-inbox"));
    await waitFor(() => expect(callsOf(backend, "approvals_inbox").length).toBeGreaterThanOrEqual(3));
    expect(notices(backend)).toHaveLength(2);
  });
});

describe("native notification for an escalation", () => {
  it("announces the urgent notification an escalation wrote once, marked urgent, beside the approval's own", async () => {
    const backend = installWorkflowBackend();
    const notifier = new ApprovalNotifier(undefined, undefined, NOW);
    expect(await notifier.notice([approval()])).toBe(1);
    const escalated = approval({ escalated: true, urgent_notice: "Choose the vendor has waited 48 hours for a decision" });
    expect(await notifier.notice([escalated])).toBe(1);
    expect(await notifier.notice([escalated])).toBe(0);
    expect(await new ApprovalNotifier(undefined, undefined, NOW).notice([escalated])).toBe(0);
    const shown = callsOf(backend, "plugin:notification|notify").map((c) => (c.args as { options: unknown }).options);
    expect(shown).toEqual([
      { title: "Approval needed", body: "Choose the vendor for this purchase (due in 3 days)" },
      {
        title: "Urgent: Choose the vendor for this purchase",
        body: "Choose the vendor has waited 48 hours for a decision",
        extra: { urgent: true },
      },
    ]);
  });
});
