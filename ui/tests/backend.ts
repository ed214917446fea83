// A fake backend at the Tauri IPC level (the real bindings and @tauri-apps/api run unchanged above it).
import { mockIPC, mockWindows } from "@tauri-apps/api/mocks";
import type {
  CrashReport,
  VoyageStatus,
  Membership,
  MembersView,
  ApprovalView,
  ContractType_Serialize,
  Document,
  DocumentReview_Serialize,
  ImportReport,
  PageLayout,
  QueueEntry_Serialize,
  ReportView_Serialize,
  SyncStatusView_Serialize,
  Thresholds_Serialize,
  VendorEntry,
} from "../src/lib/bindings";
import { reviewFixture, spanOn } from "./review-fixture";

export interface FakeBackend {
  docs: Document[];
  trash: Document[];
  calls: { cmd: string; args: unknown }[];
  importReport?: (paths: string[]) => ImportReport;
  model?: string;
  /** Where model requests go when not the default API (PACTWISE_MODEL_ENDPOINT). */
  modelEndpoint?: string | null;
  /** The session's role (owner unless a test says otherwise). */
  role?: string;
  queue: QueueEntry_Serialize[];
  /** Reviews by document id. */
  reviews: Record<string, DocumentReview_Serialize>;
  types: Record<string, ContractType_Serialize>;
  /** Pages by document id (1-based page numbers; index 0 is page 1). */
  pages: Record<string, PageLayout[]>;
  vendors: VendorEntry[];
  thresholds: Thresholds_Serialize;
  ownNames: string[];
  /** What the save dialog answers (null: the person cancelled). */
  savePath: string | null;
  user: string;
  /** Report runs by document id, newest first. */
  reports: Record<string, ReportView_Serialize[]>;
  /** What `start_report` answers for a document (an error is thrown as the backend's). */
  runReport?: (document: string) => ReportView_Serialize;
  /** What `dry_run_pipeline` answers for a document (an error is thrown as the backend's). */
  dryRun?: (document: string) => DocumentReview_Serialize;
  /** What approvals_inbox answers (the app's background look for new approvals). */
  approvals: ApprovalView[];
  orgName: string;
  sync: SyncStatusView_Serialize;
  /** The organization's members as the service lists them (Settings → Members). */
  members: MembersView;
  /** The organizations of this computer (the switcher). */
  orgs: Membership[];
  /** What meaning-based search uses (the local model unless a test says so). */
  voyage?: VoyageStatus;
  /** Crash reports not yet seen (none unless a test says so). */
  crashReports?: CrashReport[];
  /** A new installation: the welcome screen is shown (set up unless a test says so). */
  firstRunNeeded?: boolean;
}

export const notSignedIn: SyncStatusView_Serialize = {
  phase: "not_signed_in",
  account: null,
  org_name: null,
  pending_uploads: 0,
  files_waiting: 0,
  last_success: null,
  last_error: null,
  next_retry_at: null,
  running: false,
  refused_changes: [],
  refused_total: 0,
};

/** A desktop signed in to "alpha" whose last round worked. */
export function syncedStatus(extra: Partial<SyncStatusView_Serialize> = {}): SyncStatusView_Serialize {
  return {
    phase: "synced",
    account: { server: "https://sync.example.com", org_slug: "alpha", email: "ann@alpha.example", device_id: "d-1" },
    org_name: "Alpha LLP",
    pending_uploads: 0,
    files_waiting: 0,
    last_success: "2026-11-30T10:00:00Z",
    last_error: null,
    next_retry_at: null,
    running: true,
    refused_changes: [],
    refused_total: 0,
    ...extra,
  };
}

const squash = (t: string) => t.replace(/\s+/g, " ").trim();

function reviewOf(backend: FakeBackend, id: unknown): DocumentReview_Serialize {
  const r = backend.reviews[id as string];
  if (!r) throw { code: "not_found", message: "no such item in your organization" };
  return r;
}

export function doc(name: string, id: string, extra: Partial<Document> = {}): Document {
  return {
    id,
    name,
    media_type: "pdf",
    size: 123_456,
    content_hash: "a".repeat(64),
    created_by: "0193a0b4-0000-7000-8000-0000000000aa",
    created_at: "2026-11-30T09:00:00Z",
    deleted_at: null,
    ...extra,
  };
}

