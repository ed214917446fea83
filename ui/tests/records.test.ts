import { describe, expect, it } from "vitest";
import { fireEvent, render, screen, waitFor, within } from "@testing-library/svelte";
import { mockIPC, mockWindows } from "@tauri-apps/api/mocks";
import Usage from "../src/views/Usage.svelte";
import AuditLog from "../src/views/AuditLog.svelte";
import AssistantHistory from "../src/views/AssistantHistory.svelte";
import StageLog from "../src/views/review/StageLog.svelte";
import type { AuditLine, Citation, StageLogEntry_Serialize, UsageReport_Serialize } from "../src/lib/bindings";
import { featureLabel, money, monthLabel, remainingWords, stageLine } from "../src/lib/records";

const DOC = "0193a0b4-0000-7000-8000-000000000007";
const BOB = "0193a0b4-0000-7000-8000-0000000000bb";

interface Fake {
  calls: { cmd: string; args: Record<string, unknown> }[];
}

function install(handlers: Record<string, (a: Record<string, unknown>) => unknown>): Fake {
  const fake: Fake = { calls: [] };
  mockWindows("main");
  mockIPC((cmd, args) => {
    const a = (args ?? {}) as Record<string, unknown>;
    fake.calls.push({ cmd, args: a });
    const h = handlers[cmd];
    if (!h) throw new Error(`unexpected command ${cmd}`);
    return h(a);
  });
  return fake;
}

/** No key, enum name or JSON on screen. */
function expectWordsOnly(text: string) {
  expect(text).not.toMatch(/[a-z]+_[a-z]+/);
  expect(text).not.toMatch(/[{}]/);
  expect(text).not.toContain(DOC);
}

const report = (month: string): UsageReport_Serialize => ({
  scope: "organization",
  month,
  current_month: "2026-11",
  months: [
    { month: "2026-11", calls: 5, cost_micros: 707_000, input_tokens: 7_500, output_tokens: 500, budget_micros: 2_000_000, remaining_micros: 1_293_000 },
    { month: "2026-10", calls: 1, cost_micros: 1_000_000, input_tokens: 1_500, output_tokens: 100, budget_micros: 2_000_000, remaining_micros: 1_000_000 },
  ],
  by_person:
    month === "2026-11"
      ? [
          { name: "Ann", you: true, calls: 2, cost_micros: 400_000, input_tokens: 3_000, output_tokens: 200, budget_micros: 500_000, remaining_micros: 100_000 },
          { name: "Bob", you: false, calls: 2, cost_micros: 257_000, input_tokens: 3_000, output_tokens: 200, budget_micros: 200_000, remaining_micros: -57_000 },
          { name: null, you: false, calls: 1, cost_micros: 50_000, input_tokens: 1_500, output_tokens: 100, budget_micros: null, remaining_micros: null },
        ]
      : [],
  by_feature:
    month === "2026-11"
      ? [
          { feature: "checklist", calls: 1, cost_micros: 300_000, input_tokens: 1_500, output_tokens: 100 },
          { feature: "prep_drafting", calls: 1, cost_micros: 7_000, input_tokens: 1_500, output_tokens: 100 },
          { feature: "other", calls: 1, cost_micros: 7_000, input_tokens: 1_500, output_tokens: 100 },
        ]
      : [{ feature: "prep_drafting", calls: 1, cost_micros: 1_000_000, input_tokens: 1_500, output_tokens: 100 }],
  today: { budget_micros: 1_000_000, spent_micros: 707_000, remaining_micros: 293_000 },
});

describe("records helpers", () => {
  it("speaks money, months, features and what remains", () => {
    expect(money(1_293_000)).toBe("$1.29");
    expect(money(2_500)).toBe("$0.0025");
    expect(money(0)).toBe("$0.00");
    expect(money(36)).toBe("under $0.0001");
    expect(money(12_345_670_000)).toBe("$12,345.67");
    expect(remainingWords(-57_000)).toBe("$0.06 over");
    expect(remainingWords(100_000)).toBe("$0.10 left");
    expect(remainingWords(null)).toBe("—");
    expect(monthLabel("2026-11")).toBe("November 2026");
    expect(featureLabel("prep_drafting")).toBe("Prep Studio drafting");
  });

  it("says why a stage degraded without its codes", () => {
    const classify: StageLogEntry_Serialize = {
      stage: "classify",
      status: "degraded",
      attempt: 1,
      model: "claude-haiku-5-5",
      input_tokens: 1200,
      output_tokens: 40,
      cache_read_tokens: 0,
      latency_ms: 2300,
      outcome: "keyword_fallback",
      reason: "model unavailable for classification: model_unavailable (connection refused)",
      at: "2026-11-30T09:00:00Z",
    };
    const line = stageLine(classify);
    expect(line.what).toBe("Telling the contract type");
    expect(line.status).toBe("Done with less than usual");
    expect(line.why).toBe("The model could not be reached, so the type was told from keywords.");
    expect(line.tokens).toBe("1,200 in · 40 out");
    expect(line.latency).toBe("2.3 s");
    expect(line.model).toBe("Claude Haiku 5.5");
    expectWordsOnly(Object.values(line).join(" "));
    const gate = stageLine({ ...classify, stage: "gate", status: "done", model: null, outcome: "red_flag", reason: "red_flag: 2 items" });
    expect(gate.outcome).toBe("Sent to a person");
    expect(gate.why).not.toContain("red_flag");
    expect(gate.tokens).toBe("—");
    const checklist = stageLine({ ...classify, stage: "checklist", status: "done", model: null, outcome: "rules_and_classifier", reason: null });
    expect(checklist.outcome).toBe("The rules and the local clause classifier pre-filled the checklist (no model call)");
    expect(checklist.why).toBeNull();
  });
});

