import { describe, expect, it } from "vitest";
import { fireEvent, render, screen, waitFor } from "@testing-library/svelte";
import Runs from "../src/views/Runs.svelte";
import { callsOf, installWorkflowBackend, PROCUREMENT_FORM } from "./workflowBackend";
import { buildInput, fieldOfError, filterOf, initialValues } from "../src/lib/runs";

const NOW = () => new Date("2026-11-30T12:00:00Z");

describe("Runs area", () => {
  it("lists runs in words and opens a run's story with Enter: what it does now, the timeline, who decides", async () => {
    const backend = installWorkflowBackend();
    render(Runs, { now: NOW });
    const rows = await screen.findAllByTestId("run-row");
    expect(rows[0].textContent).toContain("Procurement");
    expect(rows[0].textContent).toContain("Waiting for a decision by Ana Ruiz");
    expect(rows[0].textContent).not.toContain("procurement");
    // Words are spaced: "12:00 · Ann", never "12:00· Ann".
    const when = rows[0].querySelector(".meta.muted")?.textContent ?? "";
    expect(when).toMatch(/ · Ann/);
    expect(when).not.toMatch(/\S·/);
    (screen.getByTestId("runs-list") as HTMLElement).focus();
    await fireEvent.keyDown(window, { key: "Enter" });
    const story = await screen.findByTestId("run-story");
    expect(screen.getByTestId("run-now").textContent).toContain("Waiting for a decision by Ana Ruiz");
    expect(screen.getByTestId("run-now").textContent).toContain("since");
    const timeline = screen.getByTestId("timeline").textContent ?? "";
    expect(timeline).toContain("Started by Ann");
    expect(timeline).toContain("Research vendors: done");
    for (const internal of ["superstep", "super-step", "checkpoint", "choose_vendor", "{"]) {
      expect(story.textContent).not.toContain(internal);
    }
    expect(callsOf(backend, "run_story")[0].args).toEqual({ id: backend.run.id });
  });

  it("runs moving in the background reload the story shown but leave a start form being filled open", async () => {
    const backend = installWorkflowBackend();
    render(Runs, { now: NOW });
    await screen.findAllByTestId("run-row");
    (screen.getByTestId("runs-list") as HTMLElement).focus();
    await fireEvent.keyDown(window, { key: "Enter" });
    await screen.findByTestId("run-story");
    await fireEvent.keyDown(window, { key: "n" });
    await screen.findByTestId("start-form");
    const loads = callsOf(backend, "run_story").length;
    // Another desktop's decision arrives (the window hears it; here: Refresh).
    await fireEvent.click(screen.getByText("Refresh"));
    await waitFor(() => expect(callsOf(backend, "run_story").length).toBeGreaterThan(loads));
    expect(screen.getByTestId("start-form")).toBeTruthy();
  });

  it("'n' opens the form with the organization's vendors, and starting sends the input the form built", async () => {
    const backend = installWorkflowBackend();
    render(Runs, { now: NOW });
    await screen.findAllByTestId("run-row");
    await fireEvent.keyDown(window, { key: "n" });
    const form = await screen.findByTestId("start-form");
    expect((screen.getByTestId("start-graph") as HTMLSelectElement).value).toBe("procurement");
    // Only graphs started here are offered; the report is started from a document.
    expect(screen.getByTestId("start-graph").textContent).not.toContain("Contract review report");
    const vendorName = form.querySelector<HTMLInputElement>("#f-vendors-0-name")!;
    expect(vendorName.value).toBe("Globex Office");
    await fireEvent.input(form.querySelector("#f-request")!, { target: { value: "standing desks" } });
    await fireEvent.input(form.querySelector("#f-budget")!, { target: { value: "10000" } });
    await fireEvent.input(form.querySelector("#f-capabilities")!, { target: { value: "delivery, office_furniture" } });
    await fireEvent.input(form.querySelector("#f-vendors-0-price")!, { target: { value: "8200" } });
    await fireEvent.click(screen.getByTestId("add-row-vendors"));
    await fireEvent.input(form.querySelector("#f-vendors-1-name")!, { target: { value: "Initrode" } });
    await fireEvent.input(form.querySelector("#f-vendors-1-price")!, { target: { value: "9100.50" } });
    await fireEvent.keyDown(form.querySelector("#f-budget")!, { key: "Enter", ctrlKey: true });
    await waitFor(() => expect(callsOf(backend, "start_run")).toHaveLength(1));
    expect(callsOf(backend, "start_run")[0].args).toEqual({
      graph: "procurement",
      input: {
        request: "standing desks",
        budget: "10000",
        capabilities: ["delivery", "office_furniture"],
        vendors: [
          { name: "Globex Office", price: "8200" },
          { name: "Initrode", price: "9100.50" },
        ],
      },
    });
    expect((await screen.findByTestId("runs-notice")).textContent).toContain("Procurement started.");
    await screen.findByTestId("run-story");
  });

  it("a form the backend refuses shows the error at the field it names and keeps what was typed", async () => {
    installWorkflowBackend({ startError: { code: "invalid_input", message: 'Budget: must be an amount like 12500 or 12500.50 (got "lots")' } });
    render(Runs, { now: NOW });
    await screen.findAllByTestId("run-row");
    await fireEvent.click(screen.getByTestId("new-run"));
    const form = await screen.findByTestId("start-form");
    await fireEvent.input(form.querySelector("#f-request")!, { target: { value: "standing desks" } });
    await fireEvent.input(form.querySelector("#f-budget")!, { target: { value: "lots" } });
    await fireEvent.submit(form);
    expect((await screen.findByTestId("start-error")).textContent).toContain("Budget: must be an amount");
    const budget = form.querySelector<HTMLInputElement>("#f-budget")!;
    await waitFor(() => expect(budget.getAttribute("aria-invalid")).toBe("true"));
    expect(form.querySelector("#f-request")!.getAttribute("aria-invalid")).toBeNull();
    expect(budget.value).toBe("lots");
    expect((form.querySelector("#f-request") as HTMLTextAreaElement).value).toBe("standing desks");
  });

  it("'c' cancels the open run only with a reason", async () => {
    const backend = installWorkflowBackend();
    render(Runs, { now: NOW });
    await screen.findAllByTestId("run-row");
    await fireEvent.click(screen.getAllByTestId("run-row")[0]);
    await screen.findByTestId("run-story");
    await fireEvent.keyDown(window, { key: "c" });
    const reason = (await screen.findByTestId("cancel-reason")) as HTMLTextAreaElement;
    await waitFor(() => expect(document.activeElement).toBe(reason));
    await fireEvent.submit(screen.getByTestId("cancel-form"));
    expect((await screen.findByTestId("cancel-error")).textContent).toContain("Give a reason to cancel");
    expect(callsOf(backend, "cancel_run")).toHaveLength(0);
    await fireEvent.input(reason, { target: { value: "the request was withdrawn" } });
    await fireEvent.keyDown(reason, { key: "Enter", ctrlKey: true });
    await waitFor(() => expect(callsOf(backend, "cancel_run")).toHaveLength(1));
    expect(callsOf(backend, "cancel_run")[0].args).toEqual({ id: backend.run.id, reason: "the request was withdrawn" });
    expect((await screen.findByTestId("runs-notice")).textContent).toContain("Cancelled: 1 pending decision(s)");
  });

  it("filters go to the backend: status, workflow, person, dates", async () => {
    const backend = installWorkflowBackend();
    render(Runs, { now: NOW });
    await screen.findAllByTestId("run-row");
    const select = screen.getByTestId("filter-status") as HTMLSelectElement;
    select.value = "waiting";
    await fireEvent.change(select);
    const graph = screen.getByTestId("filter-graph") as HTMLSelectElement;
    graph.value = "procurement";
    await fireEvent.change(graph);
    await waitFor(() =>
      expect(callsOf(backend, "run_summaries").at(-1)?.args).toEqual({
        filter: { status: "waiting", graph: "procurement", started_by: null, since: null, until: null },
      }),
    );
    expect((screen.getByTestId("filter-person") as HTMLSelectElement).textContent).toContain("Ann");
  });
});

