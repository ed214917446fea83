import { describe, expect, it } from "vitest";
import { fireEvent, render, screen, waitFor, within } from "@testing-library/svelte";
import { mockIPC, mockWindows } from "@tauri-apps/api/mocks";
import Tenders from "../src/views/Tenders.svelte";
import { cellKey, cellProblem, exportName } from "../src/lib/tenders";

type Tender = Record<string, unknown>;

function tender(id: string, title: string, extra: Partial<Tender> = {}): Tender {
  return {
    id,
    title,
    status: "Open",
    questions_close: "2027-03-08T17:00:00Z",
    submissions_close: "2027-03-10T17:00:00Z",
    invited: 0,
    joined: 0,
    submissions: 0,
    submissions_sealed: "sealed until opened",
    requested_by: "ann@alpha.example",
    opening_key_holder: "ann-laptop (signed in as ann@alpha.example)",
    key_here: true,
    can_approve: false,
    can_invite: true,
    can_extend: true,
    can_open_technical: false,
    can_score: false,
    can_lock: false,
    can_open_price: false,
    can_award: false,
    awarded: false,
    ...extra,
  };
}

const ACME = "11111111-1111-4111-8111-111111111111";
const GLOBEX = "22222222-2222-4222-8222-222222222222";

/** A fake backend: an open tender (Fleet telematics) and a closed one with two sealed submissions. */
function install() {
  const calls: { cmd: string; args: Record<string, unknown> }[] = [];
  let tenders = [
    tender("t1", "Fleet telematics"),
    tender("t2", "Office cleaning", { status: "Closed", submissions: 2, invited: 2, joined: 2, can_invite: false, can_open_technical: true }),
  ];
  mockWindows("main");
  mockIPC((cmd, args) => {
    const a = (args ?? {}) as Record<string, unknown>;
    calls.push({ cmd, args: a });
    switch (cmd) {
      case "source_list":
        return tenders;
      case "source_show":
        return tenders.find((t) => t.id === a.id);
      case "source_questions":
        return a.id === "t1" ? [{ id: "q1", question: "Is 60 s acceptable?", asked_by: "Acme", answer: null, answered_at: null }] : [];
      case "source_invite": {
        const input = a.input as { vendor_name: string; email: string };
        tenders = tenders.map((t) => (t.id === a.id ? { ...t, invited: 1 } : t));
        return { vendor_name: input.vendor_name, email: input.email, link: "http://127.0.0.1:8787/source/invitation#pwi_abc" };
      }
      case "source_open_technical": {
        tenders = tenders.map((t) => (t.id === a.id ? { ...t, status: "Technical envelopes open", can_open_technical: false, can_score: true, can_lock: true } : t));
        return {
          tender: tenders.find((t) => t.id === a.id),
          criteria: [{ id: "C1", name: "Tracking", description: "Tracking quality", weight: "100%" }],
          submissions: [
            { vendor: "Acme", vendor_account: ACME, submission: 2, answers: [{ code: "R-01", requirement: "EU hosting", mandatory: true, answer: "Frankfurt" }], files: [{ name: "offer.pdf", inspection: "PDF, 2 pages", bytes: 900 }] },
            { vendor: "Globex", vendor_account: GLOBEX, submission: 1, answers: [], files: [] },
          ],
          max_points: 10,
        };
      }
      case "source_score":
        return null;
      default:
        throw new Error(`unexpected command ${cmd}`);
    }
  });
  return { calls };
}

describe("Tenders area", () => {
  it("lists tenders with status in words and counts, invites a vendor and shows the link with a Copy button", async () => {
    const { calls } = install();
    render(Tenders);
    await screen.findByText("Office cleaning");
    const detail = await screen.findByRole("region", { name: "Tender" });
    await waitFor(() => expect(detail.textContent).toContain("Is 60 s acceptable?"));
    expect(detail.textContent).toContain("Open");
    expect(detail.textContent).not.toMatch(/technical_opened|awaiting_approval|can_invite/);
    const form = within(detail).getByRole("form", { name: "Invite a vendor" });
    await fireEvent.input(within(form).getByTestId("invite-name"), { target: { value: "Acme Telematics Ltd" } });
    await fireEvent.input(within(form).getByTestId("invite-email"), { target: { value: "bids@acme.example" } });
    await fireEvent.click(within(form).getByRole("button", { name: "Make the invitation link" }));
    const link = await screen.findByTestId("invite-link");
    expect((within(link).getByRole("textbox", { name: "Invitation link" }) as HTMLInputElement).value).toBe(
      "http://127.0.0.1:8787/source/invitation#pwi_abc",
    );
    expect(within(link).getByRole("button", { name: "Copy" })).toBeTruthy();
    expect(calls.find((c) => c.cmd === "source_invite")?.args).toEqual({
      id: "t1",
      input: { vendor_id: null, vendor_name: "Acme Telematics Ltd", email: "bids@acme.example" },
    });
    await waitFor(() => expect(screen.getByTestId("tender-invited").textContent).toBe("1"));
  });

  it("moves with j, opens the technical envelopes with o and records a score from the keyboard with its reason", async () => {
    const { calls } = install();
    render(Tenders);
    await screen.findByText("Office cleaning");
    await fireEvent.keyDown(window, { key: "j" });
    await waitFor(() => expect(screen.getByRole("heading", { level: 2 }).textContent).toContain("Office cleaning"));
    expect(screen.getByTestId("tender-submissions").textContent).toContain("2");
    await fireEvent.keyDown(window, { key: "o" });
    const grid = await screen.findByTestId("score-grid");
    expect(grid.textContent).toContain("Tracking (100%)");
    const points = within(grid).getByRole("textbox", { name: "Points for Acme on Tracking" });
    const reason = within(grid).getByRole("textbox", { name: "Reason for Acme on Tracking" });
    // Without a reason nothing is sent.
    await fireEvent.input(points, { target: { value: "8" } });
    await fireEvent.keyDown(points, { key: "Enter" });
    expect((await screen.findByTestId("tender-notice")).textContent).toContain("Give a reason");
    expect(calls.some((c) => c.cmd === "source_score")).toBe(false);
    await fireEvent.input(reason, { target: { value: "Meets R-02" } });
    await fireEvent.keyDown(reason, { key: "Enter" });
    await waitFor(() => expect(screen.getByTestId("tender-notice").textContent).toBe("Score recorded."));
    expect(calls.find((c) => c.cmd === "source_score")?.args).toEqual({
      id: "t2",
      input: { vendor_account: ACME, criterion_id: "C1", points: 8, reason: "Meets R-02" },
    });
    expect(screen.getByText(/offer\.pdf \(PDF, 2 pages\)/)).toBeTruthy();
  });
});

describe("tender helpers", () => {
  it("checks a score's cell before sending and names exports from the title", () => {
    expect(cellProblem({ points: "11", reason: "x", saved: false }, 10)).toContain("0 to 10");
    expect(cellProblem({ points: "7", reason: " ", saved: false }, 10)).toContain("reason");
    expect(cellProblem({ points: "7", reason: "ok", saved: false }, 10)).toBeNull();
    expect(cellKey("a", "C1")).toBe("a|C1");
    expect(exportName("Fleet telematics 2027", "ocds.json")).toBe("fleet-telematics-2027-ocds.json");
  });
});
