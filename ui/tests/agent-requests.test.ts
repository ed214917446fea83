import { describe, expect, it } from "vitest";
import { fireEvent, render, screen, waitFor } from "@testing-library/svelte";
import { mockIPC, mockWindows } from "@tauri-apps/api/mocks";
import AgentRequests from "../src/views/runs/AgentRequests.svelte";
import MemorySettings from "../src/views/MemorySettings.svelte";
import { AgentNoticeNotifier, type NativeNotice } from "../src/lib/notify";
import type { AgentRequestView, MemoryView, NoticeView, PlanView } from "../src/lib/bindings";

const plan = (mayRun: boolean): PlanView => ({
  request: "Renew MSA-2026-014 before 31 March, budget 50k",
  kind: "A renewal",
  ready: true,
  message: null,
  urgent: false,
  names: ["Contract MSA-2026-014", "Amount EUR 50,000.00", "Date 31 March 2027 (“before 31 March”)"],
  steps: [
    { agent: "Document reading (OCR)", why: "Reads the documents' text.", after: [], stops_the_run: true, round: 1 },
    { agent: "Legal", why: "Reviews the contract against its type's checklist.", after: ["Document reading (OCR)"], stops_the_run: false, round: 2 },
    { agent: "Notifications", why: "Puts the outcome in the inbox.", after: ["Analytics"], stops_the_run: false, round: 4 },
  ],
  notes: [],
  remembered: ["Renewal for MSA-2026-014: EUR 50,000.00"],
  may_run: mayRun,
  cannot_run_because: mayRun ? null : "Running a request needs the manager role, and your role (reviewer) does not have it.",
});

const ran: AgentRequestView = {
  run: "0193a0b4-0000-7000-8000-0000000000aa",
  request: "Renew MSA-2026-014 before 31 March, budget 50k",
  kind: "A renewal",
  state: "Done",
  finished: true,
  started_at: "2026-12-03T09:00:00Z",
  plan: plan(true),
  steps: [
    { agent: "Document reading (OCR)", state: "Done", summary: "MSA-2026-014 is read.", findings: ["MSA-2026-014: 12 pages read."], drafted: null },
    { agent: "Legal", state: "Done", summary: "1 red flag in the checklist.", findings: ["Red flag (page 4): Is liability capped? — Uncapped."], drafted: "Summary drafted by the model from the agents' findings and checked against them." },
    { agent: "Notifications", state: "Skipped", summary: "Skipped: Analytics did not finish.", findings: [], drafted: null },
  ],
  follow_ups: [{ agent: "Notifications", why: "A reminder on 1 March 2027 for MSA-2026-014's expiry.", state: "Due on 1 March 2027" }],
  notices: [{ id: "n1", title: "A renewal for MSA-2026-014: done", message: "Risk medium: 1 red flag.", urgent: false, created_at: "2026-12-03T09:00:01Z", seen: false, run: "0193a0b4-0000-7000-8000-0000000000aa" }],
};

function backend(mayRun: boolean) {
  const calls: { cmd: string; args: Record<string, unknown> }[] = [];
  mockWindows("main");
  mockIPC((cmd, args) => {
    calls.push({ cmd, args: (args ?? {}) as Record<string, unknown> });
    switch (cmd) {
      case "plan_request":
        return plan(mayRun);
      case "run_request":
        return ran;
      case "agent_requests":
        return [];
      case "agent_notices":
        return [];
      default:
        return null;
    }
  });
  return calls;
}

