import { describe, expect, it } from "vitest";
import { fireEvent, render, screen, waitFor } from "@testing-library/svelte";
import App from "../src/App.svelte";
import AssistantPanel from "../src/views/AssistantPanel.svelte";
import { DOC, callsOf, installWorkflowBackend } from "./workflowBackend";
import { charCount, passageSegments, splitAtRange } from "../src/lib/assistant";
import PassageView from "../src/views/PassageView.svelte";
import type { Citation } from "../src/lib/bindings";

describe("Assistant panel", () => {
  it("counts characters and refuses a question over 2,000 without calling the backend", async () => {
    const backend = installWorkflowBackend();
    render(AssistantPanel);
    const field = (await screen.findByTestId("assistant-question")) as HTMLTextAreaElement;
    await fireEvent.input(field, { target: { value: "x".repeat(2001) } });
    expect(screen.getByTestId("assistant-counter").textContent).toBe("2001 / 2000");
    expect((screen.getByTestId("assistant-ask") as HTMLButtonElement).disabled).toBe(true);
    await fireEvent.keyDown(field, { key: "Enter" });
    expect(screen.getByTestId("assistant-error").textContent).toContain("the limit is 2000");
    expect(callsOf(backend, "ask_assistant")).toHaveLength(0);
  });

  it("shows the answer with chips: contract chips name title and page, precedents are market examples", async () => {
    const backend = installWorkflowBackend();
    let opened: Citation | null = null;
    render(AssistantPanel, { onopencitation: (c: Citation) => (opened = c) });
    const field = await screen.findByTestId("assistant-question");
    await fireEvent.input(field, { target: { value: "What law governs the supply agreement?" } });
    await fireEvent.submit(field.closest("form")!);
    expect((await screen.findByTestId("assistant-answer")).textContent).toContain("governed by New York law [C1]");
    const chips = screen.getAllByTestId("citation-chip");
    expect(chips[0].textContent).toContain("supply-agreement-acme.txt · p. 1");
    expect(chips[1].textContent).toContain("Model supply agreement");
    expect(chips[1].textContent).toContain("market example");
    expect(chips[1].tagName).toBe("SPAN");
    await fireEvent.click(chips[0]);
    expect(opened!.document).toBe(DOC);
    expect(callsOf(backend, "ask_assistant")[0].args).toEqual({ question: "What law governs the supply agreement?", session: null });
  });

  it.each([
    ["model_unavailable", "add your API key in Settings"],
    ["budget_exhausted", "budget is used up"],
    ["rate_limited", "wait a minute"],
  ])("a %s error is shown in the panel with what to do", async (code, remedy) => {
    installWorkflowBackend({ answer: { code, message: `backend says ${code}` } });
    render(AssistantPanel);
    const field = await screen.findByTestId("assistant-question");
    await fireEvent.input(field, { target: { value: "Anything?" } });
    await fireEvent.submit(field.closest("form")!);
    const error = await screen.findByTestId("assistant-error");
    expect(error.textContent).toContain(`backend says ${code}`);
    expect(error.textContent?.toLowerCase()).toContain(remedy.toLowerCase());
    expect((field as HTMLTextAreaElement).value).toBe("Anything?");
  });

  it("Ctrl+/ opens the panel beside the current view; a contract chip opens the page with the passage highlighted", async () => {
    const backend = installWorkflowBackend();
    render(App);
    await waitFor(() => expect(screen.getByTestId("status-session").textContent).toContain("Acme Legal"));
    await fireEvent.keyDown(window, { key: "4", altKey: true });
    await fireEvent.keyDown(window, { key: "/", ctrlKey: true });
    const field = await screen.findByTestId("assistant-question");
    await waitFor(() => expect(document.activeElement).toBe(field));
    expect(screen.getAllByTestId("approval-row")).toHaveLength(1);
    await fireEvent.input(field, { target: { value: "What law governs the supply agreement?" } });
    await fireEvent.keyDown(field, { key: "Enter" });
    await fireEvent.click((await screen.findAllByTestId("citation-chip"))[0]);
    const mark = await screen.findByTestId("passage-highlight");
    expect(mark.textContent).toBe("Governing law:");
    expect(screen.getByTestId("passage-page").textContent).toBe(backend.pageText);
    expect(callsOf(backend, "page_layout")[0].args).toEqual({ id: DOC, page: 1 });
    await fireEvent.keyDown(window, { key: "/", ctrlKey: true });
    await waitFor(() => expect(screen.queryByTestId("assistant-panel")).toBeNull());
  });
});

describe("Cited passage", () => {
  it("highlights only the supporting sentence, shades the rest of the passage, and w shows the whole passage", async () => {
    const backend = installWorkflowBackend();
    const citation: Citation = {
      marker: "C1",
      kind: "contract",
      document: DOC,
      precedent: null,
      title: "supply-agreement-acme.txt",
      page: 1,
      start: 0,
      end: 43,
      excerpt: backend.pageText,
      label: null,
      supporting: [{ start: 10, end: 34 }],
    };
    render(PassageView, { citation, onclose: () => {} });
    const marks = await screen.findAllByTestId("passage-highlight");
    expect(marks.map((m) => m.textContent)).toEqual(["Governing law: New York."]);
    expect(screen.getAllByTestId("passage-context").map((c) => c.textContent)).toEqual(["Preamble. ", " The end."]);
    expect(screen.getByTestId("passage-explain").textContent).toContain("sentences that support [C1]");
    await fireEvent.keyDown(window, { key: "w" });
    await waitFor(() =>
      expect(screen.getAllByTestId("passage-highlight").map((m) => m.textContent)).toEqual([backend.pageText]),
    );
    expect(screen.getByTestId("passage-toggle").textContent).toContain("Show only the supporting sentences");
  });
});

describe("assistant helpers", () => {
  it("cuts a page around the passage and its supporting sentences", () => {
    const text = "Head. One. Two. Three. Tail.";
    expect(passageSegments(text, 6, 22, [{ start: 11, end: 15 }])).toEqual([
      { text: "Head. ", kind: "page" },
      { text: "One. ", kind: "passage" },
      { text: "Two.", kind: "support" },
      { text: " Three.", kind: "passage" },
      { text: " Tail.", kind: "page" },
    ]);
    // No supporting sentences: the passage is the support; ranges outside the passage are clipped away.
    expect(passageSegments(text, 6, 10, [])).toEqual([
      { text: "Head. ", kind: "page" },
      { text: "One.", kind: "support" },
      { text: " Two. Three. Tail.", kind: "page" },
    ]);
    expect(passageSegments(text, 6, 10, [{ start: 20, end: 30 }])[1]).toEqual({ text: "One.", kind: "support" });
  });

  it("counts and splits by Unicode characters, as the backend's offsets do", () => {
    expect(charCount("né€😀")).toBe(4);
    expect(splitAtRange("a😀bcd", 1, 3)).toEqual({ before: "a", cited: "😀b", after: "cd" });
    expect(splitAtRange("abc", 2, 99)).toEqual({ before: "ab", cited: "c", after: "" });
  });
});