function sessionOf(backend: FakeBackend) {
  return {
    org_id: "0193a0b4-0000-7000-8000-000000000001",
    org_name: backend.orgName,
    user_id: "0193a0b4-0000-7000-8000-0000000000aa",
    user_name: "Ann",
    role: backend.role ?? "owner",
    data_dir: "/tmp/pactwise-data",
  };
}

export function installBackend(initial: Partial<FakeBackend> = {}): FakeBackend {
  const backend: FakeBackend = {
    docs: [],
    trash: [],
    calls: [],
    queue: [],
    reviews: {},
    types: {},
    pages: {},
    vendors: [],
    thresholds: {
      ocr_min_confidence: 0.8,
      classification_min_confidence: 0.6,
      critical_min_confidence: 0.7,
      max_not_evaluated_share: 0.3,
    },
    ownNames: [],
    savePath: null,
    user: "Ann",
    reports: {},
    orgName: "Acme Legal",
    sync: notSignedIn,
    approvals: [],
    members: { members: [], synced: false, can_manage: false, can_manage_owners: false, offline_reason: null },
    orgs: [{ org_id: "0193a0b4-0000-7000-8000-000000000001", name: "Acme Legal", role: "owner", current: true }],
    ...initial,
  };
  mockWindows("main");
  mockIPC((cmd, args) => {
    backend.calls.push({ cmd, args });
    const a = (args ?? {}) as Record<string, unknown>;
    switch (cmd) {
      case "plugin:event|listen":
        return 1;
      case "plugin:event|unlisten":
        return null;
      case "session_info":
        return sessionOf(backend);
      case "update_check":
        return {
          current_version: "0.1.0",
          state: "not_set_up",
          available: null,
          message: "Updates are not set up for this installation.",
        };
      case "voyage_status":
        return backend.voyage ?? { configured: false, summary: "The model on this computer (no Voyage key is stored)." };
      case "set_voyage_key":
        backend.voyage = { configured: true, summary: "Voyage (voyage-law-2) reads passages and queries." };
        return backend.voyage;
      case "clear_voyage_key":
        backend.voyage = { configured: false, summary: "The model on this computer (no Voyage key is stored)." };
        return backend.voyage;
      case "crash_reports":
        return backend.crashReports ?? [];
      case "dismiss_crash_reports":
        backend.crashReports = [];
        return null;
      case "model_availability":
        return { availability: backend.model ?? "no_api_key", endpoint: backend.modelEndpoint ?? null };
      case "agent_settings":
        return { settings: [], may_change: false };
      case "memories":
      case "agent_notices":
      case "agent_requests":
        return [];
      case "approvals_inbox":
        return backend.approvals;
      case "plugin:notification|is_permission_granted":
        return true;
      case "plugin:notification|notify":
        return null;
      case "set_api_key":
        if (backend.role && !["owner", "admin"].includes(backend.role)) {
          throw { code: "forbidden", message: "only an owner or an admin can set or remove the API key" };
        }
        backend.model = "ready";
        return "ready";
      case "clear_api_key":
        if (backend.role && !["owner", "admin"].includes(backend.role)) {
          throw { code: "forbidden", message: "only an owner or an admin can set or remove the API key" };
        }
        backend.model = "no_api_key";
        return "no_api_key";
      case "list_documents":
        return (a.query as { deleted: boolean }).deleted ? backend.trash : backend.docs;
      case "import_documents": {
        const paths = a.paths as string[];
        return backend.importReport ? backend.importReport(paths) : { imported: [], failed: [] };
      }
      case "delete_document": {
        const i = backend.docs.findIndex((d) => d.id === a.id);
        if (i < 0) throw { code: "not_found", message: "no such item in your organization" };
        const [gone] = backend.docs.splice(i, 1);
        const deleted = { ...gone, deleted_at: "2026-11-30T10:00:00Z" };
        backend.trash.push(deleted);
        return deleted;
      }
      case "restore_document": {
        const i = backend.trash.findIndex((d) => d.id === a.id);
        const [back] = backend.trash.splice(i, 1);
        const restored = { ...back, deleted_at: null };
        backend.docs.push(restored);
        return restored;
      }
      case "review_queue":
        return backend.queue;
      case "document_review":
        return structuredClone(reviewOf(backend, a.id));
      case "rerun_pipeline":
        return structuredClone(reviewOf(backend, a.id));
      case "dry_run_pipeline":
        if (backend.dryRun) return backend.dryRun(a.id as string);
        return { ...structuredClone(reviewOf(backend, a.id)), mode: "dry_run", planned_model_calls: 0 };
      case "checklist_type": {
        const t = backend.types[a.typeId as string];
        if (!t) throw { code: "not_found", message: `no contract type "${a.typeId}" in the catalog` };
        return t;
      }
      case "page_layout": {
        const page = backend.pages[a.id as string]?.[(a.page as number) - 1];
        if (!page) throw { code: "not_found", message: `the document has no page ${a.page}` };
        return page;
      }
      case "correct_item": {
        const review = reviewOf(backend, a.id);
        const input = a.input as {
          item_id: string;
          confirm: boolean;
          status: string | null;
          quote: { text: string; page: number } | null;
          note: string | null;
          acknowledge_warnings: boolean;
        };
        if (review.finalized_at) throw { code: "conflict", message: "this review is finalized; reopen it to change an item" };
        const item = review.items.find((i) => i.id === input.item_id);
        if (!item) throw { code: "invalid_input", message: "not an item of this checklist" };
        // Like the backend: a doubtful quote (here, one on page 1's heading line) is kept only knowingly.
        const doubtful = input.confirm ? item.warnings.length > 0 : /^MUTUAL$/.test(input.quote?.text ?? "");
        if (doubtful && !input.acknowledge_warnings) {
          throw {
            code: "quote_needs_check",
            message: "Check the quote before keeping it: the quote is only a section's heading; quote the words of the clause under it",
          };
        }
        if (!input.confirm) {
          if (input.quote) {
            const page = backend.pages[a.id as string]?.[input.quote.page - 1];
            if (!page || !squash(page.text).includes(squash(input.quote.text))) {
              throw {
                code: "invalid_input",
                message: `the selected text was not found on page ${input.quote.page}; select the supporting words on the page itself`,
              };
            }
          }
          item.status = input.status as typeof item.status;
          item.quote = input.quote?.text ?? null;
          item.page = input.quote?.page ?? null;
          // Like the backend, it sends where the verified quote stands on its page.
          const page = input.quote ? backend.pages[a.id as string]?.[input.quote.page - 1] : undefined;
          item.quote_span = input.quote && page ? spanOn(page.text, input.quote.text) : null;
          item.verified = input.quote !== null;
        }
        item.method = "person";
        item.note = input.note;
        item.confirmed_by = backend.user;
        item.confirmed_at = "2026-11-30T10:00:00Z";
        return structuredClone(review);
      }
      case "finalize_review": {
        const review = reviewOf(backend, a.id);
        const type = backend.types[review.type?.id ?? ""];
        const open = (type?.items ?? []).filter(
          (i) => i.risk === "critical" && !review.items.some((r) => r.id === i.id && r.method === "person"),
        );
        if (open.length) {
          throw { code: "review_incomplete", message: `${open.length} critical item(s) still need a person: ${open.map((i) => i.id).join(", ")}` };
        }
        const input = a.input as { vendor_id: string | null; new_vendor_name: string | null };
        if (input.new_vendor_name) backend.vendors.push({ id: `v${backend.vendors.length + 1}`, name: input.new_vendor_name });
        review.vendor = input.vendor_id ? (backend.vendors.find((v) => v.id === input.vendor_id)?.name ?? null) : input.new_vendor_name;
        review.vendor_link = review.vendor ? "person" : null;
        review.finalized_by = backend.user;
        review.finalized_at = "2026-11-30T11:00:00Z";
        return structuredClone(review);
      }
      case "reopen_review": {
        const review = reviewOf(backend, a.id);
        if (!review.finalized_at) throw { code: "conflict", message: "this review is not finalized, so there is nothing to reopen" };
        if (!(a.reason as string).trim()) throw { code: "invalid_input", message: "say why the review is reopened" };
        review.finalized_at = null;
        review.finalized_by = null;
        return structuredClone(review);
      }
      case "export_review": {
        if (!reviewOf(backend, a.id).finalized_at) throw { code: "review_incomplete", message: "finalize the review before exporting it" };
        return { path: a.path, bytes: 20_480, format: a.format };
      }
      case "vendors":
        return backend.vendors;
      case "review_thresholds":
        return backend.thresholds;
      case "set_review_threshold": {
        const name = a.name as keyof Thresholds_Serialize;
        const value = a.value as number;
        if (!(name in backend.thresholds)) throw { code: "invalid_input", message: `unknown threshold ${name}` };
        if (!(value >= 0 && value <= 1)) throw { code: "invalid_input", message: `${name} must be between 0 and 1` };
        backend.thresholds = { ...backend.thresholds, [name]: value };
        return backend.thresholds;
      }
      case "own_names":
        return backend.ownNames;
      case "first_run":
        return { needed: backend.firstRunNeeded ?? false, organization_name: backend.orgName };
      case "complete_first_run": {
        const input = a.input as { organization_name: string; own_names: string[] };
        if (!backend.firstRunNeeded) {
          throw { code: "conflict", message: "this installation is already set up; change the organization's names in Settings" };
        }
        if (input.organization_name.trim() === "") {
          throw { code: "invalid_input", message: "Type your organization's name, as it appears in your contracts." };
        }
        backend.orgName = input.organization_name.trim();
        backend.ownNames = [backend.orgName, ...input.own_names.map((n) => n.trim()).filter(Boolean)];
        backend.firstRunNeeded = false;
        return sessionOf(backend);
      }
      case "explore_demo":
        backend.orgName = "Northwind Traders (demo)";
        backend.firstRunNeeded = false;
        return sessionOf(backend);
      case "set_own_names":
        backend.ownNames = (a.names as string[]).map((n) => n.trim()).filter(Boolean);
        return backend.ownNames;
      case "plugin:dialog|save":
        return backend.savePath;
      case "document_reports":
        return structuredClone(backend.reports[a.document as string] ?? []);
      case "start_report": {
        if (!backend.runReport) throw { code: "model_unavailable", message: "no model" };
        const view = backend.runReport(a.document as string);
        backend.reports[a.document as string] = [view, ...(backend.reports[a.document as string] ?? [])];
        return structuredClone(view);
      }
      case "report": {
        const view = Object.values(backend.reports).flat().find((r) => r.run === a.run);
        if (!view) throw { code: "not_found", message: "no such report in your organization" };
        return structuredClone(view);
      }
      case "sign_off_report": {
        const view = Object.values(backend.reports).flat().find((r) => r.run === a.run);
        if (!view) throw { code: "not_found", message: "no such report in your organization" };
        if (!view.approval) throw { code: "invalid_input", message: "this report is not waiting for a sign-off" };
        view.approval = null;
        view.status = a.decision === "approve" ? "signed_off" : "sign_off_refused";
        view.sign_off = { decision: a.decision as "approve" | "reject", by: backend.user, at: "2026-11-30T12:00:00Z", reason: a.reason as string };
        return structuredClone(view);
      }
      case "export_report": {
        const view = Object.values(backend.reports).flat().find((r) => r.run === a.run);
        if (view?.status !== "signed_off") throw { code: "review_incomplete", message: "sign the report off before exporting it" };
        return { path: a.path, bytes: 10_240, format: a.format };
      }
      case "prep_list":
        return [];
      case "sync_status":
      case "sync_retry":
        return backend.sync;
      case "sync_sign_in": {
        const input = a.input as { server: string; org: string; email: string; password: string };
        if (input.password !== "right-password") {
          throw {
            code: "unauthenticated",
            message: "the sync service did not accept this sign-in; check the organization, the email and the password",
          };
        }
        backend.firstRunNeeded = false;
        backend.orgName = "Alpha LLP";
        backend.sync = syncedStatus({
          phase: "not_synced_yet",
          last_success: null,
          account: { server: input.server, org_slug: input.org, email: input.email, device_id: "d-2" },
        });
        return backend.sync;
      }
      case "sync_sign_out":
        backend.sync = notSignedIn;
        return backend.sync;
      case "sync_sign_in_with_code": {
        const input = a.input as { server: string; org: string; email: string; code: string; password: string };
        if (input.code !== "ABCD-EFGH-JKLM-NPQR") {
          throw { code: "unauthenticated", message: "the sync service did not accept this code: it is wrong, used already or expired" };
        }
        backend.orgName = "Alpha LLP";
        backend.sync = syncedStatus({
          phase: "not_synced_yet",
          last_success: null,
          account: { server: input.server, org_slug: input.org, email: input.email, device_id: "d-3" },
        });
        return backend.sync;
      }
      case "list_members":
        return backend.members;
      case "add_member": {
        const input = a.input as { email: string; display_name: string; role: string };
        if (backend.members.members.some((m) => m.email === input.email)) {
          throw { code: "invalid_input", message: "a member with this email already belongs to the organization" };
        }
        const member = {
          user_id: `0193a0b4-0000-7000-8000-${String(backend.members.members.length + 100).padStart(12, "0")}`,
          display_name: input.display_name,
          email: input.email,
          role: input.role as MembersView["members"][number]["role"],
          is_you: false,
          code_open_until: "2026-12-07T10:00:00Z",
        };
        backend.members = { ...backend.members, members: [...backend.members.members, member] };
        return { member, code: "WXYZ-2345-ABCD-EFGH", code_expires_at: "2026-12-07T10:00:00Z" };
      }
      case "change_member_role": {
        if (a.role === "owner" && !backend.members.can_manage_owners) {
          throw { code: "forbidden", message: "your role (admin) cannot make, change or remove an owner; ask an owner of the organization" };
        }
        const members = backend.members.members.map((m) => (m.user_id === a.member ? { ...m, role: a.role as typeof m.role } : m));
        backend.members = { ...backend.members, members };
        return members.find((m) => m.user_id === a.member);
      }
      case "remove_member":
        backend.members = { ...backend.members, members: backend.members.members.filter((m) => m.user_id !== a.member) };
        return null;
      case "new_member_code": {
        const member = backend.members.members.find((m) => m.user_id === a.member);
        return { member, code: "NEWC-ODE2-3456-7890", code_expires_at: "2026-12-08T10:00:00Z" };
      }
      case "list_organizations":
        return backend.orgs;
      case "switch_organization": {
        backend.orgs = backend.orgs.map((o) => ({ ...o, current: o.org_id === a.org }));
        backend.orgName = backend.orgs.find((o) => o.current)?.name ?? backend.orgName;
        return {
          org_id: a.org,
          org_name: backend.orgName,
          user_id: "0193a0b4-0000-7000-8000-0000000000aa",
          user_name: "Ann",
          role: "owner",
          data_dir: "/tmp/pactwise-data",
        };
      }
      case "bring_over_documents":
        return { brought: 2, already_there: 0, corrections: 3, failed: [] };
      case "contract_list":
        return { items: [], total: 0, offset: 0 };
      case "contract_facets":
        return { types: [], governing_laws: [], counterparties: [], risks: [] };
      case "usage_report":
        return {
          scope: "organization",
          month: "2026-11",
          current_month: "2026-11",
          months: [{ month: "2026-11", calls: 0, cost_micros: 0, input_tokens: 0, output_tokens: 0, budget_micros: null, remaining_micros: null }],
          by_person: [],
          by_feature: [],
          today: null,
        };
      case "audit_choices":
        return { actions: [], people: [] };
      case "audit_page":
        return { lines: [], next: null };
      case "assistant_history":
        return { answers: [], next: null };
      case "stage_log":
        return [];
      case "source_list":
        return [];
      default:
        throw new Error(`unexpected command ${cmd}`);
    }
  }, { shouldMockEvents: true });
  return backend;
}

export function callsOf(backend: FakeBackend, cmd: string) {
  return backend.calls.filter((c) => c.cmd === cmd);
}

/** A backend holding one document in the queue with its review, type and pages (tests/review-fixture.ts). */
export function installReviewBackend(extra: Partial<FakeBackend> = {}): FakeBackend {
  const f = reviewFixture();
  return installBackend({
    queue: [f.entry],
    reviews: { [f.id]: f.review },
    types: { [f.type.id]: f.type },
    pages: { [f.id]: f.pages },
    ...extra,
  });
}
