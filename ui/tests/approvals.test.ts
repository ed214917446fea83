import { describe, expect, it } from "vitest";
import { fireEvent, render, screen, waitFor } from "@testing-library/svelte";
import Approvals from "../src/views/Approvals.svelte";
import { approval, callsOf, installWorkflowBackend } from "./workflowBackend";
import { dueLabel } from "../src/lib/workflow";

const NOW = () => new Date("2026-11-30T12:00:00Z");

describe("Approvals inbox", () => {
  it("lists pending approvals with the due date and escalation state", async () => {
    installWorkflowBackend({
      inbox: [approval(), approval({ id: "0193a0b4-0000-7000-8000-00000000b002", title: "Late one", due_at: "2026-11-29T12:00:00Z", escalated: true })],
    });
    render(Approvals, { now: NOW });
    const rows = await screen.findAllByTestId("approval-row");
    expect(rows).toHaveLength(2);
    expect(rows[0].textContent).toContain("due in 3 days");
    expect(rows[1].textContent).toContain("overdue by 24 hours");
    expect(rows[1].textContent).toContain("escalated");
    expect(rows[0].textContent).not.toContain("escalated");
  });

  it("j/k move, Enter opens the run's context and the evidence as it was when the step paused", async () => {
    const backend = installWorkflowBackend({
      inbox: [approval(), approval({ id: "0193a0b4-0000-7000-8000-00000000b002", title: "Second" })],
    });
    render(Approvals, { now: NOW });
    await screen.findAllByTestId("approval-row");
    await fireEvent.keyDown(window, { key: "j" });
    expect(screen.getAllByTestId("approval-row")[1].getAttribute("aria-selected")).toBe("true");
    await fireEvent.keyDown(window, { key: "k" });
    await fireEvent.keyDown(window, { key: "ArrowDown" });
    await fireEvent.keyDown(window, { key: "Enter" });
    const detail = await screen.findByTestId("approval-detail");
    expect(detail.textContent).toContain("Second");
    // What the approver reads: the step in words, since when and for whom, the shortlist as a table.
    await waitFor(() =>
      expect(screen.getByTestId("approval-waiting").textContent).toContain(
        "Choose the vendor · Procurement · waiting since",
      ),
    );
    expect(screen.getByTestId("approval-waiting").textContent).toContain("for a decision by Ana Ruiz or Ann");
    const evidence = screen.getByTestId("evidence").textContent ?? "";
    expect(evidence).toContain("REQ-7 standing desks");
    expect(screen.getByTestId("shortlist").querySelectorAll("tbody tr")).toHaveLength(2);
    expect(evidence).not.toContain("{");
    expect(detail.textContent).not.toContain("choose_vendor");
    await waitFor(() => expect(screen.getByTestId("timeline").textContent).toContain("Choose the vendor: waiting for a decision by Ana Ruiz"));
    expect(screen.getByTestId("timeline").textContent).not.toContain("approval_opened");
    expect(callsOf(backend, "run_story")[0].args).toEqual({ id: approval().run });
    expect(callsOf(backend, "approval_reading")[0].args).toEqual({ id: "0193a0b4-0000-7000-8000-00000000b002" });
  });

  it("'a' without a reason is refused where the user is looking; a backend error keeps what was typed", async () => {
    const backend = installWorkflowBackend({ decideError: { code: "forbidden", message: "Your role cannot decide this step." } });
    render(Approvals, { now: NOW });
    await screen.findAllByTestId("approval-row");
    await fireEvent.keyDown(window, { key: "a" });
    const reason = (await screen.findByTestId("decision-reason")) as HTMLTextAreaElement;
    await waitFor(() => expect(document.activeElement).toBe(reason));
    await fireEvent.submit(screen.getByTestId("decision-form"));
    expect((await screen.findByTestId("decision-error")).textContent).toContain("Give a reason to approve");
    expect(callsOf(backend, "decide_approval")).toHaveLength(0);

    await fireEvent.input(reason, { target: { value: "fits the budget" } });
    await fireEvent.submit(screen.getByTestId("decision-form"));
    await waitFor(() => expect(screen.getByTestId("decision-error").textContent).toContain("Your role cannot decide this step."));
    expect(reason.value).toBe("fits the budget");
  });

  it("a step someone decided first ('conflict') is told apart from bad input and the inbox reloads", async () => {
    const backend = installWorkflowBackend({ decideError: { code: "conflict", message: "the approval was already approved." } });
    render(Approvals, { now: NOW });
    await screen.findAllByTestId("approval-row");
    const loads = callsOf(backend, "approvals_inbox").length;
    await fireEvent.keyDown(window, { key: "a" });
    const reason = (await screen.findByTestId("decision-reason")) as HTMLTextAreaElement;
    await fireEvent.input(reason, { target: { value: "fits the budget" } });
    await fireEvent.submit(screen.getByTestId("decision-form"));
    const said = await screen.findByTestId("decision-outcome");
    expect(said.textContent).toContain("Not recorded: the approval was already approved.");
    expect(said.textContent).toContain("reloaded");
    await waitFor(() => expect(callsOf(backend, "approvals_inbox").length).toBeGreaterThan(loads));
  });

  it("approving with a reason records it with the choice, empties the inbox and shows the finished run", async () => {
    const backend = installWorkflowBackend();
    render(Approvals, { now: NOW });
    await screen.findAllByTestId("approval-row");
    await fireEvent.keyDown(window, { key: "a" });
    const reason = (await screen.findByTestId("decision-reason")) as HTMLTextAreaElement;
    await fireEvent.input(reason, { target: { value: "fits the budget" } });
    await fireEvent.keyDown(reason, { key: "Enter", ctrlKey: true });
    expect((await screen.findByTestId("decision-outcome")).textContent).toContain("Approved: Procurement is finished.");
    expect(callsOf(backend, "decide_approval")[0].args).toEqual({
      id: approval().id,
      decision: "approve",
      reason: "fits the budget",
      choice: "Globex",
    });
    await screen.findByTestId("inbox-empty");
    await waitFor(() => expect(screen.getByTestId("agreement").textContent).toContain("PURCHASE AGREEMENT between the buyer and Globex"));
    expect(screen.getByTestId("decisions").textContent).toContain("fits the budget");
  });

  it("when the organization syncs, a decision says it is waiting to sync and the step is never shown as decided", async () => {
    installWorkflowBackend({
      syncs: true,
      inbox: [approval({ from_another_desktop: true, requested_by_name: "Bea Buyer" })],
    });
    render(Approvals, { now: NOW });
    const rows = await screen.findAllByTestId("approval-row");
    expect(rows[0].textContent).toContain("asked by Bea Buyer");
    await fireEvent.keyDown(window, { key: "a" });
    const reason = (await screen.findByTestId("decision-reason")) as HTMLTextAreaElement;
    await fireEvent.input(reason, { target: { value: "fits the budget" } });
    await fireEvent.submit(screen.getByTestId("decision-form"));
    const said = (await screen.findByTestId("decision-outcome")).textContent ?? "";
    expect(said).toContain("waiting to sync");
    expect(said).not.toContain("Approved");
    await waitFor(() => expect(screen.getByTestId("waiting-to-sync").textContent).toContain("your approval is waiting to sync"));
    expect(screen.getAllByTestId("approval-row")).toHaveLength(1);
  });

  it("a decision waiting to sync is followed: once the service stamps or refuses it, the outcome says so", async () => {
    for (const answer of ["stamped", "refused"] as const) {
      const backend = installWorkflowBackend({ syncs: true, inbox: [approval({ from_another_desktop: true })] });
      const view = render(Approvals, { now: NOW });
      await screen.findAllByTestId("approval-row");
      await fireEvent.keyDown(window, { key: "a" });
      const reason = (await screen.findByTestId("decision-reason")) as HTMLTextAreaElement;
      await fireEvent.input(reason, { target: { value: "fits the budget" } });
      await fireEvent.submit(screen.getByTestId("decision-form"));
      await waitFor(() => expect(screen.getByTestId("decision-outcome").textContent).toContain("waiting to sync"));

      // The service answered (a sync round told the window; here: Refresh).
      const sent = backend.inbox[0];
      const request = {
        ...sent.my_request!,
        status: answer,
        refusal: answer === "refused" ? "Ana Ruiz decided this step first" : null,
      };
      backend.decided = [{ ...sent, status: answer === "stamped" ? "approved" : "rejected", my_request: request }];
      backend.inbox = [];
      await fireEvent.click(screen.getByTestId("refresh-inbox"));
      const said = screen.getByTestId("decision-outcome");
      if (answer === "stamped") {
        await waitFor(() => expect(said.textContent).toContain("Your approval is confirmed by the sync service."));
      } else {
        await waitFor(() => expect(said.textContent).toContain("Your approval was not accepted: Ana Ruiz decided this step first."));
      }
      expect(said.textContent).not.toContain("waiting to sync");
      view.unmount();
    }
  });

  it("a decision the sync service refused is shown with its reason on the step", async () => {
    installWorkflowBackend({
      inbox: [
        approval({
          my_request: {
            decision: "approve",
            reason: "ok",
            choice: null,
            status: "refused",
            refusal: "four-eyes: the person who started the run may not decide this one",
            sent_at: "2026-11-30T10:00:00Z",
          },
        }),
      ],
    });
    render(Approvals, { now: NOW });
    await screen.findAllByTestId("approval-row");
    expect(screen.getByTestId("request-refused").textContent).toContain("was not accepted");
    await fireEvent.keyDown(window, { key: "Enter" });
    expect((await screen.findByTestId("request-refusal")).textContent).toContain("four-eyes");
  });

  it("'r' rejects, and sends no choice", async () => {
    const backend = installWorkflowBackend();
    render(Approvals, { now: NOW });
    await screen.findAllByTestId("approval-row");
    await fireEvent.keyDown(window, { key: "r" });
    const reason = (await screen.findByTestId("decision-reason")) as HTMLTextAreaElement;
    await fireEvent.input(reason, { target: { value: "over the limit" } });
    await fireEvent.submit(screen.getByTestId("decision-form"));
    await screen.findByTestId("decision-outcome");
    expect(callsOf(backend, "decide_approval")[0].args).toMatchObject({ decision: "reject", reason: "over the limit", choice: null });
  });
});

