import { describe, expect, it, vi } from "vitest";
import { fireEvent, render, screen, waitFor } from "@testing-library/svelte";
import Documents from "../src/views/Documents.svelte";
import { callsOf, doc, installBackend } from "./backend";

const A = "0193a0b4-0000-7000-8000-00000000000a";
const B = "0193a0b4-0000-7000-8000-00000000000b";

describe("Documents view", () => {
  it("shows how to import when there are no documents", async () => {
    installBackend();
    render(Documents);
    const empty = await screen.findByTestId("empty");
    expect(empty.textContent).toContain("No documents yet");
    expect(empty.textContent).toContain("Ctrl");
  });

  it("lists the organization's documents with type and size", async () => {
    installBackend({ docs: [doc("lease.pdf", A), doc("nda.docx", B, { media_type: "docx", size: 999 })] });
    render(Documents);
    const rows = await screen.findAllByTestId("document-row");
    expect(rows.map((r) => r.querySelector("td.name")?.textContent)).toEqual(["lease.pdf", "nda.docx"]);
    expect(rows[0].textContent).toContain("123.5 KB");
    expect(rows[1].textContent).toContain("Word");
    expect(rows[1].textContent).toContain("999 B");
  });

  it("imports a typed path and shows each refused file with its code and message", async () => {
    const backend = installBackend();
    backend.importReport = (paths) => ({
      imported: [],
      failed: paths.map((file) => ({
        file,
        error: { code: "file_empty", message: `${file} is empty (0 bytes); check that it was saved completely` },
      })),
    });
    render(Documents);
    await screen.findByTestId("empty");
    const field = screen.getByTestId("import-path") as HTMLInputElement;
    await fireEvent.input(field, { target: { value: "/home/ann/empty.pdf" } });
    await fireEvent.click(screen.getByTestId("import-path-submit"));
    const failures = await screen.findByTestId("import-failures");
    expect(callsOf(backend, "import_documents")[0].args).toEqual({ paths: ["/home/ann/empty.pdf"] });
    expect(failures.textContent).toContain("file_empty");
    expect(failures.textContent).toContain("/home/ann/empty.pdf is empty");
    expect(field.value).toBe("/home/ann/empty.pdf");
  });

  it("j and k move the selection and Delete moves the selected document to the trash", async () => {
    const backend = installBackend({ docs: [doc("lease.pdf", A), doc("nda.pdf", B)] });
    render(Documents);
    const rows = await screen.findAllByTestId("document-row");
    expect(rows[0].getAttribute("aria-selected")).toBe("true");
    await fireEvent.keyDown(window, { key: "j" });
    await waitFor(() => expect(screen.getAllByTestId("document-row")[1].getAttribute("aria-selected")).toBe("true"));
    await fireEvent.keyDown(window, { key: "k" });
    await fireEvent.keyDown(window, { key: "j" });
    await fireEvent.keyDown(window, { key: "Delete" });
    await waitFor(() => expect(callsOf(backend, "delete_document")).toHaveLength(1));
    expect(callsOf(backend, "delete_document")[0].args).toEqual({ id: B });
    await waitFor(() => expect(screen.getAllByTestId("document-row")).toHaveLength(1));
    expect((await screen.findByTestId("notice")).textContent).toContain("Moved “nda.pdf” to the trash");
  });

  it("t shows the trash and r restores the selected document", async () => {
    const backend = installBackend({ trash: [doc("old.pdf", A, { deleted_at: "2026-11-29T09:00:00Z" })] });
    render(Documents);
    await screen.findByTestId("empty");
    await fireEvent.keyDown(window, { key: "t" });
    await screen.findAllByTestId("document-row");
    await fireEvent.keyDown(window, { key: "r" });
    await waitFor(() => expect(callsOf(backend, "restore_document")).toHaveLength(1));
    expect(callsOf(backend, "restore_document")[0].args).toEqual({ id: A });
  });

  it("typing in the path field does not trigger shortcuts", async () => {
    const backend = installBackend({ docs: [doc("lease.pdf", A)] });
    render(Documents);
    await screen.findAllByTestId("document-row");
    const field = screen.getByTestId("import-path");
    await fireEvent.keyDown(field, { key: "Delete" });
    await fireEvent.keyDown(field, { key: "t" });
    expect(callsOf(backend, "delete_document")).toHaveLength(0);
    expect(callsOf(backend, "list_documents")).toHaveLength(1);
  });

  it("Enter opens the selected document's review", async () => {
    installBackend({ docs: [doc("lease.pdf", A), doc("nda.pdf", B)] });
    const onopen = vi.fn();
    render(Documents, { onopen });
    await screen.findAllByTestId("document-row");
    await fireEvent.keyDown(window, { key: "j" });
    await fireEvent.keyDown(window, { key: "Enter" });
    expect(onopen).toHaveBeenCalledWith(B, "nda.pdf");
  });
});
