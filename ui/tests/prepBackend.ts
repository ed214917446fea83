// A fake Prep Studio backend at the Tauri IPC level (the real bindings run above it). Its packages look like what the
// api returns for the it-service-desk golden run: criteria weights summing to 95 % and an open pricing line. The
// validators are the backend's: here a test says which violations an edit yields (`validate`), nothing is decided
// in the UI.
import { mockIPC, mockWindows } from "@tauri-apps/api/mocks";
import { emit } from "@tauri-apps/api/event";
import type {
  ArtifactKind,
  ArtifactState,
  Content,
  DraftProgress,
  Intake,
  Package,
  PrepLock,
  PrepView,
  Violation,
} from "../src/lib/bindings";

export const PKG = "0193a0b4-0000-7000-8000-00000000e001";

export interface PrepBackend {
  view: PrepView;
  calls: { cmd: string; args: Record<string, unknown> }[];
  model: string;
  /** The violations an edit of `kind` with `content` yields (none by default). */
  validate: (kind: ArtifactKind, content: unknown) => Violation[];
  /** When set, the next call of this command fails with this error. */
  failNext: Record<string, { code: string; message: string }>;
  /** Resolves the pending prep_draft, when a test holds it. */
  finishDraft?: () => void;
  holdDraft: boolean;
}

export function intake(extra: Partial<Intake> = {}): Intake {
  return {
    title: "IT service desk for schools",
    buyer: "Riverside School District",
    brief: "First-line IT support for 40 schools.",
    needs: [
      { id: "N1", text: "First-line support by phone and chat" },
      { id: "N2", text: "On-site visits for hardware faults" },
    ],
    category: "services",
    currency: "GBP",
    budget_ceiling_minor: 45000000,
    timeline: { publication: "2027-04-05", question_days: 5, submission_days: 20, evaluation_days: 10, award_days: 5, contract_start_days: 20 },
    holidays: ["2027-05-03"],
    checklist_type: "outsourcing",
    ...extra,
  };
}

/** A stand-in for the backend's content hash: stable for equal content, different for different content. */
export function fakeHash(value: unknown): string {
  const text = JSON.stringify(value);
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return h.toString(16).padStart(8, "0").repeat(8);
}

const stamp = (module: string) => ({ module, version: 1, hash: "ab".repeat(32) });

function slot<T>(content: T | null, state: ArtifactState, drafted = true) {
  return { state, content, content_hash: content ? fakeHash(content) : null, prompt: content && drafted ? stamp("x") : null, error: null };
}

export const WEIGHT_ERROR: Violation = {
  rule: "weights_not_hundred",
  artifact: "criteria",
  subject: null,
  message: "criteria weights sum to 9500 basis points; they must sum to exactly 10000 (100 %)",
};
export const PRICING_ERROR: Violation = {
  rule: "pricing_line_not_priceable",
  artifact: "pricing",
  subject: "P-02",
  message: "pricing line P-02 needs a unit, a quantity or pricing basis, and no open amount",
};
export const MEASURE_ERROR: Violation = {
  rule: "requirement_not_measurable",
  artifact: "requirements",
  subject: "R-03",
  message: "scored requirement R-03 needs a metric, a threshold and a verification method",
};