describe("Settings → Usage", () => {
  it("shows spend by month, person and feature with budgets, and another month on Enter", async () => {
    const fake = install({ usage_report: (a) => report((a.month as string | null) ?? "2026-11") });
    render(Usage);
    const months = await screen.findByTestId("usage-months");
    expect(months.textContent).toContain("November 2026");
    expect(months.textContent).toContain("$0.71");
    expect(months.textContent).toContain("$1.29 left");
    const people = screen.getByTestId("usage-people");
    expect(people.textContent).toContain("Ann (you)");
    expect(people.textContent).toContain("$0.06 over");
    expect(people.textContent).toContain("Background work (no person)");
    const features = screen.getByTestId("usage-features");
    expect(features.textContent).toContain("Pre-filling checklists");
    expect(features.textContent).toContain("Other");
    expect(screen.getByTestId("usage-today").textContent).toContain("$0.29 left");
    expectWordsOnly(screen.getByTestId("usage").textContent ?? "");
    // A month is a button: keyboard users reach it with Tab and open it with Enter.
    const october = within(months).getByRole("button", { name: "October 2026" });
    await fireEvent.click(october);
    await waitFor(() => expect(screen.getByTestId("usage-features").textContent).toContain("Prep Studio drafting"));
    expect(fake.calls.filter((c) => c.cmd === "usage_report").map((c) => c.args.month)).toEqual([null, "2026-10"]);
  });

  it("tells a member they see their own spend", async () => {
    install({ usage_report: () => ({ ...report("2026-11"), scope: "own", today: null }) });
    render(Usage);
    expect((await screen.findByTestId("usage-scope")).textContent).toContain("Your own model spend");
  });
});

describe("the audit log", () => {
  const line = (i: number): AuditLine => ({ at: `2026-11-${String(30 - (i % 28)).padStart(2, "0")}T09:00:00Z`, person: i % 2 ? "Bob" : "Ann", action: "added", thing: `the vendor “Vendor ${i}”` });

  it("filters, pages older entries and exports the same filter through the save dialog", async () => {
    const fake = install({
      audit_choices: () => ({ actions: [{ value: "vendor.create", label: "Vendor added" }], people: [{ value: BOB, label: "Bob" }] }),
      audit_page: (a) => {
        const cursor = a.cursor as string | null;
        return cursor ? { lines: [line(100)], next: null } : { lines: Array.from({ length: 100 }, (_, i) => line(i)), next: "4242" };
      },
      "plugin:dialog|save": () => "/home/ann/audit-log.csv",
      export_audit_csv: (a) => ({ path: a.path, bytes: 2048, rows: 101 }),
    });
    render(AuditLog);
    await waitFor(() => expect(screen.getAllByTestId("audit-row")).toHaveLength(100));
    expectWordsOnly(screen.getByTestId("audit-table").textContent ?? "");
    await fireEvent.click(screen.getByTestId("audit-more"));
    await waitFor(() => expect(screen.getAllByTestId("audit-row")).toHaveLength(101));
    expect(screen.queryByTestId("audit-more")).toBeNull();
    expect(fake.calls.filter((c) => c.cmd === "audit_page")[1].args.cursor).toBe("4242");

    await fireEvent.change(screen.getByTestId("audit-person"), { target: { value: BOB } });
    await fireEvent.change(screen.getByTestId("audit-action"), { target: { value: "vendor.create" } });
    await fireEvent.input(screen.getByTestId("audit-from"), { target: { value: "2026-11-01" } });
    await fireEvent.input(screen.getByTestId("audit-text"), { target: { value: " globex " } });
    await fireEvent.submit(screen.getByTestId("audit-filters"));
    const query = { person: BOB, action: "vendor.create", from: "2026-11-01", to: null, text: "globex" };
    await waitFor(() => expect(fake.calls.filter((c) => c.cmd === "audit_page").at(-1)?.args).toEqual({ query, cursor: null, limit: null }));

    // x exports, as the button does.
    await fireEvent.keyDown(window, { key: "x" });
    expect((await screen.findByTestId("audit-notice")).textContent).toContain("Saved /home/ann/audit-log.csv");
    expect(fake.calls.find((c) => c.cmd === "export_audit_csv")?.args).toEqual({ query, path: "/home/ann/audit-log.csv" });
  });

  it("shows a refused filter where the person is looking", async () => {
    install({
      audit_choices: () => ({ actions: [], people: [] }),
      audit_page: () => {
        throw { code: "invalid_input", message: "the range ends (2026-11-01) before it starts (2026-11-30); swap the two dates" };
      },
    });
    render(AuditLog);
    expect((await screen.findByRole("alert")).textContent).toContain("swap the two dates");
  });
});

