import { describe, expect, it, vi } from "vitest";
import { fireEvent, render, screen, waitFor, within } from "@testing-library/svelte";
import { mockIPC, mockWindows } from "@tauri-apps/api/mocks";
import { emit } from "@tauri-apps/api/event";
import Contracts from "../src/views/Contracts.svelte";
import type { ContractDetail_Serialize, ContractQuery_Deserialize, ContractRow_Serialize, UpcomingDates_Serialize } from "../src/lib/bindings";
import { dateLabel, dueIn, pagesFor, queryOf, riskLabel, riskWhy, visibleRange, NO_CONTRACT_FILTERS, ROW_HEIGHT } from "../src/lib/contracts";

const ID = (n: number) => `0193a0b4-0000-7000-8000-${String(n).padStart(12, "0")}`;

function row(n: number, extra: Partial<ContractRow_Serialize> = {}): ContractRow_Serialize {
  return {
    document: ID(n),
    name: `Contract ${String(n).padStart(5, "0")}.pdf`,
    type_id: "license",
    type_name: "Software License Agreement",
    counterparty: n % 2 ? "Tailspin Software Ltd." : "Globex Inc.",
    governing_law: "England and Wales, United Kingdom",
    expires_on: "2029-08-01",
    notice_by: "2029-05-03",
    risk: "medium",
    red_flags: 0,
    critical_gaps: 1,
    vendor: "Tailspin Software",
    finalized_at: "2026-11-30T09:00:00Z",
    ...extra,
  };
}

function detailOf(r: ContractRow_Serialize): ContractDetail_Serialize {
  return {
    contract: r,
    fields: [
      {
        field: "expiration_date",
        label: "Expiration date",
        value: "1 August 2029 (computed: the effective date, 1 August 2026, plus 3 years)",
        quote: "This Agreement has an initial term of three (3) years from the date above",
        page: 1,
        span: { start: 120, end: 193 },
        confidence: 1,
      },
      { field: "governing_law", label: "Governing law", value: "England and Wales", quote: null, page: null, span: null, confidence: 0.3 },
    ],
    outcome: {
      risk: "medium",
      red_flags: [],
      critical: [
        {
          item_id: "license.grant.scope",
          question: "Is the scope of the licence stated",
          risk: "critical",
          status: "present",
          red_flags: [],
          confirmed_by: "Ann",
          confirmed_at: "2026-11-30T08:00:00Z",
          note: null,
        },
      ],
      confirmed: [],
      items: 24,
    },
    reports: [],
    runs: [],
    vendor_link: "person",
    finalized_by: "Ann",
    reminder: { remind_on: "2029-03-04", notice_by: "2029-05-03", started: false, run: null },
  };
}

interface Fake {
  queries: ContractQuery_Deserialize[];
  calls: { cmd: string; args: Record<string, unknown> }[];
}

/** A fake backend of `total` finalized contracts; a search or counterparty filter keeps every third one. */
function install(total: number, upcoming?: UpcomingDates_Serialize): Fake {
  const fake: Fake = { queries: [], calls: [] };
  mockWindows("main");
  mockIPC(
    (cmd, args) => {
    const a = (args ?? {}) as Record<string, unknown>;
    fake.calls.push({ cmd, args: a });
    switch (cmd) {
      case "contract_list": {
        const q = a.query as ContractQuery_Deserialize;
        fake.queries.push(q);
        const all = Array.from({ length: total }, (_, i) => i).filter((i) => (q.search || q.counterparty ? i % 3 === 0 : true));
        const page = all.slice(q.offset ?? 0, (q.offset ?? 0) + (q.limit ?? 100)).map((i) => row(i));
        return { items: page, total: all.length, offset: q.offset ?? 0 };
      }
      case "contract_facets":
        return {
          types: [{ value: "license", label: "Software License Agreement", count: total }],
          governing_laws: [{ value: "England and Wales, United Kingdom", label: "England and Wales, United Kingdom", count: total }],
          counterparties: [],
          risks: [],
        };
      case "contract_detail":
        return detailOf(row(Number(String(a.id).slice(-12))));
      case "upcoming_dates":
        return upcoming;
      case "start_contract_lifecycle":
        if (String(a.id) === ID(1)) throw { code: "not_found", message: "that contract is not among your organization's documents (it may have been deleted); choose another" };
        return { id: "run-1", status: "waiting" };
      case "export_contract_calendar":
        return { path: a.path, bytes: 812, events: 2 };
      case "plugin:dialog|save":
        return "/home/ann/contract-dates.ics";
      default:
        throw new Error(`unexpected command ${cmd}`);
    }
    },
    { shouldMockEvents: true },
  );
  return fake;
}

