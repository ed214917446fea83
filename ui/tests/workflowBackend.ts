// A fake backend for the approvals inbox and the assistant, at the Tauri IPC level (the real bindings run above it).
import { mockIPC, mockWindows } from "@tauri-apps/api/mocks";
import type {
  Answer,
  ApprovalEvidence,
  ApprovalReading,
  ApprovalView,
  Decision,
  RequestView,
  RunDetail,
  RunForm,
  RunStory,
  RunSummary,
  RunView,
} from "../src/lib/bindings";

const RUN = "0193a0b4-0000-7000-8000-00000000a001";
export const DOC = "0193a0b4-0000-7000-8000-00000000d001";

export interface WorkflowBackend {
  inbox: ApprovalView[];
  run: RunView;
  calls: { cmd: string; args: Record<string, unknown> }[];
  /** The organization syncs: a decision is a request, waiting to sync until the service stamps it. */
  syncs?: boolean;
  /** Approvals that left the inbox (decided), as `approval_reading` still answers for them. */
  decided?: ApprovalView[];
  /** When set, the next decide_approval fails with this error. */
  decideError?: { code: string; message: string };
  /** What ask_assistant answers: an Answer, or an error to throw. */
  answer?: Answer | { code: string; message: string };
  pageText: string;
  /** The desktop has no notification daemon: notify fails. */
  notifyFails?: boolean;
  /** The desktop refused the app's notifications. */
  notificationsDenied?: boolean;
  /** The evidence `approval_reading` answers with. */
  evidence: ApprovalEvidence;
  /** The forms `run_forms` answers with. */
  forms: RunForm[];
  /** When set, the next start_run fails with this error. */
  startError?: { code: string; message: string };
}

export const SHORTLIST: ApprovalEvidence = {
  kind: "shortlist",
  request: "REQ-7 standing desks",
  budget: "10000.00",
  required: ["Office furniture", "Delivery"],
  vendors: [
    { name: "Globex", price: "8200.00", delivery: "10 days", capabilities: ["Office furniture", "Delivery"] },
    { name: "Initrode", price: "9100.00", delivery: "—", capabilities: ["Office furniture", "Delivery"] },
  ],
  left_out: ["Acme: over the budget"],
  method: "Shortlisted by code: a price within the budget and every required capability.",
};

export const PROCUREMENT_FORM: RunForm = {
  graph: "procurement",
  title: "Procurement",
  description: "Research vendors, shortlist by code, a person picks the vendor.",
  started_elsewhere: null,
  fields: [
    { key: "request", label: "Request", kind: "long_text", required: true, help: "", options: [], columns: [], min: null, max: null, initial: null },
    { key: "budget", label: "Budget", kind: "money", required: true, help: "", options: [], columns: [], min: null, max: null, initial: null },
    { key: "capabilities", label: "Required capabilities", kind: "tags", required: false, help: "", options: [], columns: [], min: null, max: null, initial: null },
    {
      key: "vendors",
      label: "Vendors",
      kind: "table",
      required: false,
      help: "From your organization's vendor records.",
      options: [],
      columns: [
        { key: "name", label: "Vendor", kind: "text", required: true, help: "", options: [], columns: [], min: null, max: null, initial: null },
        { key: "price", label: "Price", kind: "money", required: true, help: "", options: [], columns: [], min: null, max: null, initial: null },
      ],
      min: null,
      max: null,
      initial: [{ name: "Globex Office" }],
    },
  ],
};

const REPORT_FORM: RunForm = {
  graph: "contract_review_report",
  title: "Contract review report",
  description: "",
  started_elsewhere: "Start it from a document: open the document and choose Report.",
  fields: [],
};

export function summaryOf(run: RunView, extra: Partial<RunSummary> = {}): RunSummary {
  return {
    id: run.id,
    graph: run.graph,
    title: "Procurement",
    status: run.status,
    status_text: run.status === "waiting" ? "waiting" : run.status === "succeeded" ? "finished" : run.status,
    current: run.status === "waiting" ? "Waiting for a decision by Ana Ruiz (any owner, admin or approver may decide): Choose the vendor for this purchase" : null,
    started_by: "0193a0b4-0000-7000-8000-0000000000aa",
    started_by_name: "Ann",
    created_at: run.created_at,
    updated_at: run.updated_at,
    finished_at: run.finished_at,
    outcome: run.status === "succeeded" ? "Agreement drafted (vendor Globex)" : null,
    on_another_desktop: false,
    ...extra,
  };
}

export function storyOf(run: RunView): RunStory {
  const waiting = run.status === "waiting";
  return {
    summary: summaryOf(run),
    now: waiting
      ? { text: "Waiting for a decision by Ana Ruiz (any owner, admin or approver may decide): Choose the vendor for this purchase", since: "2026-11-30T09:00:01Z", until: "2026-12-03T09:00:00Z", approval: "0193a0b4-0000-7000-8000-00000000b001" }
      : null,
    timeline: [
      { at: "2026-11-30T09:00:00Z", text: "Started by Ann", tone: "info" },
      { at: "2026-11-30T09:00:00Z", text: "Research vendors: done", tone: "info" },
      { at: "2026-11-30T09:00:01Z", text: "Choose the vendor: waiting for a decision by Ana Ruiz", tone: "info" },
      ...(waiting ? [] : [{ at: "2026-11-30T10:00:00Z", text: "Choose the vendor for this purchase: approved by Ana Ruiz (chose Globex): “fits the budget”", tone: "good" as const }]),
    ],
    decisions: waiting
      ? [{ step: "Choose the vendor for this purchase", text: "Waiting for a decision by Ana Ruiz", reason: null, at: "2026-11-30T09:00:01Z", tone: "info" }]
      : [{ step: "Choose the vendor for this purchase", text: "Approved by Ana Ruiz (chose Globex)", reason: "fits the budget", at: "2026-11-30T10:00:00Z", tone: "good" }],
    may_cancel: !["succeeded", "failed", "cancelled"].includes(run.status),
    document_text:
      run.channels && typeof run.channels === "object" && !Array.isArray(run.channels) && run.channels.agreement
        ? "PURCHASE AGREEMENT between the buyer and Globex"
        : null,
  };
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
        supporting: [],
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
        supporting: [],
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
    evidence: SHORTLIST,
    forms: [PROCUREMENT_FORM, REPORT_FORM],
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
      case "run_summaries":
        return [summaryOf(backend.run)];
      case "run_story":
        return storyOf(backend.run);
      case "run_forms":
        return backend.forms;
      case "start_run": {
        if (backend.startError) {
          const e = backend.startError;
          backend.startError = undefined;
          throw e;
        }
        backend.run = runView("waiting");
        return backend.run;
      }
      case "cancel_run":
        backend.run = { ...runView("cancelled"), reason: a.reason as string };
        return { run: backend.run, runs_cancelled: 1, tasks_cancelled: 0, approvals_cancelled: 1 };
      case "approval_reading": {
        const found = backend.inbox.find((x) => x.id === a.id) ?? backend.decided?.find((x) => x.id === a.id) ?? approval();
        const reading: ApprovalReading = {
          approval: found,
          workflow: "Procurement",
          step: "Choose the vendor",
          waiting_for: "a decision by Ana Ruiz or Ann (any owner, admin or approver may decide)",
          since: found.created_at,
          deciders: ["Ana Ruiz", "Ann"],
          evidence: backend.evidence,
        };
        return reading;
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
