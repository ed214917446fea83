import { describe, expect, it } from "vitest";
import { fireEvent, render, screen, waitFor, within } from "@testing-library/svelte";
import { mockIPC, mockWindows } from "@tauri-apps/api/mocks";
import Vendors from "../src/views/Vendors.svelte";
import type { VendorDetail_Serialize, VendorSummary_Serialize } from "../src/lib/bindings";
import { identifierText, matchesVendor } from "../src/lib/vendors";

function vendor(id: string, name: string, extra: Partial<VendorSummary_Serialize> = {}): VendorSummary_Serialize {
  return {
    id,
    name,
    aliases: [],
    identifiers: [],
    status: "prospective",
    status_label: "Prospective",
    contracts: 0,
    documents: 0,
    possible_duplicate: false,
    merged_into: null,
    ...extra,
  };
}

/** A fake backend: Acme and its twin ACME Incorporated (duplicates), and Initech. */
function install() {
  const calls: { cmd: string; args: Record<string, unknown> }[] = [];
  let vendors: VendorSummary_Serialize[] = [
    vendor("v1", "Acme, Inc.", { possible_duplicate: true, contracts: 2, identifiers: [{ kind: "tax_id", value: "US-1" }] }),
    vendor("v2", "ACME Incorporated", { possible_duplicate: true, contracts: 1 }),
    vendor("v3", "Initech", { status: "active", status_label: "Active" }),
  ];
  const detail = (id: string): VendorDetail_Serialize => {
    const v = vendors.find((x) => x.id === id)!;
    const dups = v.possible_duplicate ? vendors.filter((x) => x.possible_duplicate && x.id !== id) : [];
    return {
      vendor: v,
      documents: id === "v1" ? [{ document: "0193a0b4-0000-7000-8000-000000000001", name: "MSA.pdf", type_name: "Service agreement", finalized: true, linked_by: "a person", expires_on: "2029-08-01" }] : [],
      runs: [],
      duplicates: dups,
      can_onboard: v.status === "prospective" || v.status === "blocked",
      onboard_refusal: v.status === "active" ? "this vendor is already active; there is nothing to onboard" : null,
      created_at: "2026-11-30T09:00:00Z",
    };
  };
  mockWindows("main");
  mockIPC((cmd, args) => {
    const a = (args ?? {}) as Record<string, unknown>;
    calls.push({ cmd, args: a });
    switch (cmd) {
      case "vendor_list":
        return a.includeMerged ? vendors : vendors.filter((v) => v.status !== "merged");
      case "vendor_detail":
        return detail(String(a.id));
      case "vendor_merge": {
        const kept = vendors.find((v) => v.id === a.kept)!;
        const merged = vendors.find((v) => v.id === a.merged)!;
        vendors = vendors.map((v) =>
          v.id === merged.id
            ? { ...v, status: "merged", status_label: "Merged", merged_into: kept.name, possible_duplicate: false }
            : v.id === kept.id
              ? { ...v, contracts: kept.contracts + merged.contracts, possible_duplicate: false }
              : v,
        );
        return {
          kept: vendors.find((v) => v.id === kept.id),
          merged: vendors.find((v) => v.id === merged.id),
          contracts_moved: merged.contracts,
          message: `${merged.name} was merged into ${kept.name}; 1 contract moved with it.`,
        };
      }
      case "vendor_set_status": {
        if (!String(a.reason).trim()) throw { code: "invalid_input", message: "say why the vendor's status changes" };
        vendors = vendors.map((v) => (v.id === a.id ? { ...v, status: a.status as never, status_label: "Blocked" } : v));
        return vendors.find((v) => v.id === a.id);
      }
      case "start_vendor_onboarding":
        return { id: "run-1", status: "waiting" };
      case "vendor_create": {
        const input = a.input as { name: string };
        const v = vendor(`v${vendors.length + 1}`, input.name);
        vendors = [...vendors, v];
        return v;
      }
      case "vendor_duplicates":
        return [{ vendors: vendors.filter((v) => v.possible_duplicate), because: ["the name \u201cacme\u201d"] }];
      default:
        throw new Error(`unexpected command ${cmd}`);
    }
  });
  return { calls };
}