describe("Contracts helpers", () => {
  it("draws only the rows in view and asks for the pages that hold them", () => {
    expect(visibleRange(0, 340, 10_000, 0)).toEqual({ start: 0, end: 10 });
    expect(visibleRange(ROW_HEIGHT * 5000, 340, 10_000)).toEqual({ start: 4992, end: 5018 });
    expect(visibleRange(0, 340, 3)).toEqual({ start: 0, end: 3 });
    expect(pagesFor(95, 130)).toEqual([0, 100]);
  });

  it("speaks dates and risk in words and sends no empty filter", () => {
    expect(dateLabel("2029-05-03")).toBe("3 May 2029");
    expect(dateLabel(null)).toBe("—");
    expect(dueIn("2029-05-03", "2029-04-30")).toBe("in 3 days");
    expect(dueIn("2029-04-29", "2029-04-30")).toBe("yesterday");
    expect(riskLabel("high")).toBe("High risk");
    expect(riskLabel(null)).toBe("Not assessed");
    expect(riskWhy({ risk: "high", red_flags: 2, critical_gaps: 0 })).toBe("2 items carry red flags.");
    const q = queryOf({ ...NO_CONTRACT_FILTERS, search: "  ", law: "Delaware", expiringWithin: 90 }, 200);
    expect(q).toMatchObject({ search: null, governing_law: "Delaware", expiring_within_days: 90, notice_within_days: null, offset: 200 });
  });
});