describe("Ask the agents", () => {
  it("shows the plan in words before anything runs, then each agent's output, the follow-ups and the notice", async () => {
    const calls = backend(true);
    render(AgentRequests);
    const field = screen.getByTestId("agent-request");
    await waitFor(() => expect(document.activeElement).toBe(field));
    await fireEvent.input(field, { target: { value: "Renew MSA-2026-014 before 31 March, budget 50k" } });
    await fireEvent.keyDown(field, { key: "Enter", ctrlKey: true });
    const steps = await screen.findByTestId("plan-steps");
    expect(steps.textContent).toContain("1. Document reading (OCR)");
    expect(steps.textContent).toContain("If it fails, the run stops.");
    expect(steps.textContent).toContain("After Document reading (OCR).");
    expect(screen.getByTestId("plan-remembered").textContent).toContain("EUR 50,000.00");
    expect(calls.some((c) => c.cmd === "run_request")).toBe(false);

    // Ctrl+Enter again runs it.
    await fireEvent.keyDown(field, { key: "Enter", ctrlKey: true });
    const result = await screen.findByTestId("agent-result");
    expect(screen.getByTestId("agent-result-state").textContent).toBe("Done");
    const outputs = screen.getAllByTestId("agent-step").map((li) => li.textContent ?? "");
    expect(outputs[1]).toContain("Red flag (page 4)");
    expect(outputs[2]).toContain("Skipped");
    const drafted = screen.getAllByTestId("agent-step-drafted");
    expect(drafted.map((d) => d.textContent)).toEqual(["Summary drafted by the model from the agents' findings and checked against them."]);
    expect(screen.getByTestId("agent-follow-ups").textContent).toContain("Due on 1 March 2027");
    expect(screen.getByTestId("agent-notices").textContent).toContain("A renewal for MSA-2026-014: done");
    await waitFor(() => expect(document.activeElement).toBe(result));
    expect(calls.find((c) => c.cmd === "run_request")?.args).toEqual({ request: "Renew MSA-2026-014 before 31 March, budget 50k" });
    // Nothing on screen is an id, an enum name or JSON.
    expect(result.textContent).not.toMatch(/0193a0b4|\{"|contract_review|snake_case/);
  });

  it("says why a member without the manager role cannot run it, and offers no run button", async () => {
    const calls = backend(false);
    render(AgentRequests);
    await fireEvent.input(screen.getByTestId("agent-request"), { target: { value: "Review MSA-2026-014" } });
    await fireEvent.click(screen.getByTestId("show-plan"));
    expect((await screen.findByTestId("cannot-run")).textContent).toContain("needs the manager role");
    expect(screen.queryByTestId("run-plan")).toBeNull();
    await fireEvent.keyDown(screen.getByTestId("agent-request"), { key: "Enter", ctrlKey: true });
    expect(calls.some((c) => c.cmd === "run_request")).toBe(false);
  });

  it("asks for a new plan when the request changed after its plan was shown", async () => {
    backend(true);
    render(AgentRequests);
    const field = screen.getByTestId("agent-request");
    await fireEvent.input(field, { target: { value: "Review MSA-2026-014" } });
    await fireEvent.click(screen.getByTestId("show-plan"));
    await screen.findByTestId("run-plan");
    await fireEvent.input(field, { target: { value: "Review MSA-2026-015" } });
    expect((screen.getByTestId("run-plan") as HTMLButtonElement).disabled).toBe(true);
    expect(screen.getByTestId("plan").textContent).toContain("show its plan again first");
  });
});

describe("What the agents remember", () => {
  it("lists each memory with why, deletes one and keeps a new fact", async () => {
    let kept: MemoryView[] = [
      { id: "m1", text: "Renewal for MSA-2026-014: EUR 50,000.00", why: "From your request of 3 December 2026", kind: "Kept", until: null, created_at: "2026-12-03T09:00:00Z" },
    ];
    mockWindows("main");
    mockIPC((cmd, args) => {
      const a = (args ?? {}) as Record<string, string>;
      if (cmd === "memories") return kept;
      if (cmd === "forget_memory") return (kept = kept.filter((m) => m.id !== a.id));
      if (cmd === "remember") {
        if (!a.text.trim()) throw { code: "invalid_input", message: "Write what the agents should remember." };
        return (kept = [{ id: "m2", text: a.text, why: "You asked the agents to remember it", kind: "Kept", until: null, created_at: "2026-12-03T10:00:00Z" }, ...kept]);
      }
      return null;
    });
    render(MemorySettings);
    const item = await screen.findByTestId("memory");
    expect(item.textContent).toContain("From your request of 3 December 2026");
    await fireEvent.click(screen.getByRole("button", { name: "Delete: Renewal for MSA-2026-014: EUR 50,000.00" }));
    await screen.findByTestId("memory-empty");
    await fireEvent.input(screen.getByTestId("remember-text"), { target: { value: "Budgets above EUR 100,000 need the CFO" } });
    await fireEvent.click(screen.getByTestId("remember"));
    expect((await screen.findByTestId("memory")).textContent).toContain("need the CFO");
  });
});

describe("The agents' urgent notices", () => {
  it("are announced once each, and only the unseen urgent ones", async () => {
    const shown: NativeNotice[] = [];
    const store = new Map<string, string>();
    const storage = { getItem: (k: string) => store.get(k) ?? null, setItem: (k: string, v: string) => void store.set(k, v) } as unknown as Storage;
    const n = (id: string, urgent: boolean, seen: boolean): NoticeView => ({ id, title: `t${id}`, message: "m", urgent, seen, created_at: "2026-12-03T09:00:00Z", run: null });
    const notifier = new AgentNoticeNotifier(async (x) => (shown.push(x), true), storage);
    expect(await notifier.notice([n("1", true, false), n("2", false, false), n("3", true, true)])).toBe(1);
    expect(await notifier.notice([n("1", true, false)])).toBe(0);
    expect(await new AgentNoticeNotifier(async (x) => (shown.push(x), true), storage).notice([n("1", true, false)])).toBe(0);
    expect(shown.map((s) => s.title)).toEqual(["t1"]);
  });
});

describe("Settings → Agents", () => {
  it("refuses a value outside its bounds beside the field, keeps what was typed, and saves a good one", async () => {
    const { default: AgentSettings } = await import("../src/views/AgentSettings.svelte");
    let value = "30";
    mockWindows("main");
    mockIPC((cmd, args) => {
      const a = (args ?? {}) as Record<string, string>;
      const view = () => ({
        settings: [{ setting: "secretary.reminder_days_before", section: "Secretary", description: "Days before a deadline the reminder is due (1 to 365).", value, kind: "number" }],
        may_change: true,
      });
      if (cmd === "agent_settings") return view();
      if (cmd === "set_agent_setting") {
        if (Number(a.value) < 1 || Number(a.value) > 365) {
          throw { code: "invalid_input", message: `The agents' configuration was not changed: secretary.reminder_days_before: ${a.value} is outside the allowed range; use a whole number from 1 to 365` };
        }
        value = a.value;
        return view();
      }
      return null;
    });
    render(AgentSettings);
    const field = (await screen.findByLabelText(/Days before a deadline/)) as HTMLInputElement;
    expect(field.value).toBe("30");
    await fireEvent.input(field, { target: { value: "0" } });
    await fireEvent.keyDown(field, { key: "Enter" });
    expect((await screen.findByRole("alert")).textContent).toContain("use a whole number from 1 to 365");
    expect(field.value).toBe("0");
    expect(field.getAttribute("aria-invalid")).toBe("true");
    await fireEvent.input(field, { target: { value: "14" } });
    await fireEvent.keyDown(field, { key: "Enter" });
    expect((await screen.findByRole("status")).textContent).toBe("Saved.");
    expect(value).toBe("14");
    expect(screen.queryByRole("alert")).toBeNull();
  });
});
