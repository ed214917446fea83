import { describe, expect, it } from "vitest";
import { render, screen, waitFor } from "@testing-library/svelte";
import { mockIPC, mockWindows } from "@tauri-apps/api/mocks";
import { emit } from "@tauri-apps/api/event";
import SemanticStatusLine from "../src/views/SemanticStatusLine.svelte";
import type { SemanticStatus } from "../src/lib/bindings";

function backend(status: SemanticStatus) {
  mockWindows("main");
  mockIPC(
    (cmd) => {
      if (cmd === "semantic_status") return status;
      throw new Error(`unexpected command ${cmd}`);
    },
    { shouldMockEvents: true },
  );
}

const preparing = (done: number, total: number): SemanticStatus => ({
  ready: false,
  unavailable: false,
  done,
  total,
  message: `Preparing meaning-based search: ${done} of ${total} passages`,
});

describe("the meaning-based search status line", () => {
  it("says how far the background preparation is, follows its progress and goes away when ready", async () => {
    backend(preparing(120, 400));
    render(SemanticStatusLine);
    const line = await screen.findByTestId("semantic-status");
    expect(line.textContent).toContain("120 of 400 passages");
    expect(line.querySelector("progress")?.getAttribute("value")).toBe("120");

    await emit("semantic-progress-event", { status: preparing(352, 400) });
    await waitFor(() => expect(screen.getByTestId("semantic-status").textContent).toContain("352 of 400"));

    await emit("semantic-progress-event", {
      status: { ready: true, unavailable: false, done: 400, total: 400, message: "Meaning-based search is ready." },
    });
    await waitFor(() => expect(screen.queryByTestId("semantic-status")).toBeNull());
  });

  it("says why search matches words only when the model is missing, without a progress bar", async () => {
    backend({
      ready: false,
      unavailable: true,
      done: 0,
      total: 0,
      message: "Meaning-based search is unavailable (the embedding model is not installed: run make setup); search matches words only.",
    });
    render(SemanticStatusLine);
    const line = await screen.findByTestId("semantic-status");
    expect(line.textContent).toContain("run make setup");
    expect(line.querySelector("progress")).toBeNull();
  });

  it("shows nothing when meaning-based search is ready", async () => {
    backend({ ready: true, unavailable: false, done: 5, total: 5, message: "Meaning-based search is ready." });
    render(SemanticStatusLine);
    await new Promise((r) => setTimeout(r, 0));
    expect(screen.queryByTestId("semantic-status")).toBeNull();
  });
});