export function draftedPackage(): Package {
  const requirements = {
    items: [
      { code: "R-01", text: "Support 07:30-17:00 on school days.", kind: "mandatory" as const, need_ids: ["N1"], measure: null },
      { code: "R-02", text: "Calls are answered quickly.", kind: "scored" as const, need_ids: ["N1"], measure: { metric: "median time to answer", threshold: "<= 60 s", verification: "test" as const } },
      { code: "R-03", text: "Visits are prompt.", kind: "scored" as const, need_ids: ["N2"], measure: { metric: "time to site", threshold: "<= 1 day", verification: "document" as const } },
    ],
  };
  const criteria = {
    criteria: [
      { id: "C1", name: "Responsiveness", description: "Answer and visit times.", weight_bp: 5000, requirement_codes: ["R-02"] },
      { id: "C2", name: "Visits", description: "On-site visits.", weight_bp: 4500, requirement_codes: ["R-03"] },
    ],
  };
  const pricing = {
    currency: "GBP",
    lines: [
      { code: "P-01", description: "Service desk operation", unit: "school-month", quantity: 480, basis: "subscription" as const, open_amount: false },
      { code: "P-02", description: "On-site visits, as required", unit: "visit", quantity: null, basis: null, open_amount: true },
    ],
  };
  const milestones = {
    items: [
      { kind: "publication" as const, date: "2027-04-05", rationale: "Start." },
      { kind: "questions_deadline" as const, date: "2027-04-12", rationale: "A week for questions." },
      { kind: "submission_deadline" as const, date: "2027-05-11", rationale: "Four weeks to bid." },
      { kind: "evaluation" as const, date: "2027-05-25", rationale: "Two weeks." },
      { kind: "award" as const, date: "2027-06-01", rationale: "One week." },
      { kind: "contract_start" as const, date: "2027-06-29", rationale: "Four weeks of mobilisation." },
    ],
  };
  const scope = { summary: "A managed service desk.", in_scope: ["Phone"], out_of_scope: ["Hardware"], deliverables: ["Reports"], need_ids: ["N1", "N2"] };
  return {
    title: "IT service desk for schools",
    artifacts: {
      intake: slot(intake(), { status: "valid" }, false),
      scope: slot(scope, { status: "valid" }),
      requirements: slot(requirements, { status: "valid" }),
      criteria: slot(criteria, { status: "invalid", errors: [WEIGHT_ERROR] }),
      pricing: slot(pricing, { status: "invalid", errors: [PRICING_ERROR] }),
      milestones: slot(milestones, { status: "valid" }),
    },
    findings: [
      { cycle: 1, perspective: "bid_manager", severity: "major", target: "pricing", rationale: "P-02 has no volume: vendors cannot price visits.", status: "re_run" },
      { cycle: 3, perspective: "protest_lawyer", severity: "minor", target: "criteria", rationale: "Describe how responsiveness is scored.", status: "awaiting_buyer" },
    ],
    warnings: [],
    run: {
      status: "done",
      queue: [],
      budget: { max_tokens: 200000, max_cost_micros: 500000, max_seconds: 600 },
      critic_cycles: 3,
      converged_at_cycle: null,
      tokens_used: 12345,
      cost_micros: 23456,
      largest_step_tokens: 2000,
      largest_step_cost_micros: 4000,
      model_calls: 13,
      pause_reason: null,
      error: null,
    },
  };
}

export function emptyPackage(): Package {
  const p = draftedPackage();
  for (const kind of ["scope", "requirements", "criteria", "pricing", "milestones"] as const) {
    (p.artifacts[kind] as { state: ArtifactState; content: unknown; content_hash: string | null; prompt: unknown }) = slot(null, { status: "empty" });
  }
  p.findings = [];
  p.run = { ...p.run, status: "idle", critic_cycles: 0, tokens_used: 0, cost_micros: 0, model_calls: 0 };
  return p;
}

export function lock(extra: Partial<PrepLock> = {}): PrepLock {
  return { holder_name: "Ann", held_by_me: true, expires_at: "2030-01-01T10:30:00Z", expired: false, on_service: false, ...extra };
}

const KINDS: ArtifactKind[] = ["intake", "scope", "requirements", "criteria", "pricing", "milestones"];

function precheckOf(p: Package) {
  return KINDS.filter((k) => p.artifacts[k].state.status !== "approved").map((k) => ({
    rule: "not_approved",
    artifact: k,
    subject: null,
    message: `the ${k} is not approved`,
  }));
}

export function viewOf(p: Package, extra: Partial<PrepView> = {}): PrepView {
  return {
    id: PKG,
    version: 7,
    status: "draft",
    package: p,
    lock: lock(),
    precheck: precheckOf(p),
    milestone_preview: [
      { kind: "publication", title: "Publication", date: "2027-04-05" },
      { kind: "questions_deadline", title: "Deadline for questions", date: "2027-04-12" },
      { kind: "submission_deadline", title: "Submission deadline", date: "2027-05-11" },
      { kind: "evaluation", title: "End of evaluation", date: "2027-05-25" },
      { kind: "award", title: "Award", date: "2027-06-01" },
      { kind: "contract_start", title: "Contract start", date: "2027-06-29" },
    ],
    updated_at: "2026-11-30T09:00:00Z",
    ...extra,
  };
}

