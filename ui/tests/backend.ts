// A fake backend at the Tauri IPC level (the real bindings and @tauri-apps/api run unchanged above it).
import { mockIPC, mockWindows } from "@tauri-apps/api/mocks";
import type { Document, ImportReport } from "../src/lib/bindings";

export interface FakeBackend {
  docs: Document[];
  trash: Document[];
  calls: { cmd: string; args: unknown }[];
  importReport?: (paths: string[]) => ImportReport;
  model?: string;
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
  const backend: FakeBackend = { docs: [], trash: [], calls: [], ...initial };
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
      default:
        throw new Error(`unexpected command ${cmd}`);
    }
  });
  return backend;
}

export function callsOf(backend: FakeBackend, cmd: string) {
  return backend.calls.filter((c) => c.cmd === cmd);
}