describe("Contracts area", () => {
  it("keeps only visible rows in the DOM with 10,000 contracts and moves with j/k", async () => {
    install(10_000);
    render(Contracts, { today: "2026-11-30" });
    await waitFor(() => expect(screen.getByTestId("contracts-count").textContent).toContain("10,000 contracts"));
    const rows = await screen.findAllByTestId("contract-row");
    expect(rows.length).toBeLessThan(60);
    expect(rows[0].textContent).toContain("Contract 00000.pdf");
    expect(rows[0].textContent).toContain("Medium risk");
    expect(rows[0].textContent).not.toContain("medium");
    await fireEvent.keyDown(window, { key: "j" });
    await fireEvent.keyDown(window, { key: "ArrowDown" });
    await fireEvent.keyDown(window, { key: "k" });
    await waitFor(() => expect(screen.getAllByTestId("contract-row")[1].getAttribute("aria-selected")).toBe("true"));
  });

  it("/ focuses the search, typing filters on the backend, and a filter is sent in the backend's terms", async () => {
    const fake = install(30);
    render(Contracts, { today: "2026-11-30" });
    await screen.findAllByTestId("contract-row");
    await fireEvent.keyDown(window, { key: "/" });
    const search = screen.getByTestId("contracts-search");
    await waitFor(() => expect(document.activeElement).toBe(search));
    await fireEvent.input(search, { target: { value: "tailspin" } });
    await waitFor(() => expect(screen.getByTestId("contracts-count").textContent).toBe("10 contracts"));
    expect(fake.queries.at(-1)?.search).toBe("tailspin");
    await fireEvent.change(screen.getByTestId("contracts-expiring"), { target: { value: "90" } });
    await waitFor(() => expect(fake.queries.at(-1)?.expiring_within_days).toBe(90));
    await fireEvent.change(screen.getByTestId("contracts-law"), { target: { value: "England and Wales, United Kingdom" } });
    await waitFor(() => expect(fake.queries.at(-1)?.governing_law).toBe("England and Wales, United Kingdom"));
    const labels = Array.from(screen.getByTestId("contracts-risk").querySelectorAll("option")).map((o) => o.textContent);
    expect(labels).toEqual(["any", "High: red flags", "Medium: critical items missing", "Low"]);
  });

  it("Enter opens the detail, and clicking an extraction opens the contract at its verified quote", async () => {
    install(5);
    const onopen = vi.fn();
    render(Contracts, { today: "2026-11-30", onopen });
    await screen.findAllByTestId("contract-row");
    await fireEvent.keyDown(window, { key: "Enter" });
    const detail = screen.getByTestId("contract-detail");
    await waitFor(() => expect(detail.textContent).toContain("Expiration date"));
    expect(detail.textContent).toContain("Notice of non-renewal by: 3 May 2029");
    expect(screen.getByTestId("contract-reminder").textContent).toBe(
      "Renewal reminder: 4 March 2029 (the approvers get the renewal decision in their inbox that day)",
    );
    expect(detail.textContent).toContain("confirmed by Ann");
    expect(detail.textContent).toContain("linked by a person");
    const fields = within(detail).getAllByTestId("contract-field");
    expect((fields[1] as HTMLButtonElement).disabled).toBe(true);
    await fireEvent.click(fields[0]);
    expect(onopen).toHaveBeenCalledWith(ID(0), "Contract 00000.pdf", { page: 1, start: 120, end: 193 });
    await fireEvent.keyDown(window, { key: "Escape" });
    await waitFor(() => expect(detail.textContent).toContain("Choose a contract"));
  });

  it("a sync round that changed the repository reads the rows and the open contract again, keeping the selection", async () => {
    const fake = install(5);
    render(Contracts, { today: "2026-11-30", onopen: vi.fn() });
    await screen.findAllByTestId("contract-row");
    await fireEvent.keyDown(window, { key: "j" });
    await fireEvent.keyDown(window, { key: "Enter" });
    const detail = screen.getByTestId("contract-detail");
    await waitFor(() => expect(detail.textContent).toContain("Contract 00001.pdf"));
    const before = fake.calls.length;
    await emit("records-changed-event", { rounds: 1 });
    await waitFor(() => {
      const after = fake.calls.slice(before).map((c) => c.cmd);
      expect(after).toContain("contract_list");
      expect(after).toContain("contract_detail");
    });
    const again = fake.calls.slice(before).find((c) => c.cmd === "contract_detail");
    expect(again?.args.id).toBe(ID(1));
    expect(detail.textContent).toContain("Contract 00001.pdf");
  });

  it("l starts the lifecycle of the contract shown and says where its approval is; a deleted one says so", async () => {
    const fake = install(5);
    render(Contracts, { today: "2026-11-30" });
    await screen.findAllByTestId("contract-row");
    await fireEvent.keyDown(window, { key: "Enter" });
    const detail = screen.getByTestId("contract-detail");
    await waitFor(() => expect(detail.textContent).toContain("Expiration date"));
    await fireEvent.keyDown(window, { key: "l" });
    expect((await screen.findByTestId("lifecycle-notice")).textContent).toContain("its approval is in the inbox");
    expect(fake.calls.find((c) => c.cmd === "start_contract_lifecycle")?.args).toEqual({ id: ID(0) });
    await fireEvent.keyDown(window, { key: "j" });
    await fireEvent.keyDown(window, { key: "Enter" });
    await waitFor(() => expect(detail.textContent).toContain("Contract 00001.pdf"));
    await fireEvent.click(screen.getByTestId("start-lifecycle"));
    await waitFor(() => expect(screen.getByTestId("lifecycle-notice").textContent).toContain("may have been deleted"));
  });

  it("the upcoming dates show by month and export as a calendar through the save dialog", async () => {
    const fake = install(2, {
      from: "2026-11-01",
      until: "2027-11-01",
      total: 2,
      months: [
        {
          month: "2027-05",
          label: "May 2027",
          dates: [
            { date: "2027-05-03", kind: "notice_deadline", label: "Last day to give notice of non-renewal", document: ID(1), name: "Licence.pdf", counterparty: "Tailspin" },
          ],
        },
        {
          month: "2027-08",
          label: "August 2027",
          dates: [{ date: "2027-08-01", kind: "expiration", label: "Expires", document: ID(1), name: "Licence.pdf", counterparty: "Tailspin" }],
        },
      ],
    });
    render(Contracts, { today: "2026-11-30" });
    await screen.findAllByTestId("contract-row");
    await fireEvent.keyDown(window, { key: "u" });
    const months = await screen.findAllByTestId("dates-month");
    expect(months.map((m) => m.querySelector("h3")?.textContent)).toEqual(["May 2027", "August 2027"]);
    expect(months[0].textContent).toContain("3 May 2027");
    expect(months[0].textContent).toContain("Last day to give notice of non-renewal");
    expect(fake.calls.find((c) => c.cmd === "upcoming_dates")?.args).toEqual({ from: "2026-11-01", months: 12 });
    await fireEvent.click(screen.getByTestId("dates-export"));
    const notice = await screen.findByTestId("dates-export-notice");
    expect(notice.textContent).toContain("Saved /home/ann/contract-dates.ics");
    expect(fake.calls.find((c) => c.cmd === "export_contract_calendar")?.args).toEqual({
      from: "2026-11-01",
      months: 12,
      path: "/home/ann/contract-dates.ics",
    });
  });
});