describe("workflow words", () => {
  it("due dates read in words", () => {
    const now = new Date("2026-11-30T12:00:00Z");
    expect(dueLabel(null, now)).toBe("no due date");
    expect(dueLabel("2026-11-30T12:30:00Z", now)).toBe("due in 30 minutes");
    expect(dueLabel("2026-11-30T09:00:00Z", now)).toBe("overdue by 3 hours");
  });
});

describe("Approvals inbox: escalations", () => {
  it("shows the urgent notification an escalation wrote, in the row and in the opened approval", async () => {
    installWorkflowBackend({
      inbox: [
        approval(),
        approval({
          id: "0193a0b4-0000-7000-8000-00000000b002",
          title: "Late one",
          escalated: true,
          urgent_notice: "Late one has waited 48 hours for a decision",
        }),
      ],
    });
    render(Approvals, { now: NOW });
    const rows = await screen.findAllByTestId("approval-row");
    expect(rows[0].querySelector("[data-testid=urgent]")).toBeNull();
    const label = rows[1].querySelector("[data-testid=urgent]");
    expect(label?.textContent).toBe("urgent");
    expect(label?.getAttribute("title")).toBe("Late one has waited 48 hours for a decision");
    await fireEvent.click(rows[1]);
    const notice = await screen.findByTestId("urgent-notice");
    expect(notice.getAttribute("role")).toBe("alert");
    expect(notice.textContent).toContain("Late one has waited 48 hours for a decision");
  });
});