export function installPrepBackend(initial: Partial<PrepBackend> = {}): PrepBackend {
  const backend: PrepBackend = {
    view: viewOf(draftedPackage()),
    calls: [],
    model: "ready",
    validate: () => [],
    failNext: {},
    holdDraft: false,
    ...initial,
  };
  const refresh = () => {
    backend.view = { ...backend.view, version: backend.view.version + 1, precheck: precheckOf(backend.view.package) };
    return structuredClone(backend.view);
  };
  mockWindows("main");
  mockIPC(
    async (cmd, args) => {
      const a = (args ?? {}) as Record<string, unknown>;
      backend.calls.push({ cmd, args: a });
      const failure = backend.failNext[cmd];
      if (failure) {
        delete backend.failNext[cmd];
        throw failure;
      }
      const p = backend.view.package;
      switch (cmd) {
        case "session_info":
          return { org_id: "o", org_name: "Acme", user_id: "u", user_name: "Ann", role: "buyer", data_dir: "/tmp/x" };
        case "model_availability":
          return { availability: backend.model, endpoint: null };
        case "prep_list":
          return [{ id: PKG, title: p.title, status: backend.view.status, states: KINDS.map((k) => [k, p.artifacts[k].state.status]), updated_at: backend.view.updated_at }];
        case "prep_show":
          return structuredClone(backend.view);
        case "prep_new": {
          const i = a.intake as Intake;
          const fresh = emptyPackage();
          fresh.title = i.title;
          fresh.artifacts.intake = slot(i, { status: "valid" }, false);
          backend.view = viewOf(fresh);
          return structuredClone(backend.view);
        }
        case "prep_edit": {
          const content = a.content as Content;
          const kind = content.artifact;
          const errors = backend.validate(kind, content.content);
          const target = p.artifacts[kind] as { state: ArtifactState; content: unknown; content_hash: string | null; prompt: unknown };
          target.content = content.content;
          target.content_hash = fakeHash(content.content);
          target.prompt = null;
          target.state = errors.length ? { status: "invalid", errors } : { status: "valid" };
          for (const later of KINDS.slice(KINDS.indexOf(kind) + 1)) {
            if (p.artifacts[later].content) p.artifacts[later].state = { status: "stale" };
          }
          return refresh();
        }
        case "prep_validate":
          for (const k of KINDS) if (p.artifacts[k].state.status === "stale") p.artifacts[k].state = { status: "valid" };
          return refresh();
        case "prep_approve": {
          const kind = a.kind as ArtifactKind;
          const current = p.artifacts[kind].content_hash;
          if (a.seenHash !== current) throw { code: "approval_outdated", message: "the content changed since you saw it" };
          if (p.artifacts[kind].state.status !== "valid") throw { code: "invalid_input", message: "cannot approve" };
          p.artifacts[kind].state = { status: "approved", hash: current as string };
          return refresh();
        }
        case "prep_dismiss_finding": {
          const f = p.findings[a.index as number];
          if (!f) throw { code: "not_found", message: `the package has no finding number ${a.index}` };
          if (!String(a.reason ?? "").trim()) throw { code: "invalid_input", message: "say why the finding does not apply" };
          if (f.status !== "awaiting_buyer" && f.status !== "unresolved") throw { code: "invalid_input", message: "this finding was already acted on or dismissed" };
          f.status = "dismissed";
          f.dismissal = String(a.reason).trim();
          return refresh();
        }
        case "prep_lock":
          backend.view.lock = lock();
          return backend.view.lock;
        case "prep_release":
          backend.view.lock = null;
          return null;
        case "prep_draft": {
          const steps: DraftProgress[] = [
            { step: { step: "draft", artifact: "scope" }, done: 0, remaining: 6, critic_cycles: 0, tokens_used: 0, cost_micros: 0, budget: p.run.budget },
            { step: { step: "draft", artifact: "requirements" }, done: 1, remaining: 5, critic_cycles: 0, tokens_used: 1800, cost_micros: 3000, budget: p.run.budget },
          ];
          for (const progress of steps) await emit("prep-progress-event", { package: PKG, progress });
          if (backend.holdDraft) await new Promise<void>((resolve) => (backend.finishDraft = resolve));
          backend.view = viewOf(draftedPackage());
          return structuredClone(backend.view);
        }
        case "prep_publish":
          throw { code: "publish_blocked", message: "the gate refused: the criteria is not approved" };
        case "prep_export":
          return { path: a.path, bytes: 24576, format: a.format };
        case "plugin:dialog|save":
          return "/tmp/exports/rfp.pdf";
        default:
          throw new Error(`unexpected command ${cmd}`);
      }
    },
    { shouldMockEvents: true },
  );
  return backend;
}

export function callsOf(backend: PrepBackend, cmd: string) {
  return backend.calls.filter((c) => c.cmd === cmd);
}