describe("Vendors area", () => {
  it("lists vendors in words, moves with j/k and shows the selected vendor with its contracts", async () => {
    install();
    render(Vendors);
    await screen.findByText("Initech");
    const detail = await screen.findByRole("region", { name: "Vendor" });
    await waitFor(() => expect(detail.textContent).toContain("MSA.pdf"));
    expect(detail.textContent).toContain("Tax id: US-1");
    expect(detail.textContent).not.toContain("tax_id");
    expect(detail.textContent).toContain("Looks like: ACME Incorporated");
    await fireEvent.keyDown(window, { key: "j" });
    await waitFor(() => expect(screen.getByRole("heading", { level: 2 }).textContent).toContain("ACME Incorporated"));
    await fireEvent.keyDown(window, { key: "j" });
    await waitFor(() => expect(screen.getByRole("heading", { level: 2 }).textContent).toContain("Initech"));
    // An active vendor is not onboarded again: o says why.
    await fireEvent.keyDown(window, { key: "o" });
    expect((await screen.findByTestId("vendor-notice")).textContent).toContain("already active");
  });

  it("merges a duplicate a person confirms with the keyboard: m, choose what to keep, Merge; the record stays as merged", async () => {
    const { calls } = install();
    render(Vendors);
    await screen.findByText("Initech");
    await waitFor(() => expect(screen.getByRole("heading", { level: 2 }).textContent).toContain("Acme, Inc."));
    await fireEvent.keyDown(window, { key: "m" });
    const dialog = await screen.findByRole("dialog", { name: "Merge duplicates" });
    const keep = within(dialog).getByRole("radio", { name: /Acme, Inc\./ }) as HTMLInputElement;
    expect(keep.checked).toBe(true);
    expect((within(dialog).getByRole("checkbox", { name: /ACME Incorporated/ }) as HTMLInputElement).checked).toBe(true);
    await fireEvent.click(within(dialog).getByRole("button", { name: "Merge" }));
    expect((await screen.findByTestId("vendor-notice")).textContent).toContain("ACME Incorporated was merged into Acme, Inc.");
    expect(calls.find((c) => c.cmd === "vendor_merge")?.args).toEqual({ kept: "v1", merged: "v2" });
    await waitFor(() => expect(screen.queryByText("ACME Incorporated")).toBeNull());
    // Shown again with merged records.
    await fireEvent.click(screen.getByRole("checkbox", { name: "Show merged" }));
    expect(await screen.findByText(/merged into Acme, Inc\./)).toBeTruthy();
  });

  it("Escape closes a dialog without a change, and a status needs a reason", async () => {
    const { calls } = install();
    render(Vendors);
    await screen.findByText("Initech");
    await waitFor(() => expect(screen.getByRole("heading", { level: 2 }).textContent).toContain("Acme, Inc."));
    await fireEvent.keyDown(window, { key: "s" });
    await screen.findByRole("dialog", { name: "Set status" });
    await fireEvent.keyDown(window, { key: "Escape" });
    await waitFor(() => expect(screen.queryByRole("dialog")).toBeNull());
    expect(calls.some((c) => c.cmd === "vendor_set_status")).toBe(false);
    await fireEvent.keyDown(window, { key: "s" });
    const dialog = await screen.findByRole("dialog", { name: "Set status" });
    await fireEvent.click(within(dialog).getByRole("button", { name: "Set status" }));
    expect((await screen.findByTestId("vendor-notice")).textContent).toContain("say why");
  });

  it("starts onboarding from a vendor with the documents it sent", async () => {
    const { calls } = install();
    render(Vendors);
    await screen.findByText("Initech");
    await waitFor(() => expect(screen.getByRole("heading", { level: 2 }).textContent).toContain("Acme, Inc."));
    await fireEvent.keyDown(window, { key: "o" });
    const dialog = await screen.findByRole("dialog", { name: "Start onboarding" });
    await fireEvent.click(within(dialog).getByRole("checkbox", { name: "W-9 form" }));
    await fireEvent.click(within(dialog).getByRole("button", { name: "Start onboarding" }));
    expect((await screen.findByTestId("vendor-notice")).textContent).toContain("its approval is in the inbox");
    expect(calls.find((c) => c.cmd === "start_vendor_onboarding")?.args).toEqual({
      vendor: "v1",
      input: { documents: ["w9"], sanctions_hit: false },
    });
  });
});

describe("vendor helpers", () => {
  it("reads identifiers in words and finds vendors by any of their names", () => {
    expect(identifierText({ kind: "registration_number", value: "HRB 1" })).toBe("Registration number: HRB 1");
    const v = vendor("x", "Globex", { aliases: ["Globex Holdings"], identifiers: [{ kind: "tax_id", value: "GB-9" }] });
    expect(matchesVendor(v, "holdings")).toBe(true);
    expect(matchesVendor(v, "gb-9")).toBe(true);
    expect(matchesVendor(v, "initech")).toBe(false);
  });
});
