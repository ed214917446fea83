// A fake backend at the Tauri IPC level (the real bindings and @tauri-apps/api run unchanged above it).
import { mockIPC, mockWindows } from "@tauri-apps/api/mocks";
import type {
  ApprovalView,
  ContractType_Serialize,
  Document,
  DocumentReview_Serialize,
  ImportReport,
  PageLayout,
  QueueEntry_Serialize,
  Thresholds_Serialize,
  VendorEntry,
} from "../src/lib/bindings";
import { reviewFixture } from "./review-fixture";

export interface FakeBackend {
  docs: Document[];
  trash: Document[];
  calls: { cmd: string; args: unknown }[];
  importReport?: (paths: string[]) => ImportReport;
  model?: string;
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
  /** What approvals_inbox answers (the app's background look for new approvals). */
  approvals: ApprovalView[];
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
    approvals: [],
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
        return {
          org_id: "0193a0b4-0000-7000-8000-000000000001",
          org_name: "Acme Legal",
          user_id: "0193a0b4-0000-7000-8000-0000000000aa",
          user_name: "Ann",
          role: "owner",
          data_dir: "/tmp/pactwise-data",
        };
      case "model_availability":
        return backend.model ?? "no_api_key";
      case "approvals_inbox":
        return backend.approvals;
      case "plugin:notification|is_permission_granted":
        return true;
      case "plugin:notification|notify":
        return null;
      case "set_api_key":
        backend.model = "ready";
        return "ready";
      case "clear_api_key":
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
        const input = a.input as { item_id: string; confirm: boolean; status: string | null; quote: { text: string; page: number } | null; note: string | null };
        const item = review.items.find((i) => i.id === input.item_id);
        if (!item) throw { code: "invalid_input", message: "not an item of this checklist" };
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
      case "set_own_names":
        backend.ownNames = (a.names as string[]).map((n) => n.trim()).filter(Boolean);
        return backend.ownNames;
      case "plugin:dialog|save":
        return backend.savePath;
      default:
        throw new Error(`unexpected command ${cmd}`);
    }
  });
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