describe("a document's stage log", () => {
  it("lists each stage in words and closes with Esc", async () => {
    const base = { attempt: 1, output_tokens: 0, cache_read_tokens: 0, at: "2026-11-30T09:00:00Z", model: null, input_tokens: 0, latency_ms: 12 };
    install({
      stage_log: () => [
        { ...base, stage: "extract", status: "done", outcome: "text", reason: null },
        { ...base, stage: "classify", status: "done", outcome: "keyword", reason: "offline: the keyword classifier ran" },
        { ...base, stage: "checklist", status: "degraded", outcome: "model", reason: "2 of 5 section calls failed; their items are not evaluated", model: "claude-haiku-5-5", input_tokens: 9000, output_tokens: 700, latency_ms: 4100 },
        { ...base, stage: "gate", status: "done", outcome: "auto", reason: "no reason applies" },
      ],
    });
    let closed = false;
    render(StageLog, { document: DOC, onclose: () => (closed = true) });
    await waitFor(() => expect(screen.getAllByTestId("stage-row")).toHaveLength(4));
    const text = screen.getByTestId("stage-log").textContent ?? "";
    expect(text).toContain("Reading the pages");
    expect(text).toContain("Told from keywords (no model call)");
    expect(text).toContain("2 of 5 section calls failed; their items are not evaluated.");
    expect(text).toContain("9,000 in · 700 out");
    expect(text).toContain("No person needed");
    expectWordsOnly(text);
    await fireEvent.keyDown(screen.getByTestId("stage-log"), { key: "Escape" });
    expect(closed).toBe(true);
  });
});

describe("earlier assistant answers", () => {
  const citation: Citation = {
    marker: "C1",
    kind: "contract",
    document: DOC,
    precedent: null,
    title: "supply.txt",
    page: 2,
    start: 10,
    end: 80,
    excerpt: "Northwind shall pay each undisputed invoice within forty-five (45) days",
    label: null,
    supporting: [],
  };

  it("lists the person's questions with citations that open the page, searches and pages", async () => {
    const fake = install({
      assistant_history: (a) => {
        if (a.search) return { answers: [], next: null };
        if (a.cursor) return { answers: [{ id: "m0", question: "Older question?", text: null, failed: "The model could not be reached (offline or no API key).", at: "2026-11-01T09:00:00Z", citations: [] }], next: null };
        return { answers: [{ id: "m1", question: "When do we pay?", text: "Within 45 days [C1].", failed: null, at: "2026-11-30T09:00:00Z", citations: [citation] }], next: "m1" };
      },
    });
    let opened: Citation | null = null;
    render(AssistantHistory, { onopencitation: (c: Citation) => (opened = c) });
    const chip = await screen.findByTestId("history-citation");
    expect(chip.textContent).toContain("supply.txt · p. 2");
    await fireEvent.click(chip);
    expect(opened).toEqual(citation);
    await fireEvent.click(screen.getByTestId("history-more"));
    await waitFor(() => expect(screen.getAllByTestId("history-entry")).toHaveLength(2));
    expect(screen.getByText("The model could not be reached (offline or no API key).")).toBeTruthy();
    await fireEvent.input(screen.getByTestId("history-search"), { target: { value: "nothing like it" } });
    await fireEvent.submit(screen.getByTestId("history-search").closest("form")!);
    expect(await screen.findByText("No earlier question matches.")).toBeTruthy();
    expect(fake.calls.filter((c) => c.cmd === "assistant_history").at(-1)?.args).toEqual({ search: "nothing like it", cursor: null });
  });
});