describe("run forms", () => {
  it("build the input: nested keys, words from commas, table rows, blanks left out", () => {
    const fields = [
      ...PROCUREMENT_FORM.fields,
      { key: "vendor.name", label: "Vendor", kind: "text" as const, required: true, help: "", options: [], columns: [], min: null, max: null, initial: null },
      { key: "vendor.sanctions_hit", label: "Hit", kind: "flag" as const, required: false, help: "", options: [], columns: [], min: null, max: null, initial: null },
    ];
    const values = initialValues(fields);
    values.request = "  desks ";
    values.capabilities = "delivery, , office_furniture";
    values["vendor.name"] = "Acme";
    values.vendors = [{ name: "Globex Office", price: "" }, { name: "", price: "" }];
    expect(buildInput(fields, values)).toEqual({
      request: "desks",
      capabilities: ["delivery", "office_furniture"],
      vendors: [{ name: "Globex Office" }],
      vendor: { name: "Acme", sanctions_hit: false },
    });
    expect(fieldOfError(fields, "Vendors, row 2: Price: a value is required")).toBe("vendors");
    expect(fieldOfError(fields, "Required capabilities: must be a list of words")).toBe("capabilities");
    expect(fieldOfError(fields, "something else")).toBeNull();
    expect(filterOf({ status: "", graph: "", startedBy: "", from: "not a date", to: "" })).toEqual({
      status: null, graph: null, started_by: null, since: null, until: null,
    });
  });
});
