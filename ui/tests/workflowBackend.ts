// A fake backend for the approvals inbox and the assistant, at the Tauri IPC level (the real bindings run above it).
import { mockIPC, mockWindows } from "@tauri-apps/api/mocks";
import type { Answer, ApprovalView, Decision, RequestView, RunDetail, RunView } from "../src/lib/bindings";

const RUN = "0193a0b4-0000-7000-8000-00000000a001";
export const DOC = "0193a0b4-0000-7000-8000-00000000d001";

export interface WorkflowBackend {
  inbox: ApprovalView[];
  run: RunView;
  calls: { cmd: string; args: Record<string, unknown> }[];
  /** The organization syncs: a decision is a request, waiting to sync until the service stamps it. */
  syncs?: boolean;
  /** When set, the next decide_approval fails with this error. */
  decideError?: { code: string; message: string };
  /** What ask_assistant answers: an Answer, or an error to throw. */
  answer?: Answer | { code: string; message: string };
  pageText: string;
  /** The desktop has no notification daemon: notify fails. */
  notifyFails?: boolean;
  /** The desktop refused the app's notifications. */
  notificationsDenied?: boolean;
}

export function approval(extra: Partial<ApprovalView> = {}): ApprovalView {
  return {
    id: "0193a0b4-0000-7000-8000-00000000b001",
    run: RUN,
    node: "choose_vendor",
    title: "Choose the vendor for this purchase",
    status: "pending",
    eligible_roles: ["owner", "admin", "approver"],
    four_eyes: false,
    state_seen: {
      input: { request: "REQ-7 standing desks", budget: 10000 },
      shortlist: [{ vendor: "Globex", price: 8200 }],
      analysis: "1 of 3 vendors fit the budget and capabilities",
    },
    choices: ["Globex"],
    due_at: "2026-12-03T09:00:00Z",
    escalated: false,
    urgent_notice: null,
    decided_by: null,
    decided_by_name: null,
    decided_at: null,
    reason: null,
    choice: null,
    created_at: "2026-11-30T09:00:00Z",
    from_another_desktop: false,
    requested_by_name: null,
    my_request: null,
    ...extra,
  };
}

function runView(status: RunView["status"], channels: RunView["channels"] = {}): RunView {
  return {
    id: RUN,
    graph: "procurement",
    graph_version: 1,
    status,
    superstep: status === "succeeded" ? 5 : 3,
    reason: null,
    waiting_on: status === "waiting" ? ["choose_vendor: approval"] : [],
    channels,
    parent: null,
    started_by: null,
    started_by_name: null,
    from_another_desktop: false,
    created_at: "2026-11-30T09:00:00Z",
    updated_at: "2026-11-30T09:00:00Z",
    finished_at: null,
  };
}

export function answer(extra: Partial<Answer> = {}): Answer {
  return {
    id: "ans-1",
    session: "sess-1",
    question: "What law governs the supply agreement?",
    text: "The supply agreement is governed by New York law [C1]. A market example uses Delaware law [M1].",
    citations: [
      {
        marker: "C1",
        kind: "contract",
        document: DOC,
        precedent: null,
        title: "supply-agreement-acme.txt",
        page: 1,
        start: 10,
        end: 24,
        excerpt: "Governing law:",
        label: null,
      },
      {
        marker: "M1",
        kind: "precedent",
        document: null,
        precedent: "model-supply",
        title: "Model supply agreement",
        page: null,
        start: 0,
        end: 10,
        excerpt: "Delaware",
        label: "market example",
      },
    ],
    contracts: [],
    iterations: 2,
    tool_calls: [],
    prompt_version: "v1",
    ...extra,
  };
}

export function installWorkflowBackend(initial: Partial<WorkflowBackend> = {}): WorkflowBackend {
  const backend: WorkflowBackend = {
    inbox: [approval()],
    run: runView("waiting"),
    calls: [],
    pageText: "Preamble. Governing law: New York. The end.",
    ...initial,
  };
  mockWindows("main");
  mockIPC((cmd, args) => {
    const a = (args ?? {}) as Record<string, unknown>;
    backend.calls.push({ cmd, args: a });
    switch (cmd) {
      case "plugin:event|listen":
        return 1;
      case "plugin:event|unlisten":
        return null;
      case "session_info":
        return {
          org_id: "0193a0b4-0000-7000-8000-000000000001",
          org_name: "Acme Legal",
          user_id: "0193a0b4-0000-7000-8000-0000000000aa",
          user_name: "Ann",
          role: "owner",
          data_dir: "/tmp/pactwise-data",
        };
      case "model_availability":
        return { availability: "ready", endpoint: null };
      case "list_documents":
        return [];
      case "approvals_inbox":
        return backend.inbox;
      case "plugin:notification|is_permission_granted":
        return !backend.notificationsDenied;
      case "plugin:notification|notify":
        if (backend.notifyFails) throw "org.freedesktop.Notifications was not provided by any .service files";
        return null;
      case "list_runs":
        return [backend.run];
      case "run_detail": {
        const detail: RunDetail = {
          run: backend.run,
          events: [
            { superstep: 0, node: "research", kind: "step_completed", details: {}, at: "2026-11-30T09:00:00Z" },
            { superstep: 2, node: "choose_vendor", kind: "approval_opened", details: {}, at: "2026-11-30T09:00:01Z" },
          ],
          approvals: backend.inbox.length ? backend.inbox : [approval({ status: "approved", reason: "fits the budget", choice: "Globex" })],
          tasks: [],
          checkpoints: 4,
        };
        return detail;
      }
      case "decide_approval": {
        if (backend.decideError) {
          const e = backend.decideError;
          backend.decideError = undefined;
          throw e;
        }
        if (backend.syncs) {
          const request: RequestView = {
            decision: a.decision as Decision,
            reason: a.reason as string,
            choice: null,
            status: "waiting_to_sync" as const,
            refusal: null,
            sent_at: "2026-11-30T10:00:00Z",
          };
          backend.inbox = backend.inbox.map((x, i) => (i === 0 ? { ...x, my_request: request } : x));
          return { approval: backend.inbox[0], run: backend.run, waiting_to_sync: true };
        }
        const decided = { ...backend.inbox[0], status: a.decision === "approve" ? "approved" : "rejected", reason: a.reason as string };
        backend.inbox = [];
        backend.run = runView("succeeded", { agreement: { vendor: "Globex", text: "PURCHASE AGREEMENT between the buyer and Globex" } });
        return { approval: decided, run: backend.run, waiting_to_sync: false };
      }
      case "ask_assistant": {
        const ans = backend.answer ?? answer();
        if ("code" in ans) throw ans;
        return ans;
      }
      case "page_layout":
        return {
          number: a.page,
          text: backend.pageText,
          source: "text",
          confidence: { kind: "none" },
          synthetic: true,
          width: null,
          height: null,
          renderable: false,
          runs: [],
          page_count: 1,
        };
      default:
        throw new Error(`unexpected command ${cmd}`);
    }
  });
  return backend;
}

export function callsOf(backend: WorkflowBackend, cmd: string) {
  return backend.calls.filter((c) => c.cmd === cmd);
}
