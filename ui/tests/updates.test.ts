import { describe, expect, it } from "vitest";
import { fireEvent, render, screen, waitFor } from "@testing-library/svelte";
import { mockIPC, mockWindows } from "@tauri-apps/api/mocks";
import { emit } from "@tauri-apps/api/event";
import UpdateSettings from "../src/views/UpdateSettings.svelte";
import type { UpdateStatus } from "../src/lib/bindings";

const REFUSED = "This update was not signed by Pactwise, so it was not installed. Nothing changed.";

const upToDate: UpdateStatus = {
  current_version: "0.1.0",
  state: "up_to_date",
  available: null,
  message: "Pactwise Desk 0.1.0 is up to date.",
};

const offer: UpdateStatus = {
  current_version: "0.1.0",
  state: "available",
  available: { version: "0.1.1", notes: "Faster search.\nA clearer review queue.", published: "2026-12-01" },
  message: "Pactwise Desk 0.1.1 is available (this is 0.1.0).",
};

type Answer = unknown | { error: { code: string; message: string } };

/** The backend answers each command from a queue (the last answer repeats); every call is recorded. */
function backend(answers: Record<string, Answer[]>) {
  const calls: { cmd: string; args: unknown }[] = [];
  mockWindows("main");
  mockIPC(
    async (cmd, args) => {
      calls.push({ cmd, args });
      const queue = answers[cmd];
      if (!queue) throw new Error(`unexpected command ${cmd}`);
      const answer = queue.length > 1 ? queue.shift() : queue[0];
      if (typeof answer === "function") return (answer as () => unknown)();
      if (answer && typeof answer === "object" && "error" in answer) throw (answer as { error: unknown }).error;
      return answer;
    },
    { shouldMockEvents: true },
  );
  return calls;
}

describe("Settings → Updates", () => {
  it("says in words when updates are not set up, with the installed version, and offers nothing to install", async () => {
    backend({
      update_check: [
        {
          current_version: "0.1.0",
          state: "not_set_up",
          available: null,
          message: "Updates are not set up for this installation: it was built without the Pactwise update key.",
        },
      ],
    });
    render(UpdateSettings);
    await waitFor(() => expect(screen.getByTestId("update-current").textContent).toBe("0.1.0"));
    expect(screen.getByTestId("update-status").textContent).toContain("Updates are not set up for this installation");
    expect(screen.queryByTestId("update-install")).toBeNull();
    expect(screen.queryByRole("alert")).toBeNull();
  });

  it("checks on request with a keyboard-reachable button and says when it is up to date", async () => {
    const calls = backend({ update_check: [upToDate] });
    render(UpdateSettings);
    await waitFor(() => expect(screen.getByTestId("update-status").textContent).toContain("0.1.0 is up to date"));
    const button = screen.getByTestId("update-check") as HTMLButtonElement;
    expect(button.tagName).toBe("BUTTON");
    button.focus();
    expect(document.activeElement).toBe(button);
    await fireEvent.click(button);
    await waitFor(() => expect(calls.filter((c) => c.cmd === "update_check")).toHaveLength(2));
  });

  it("shows a newer version with its notes and date, its download progress, then the installed state and Restart", async () => {
    let finish: (value: unknown) => void = () => {};
    const calls = backend({
      update_check: [offer],
      update_install: [() => new Promise((resolve) => (finish = resolve))],
      update_restart: [null],
    });
    render(UpdateSettings);
    const offered = await screen.findByTestId("update-offer");
    expect(offered.textContent).toContain("Pactwise Desk 0.1.1");
    expect(offered.textContent).toContain("published 1 December 2026");
    expect(screen.getByTestId("update-notes").textContent).toBe("Faster search.\nA clearer review queue.");

    await fireEvent.click(screen.getByTestId("update-install"));
    expect(calls.find((c) => c.cmd === "update_install")?.args).toEqual({ version: "0.1.1" });
    await emit("update-progress-event", { progress: { downloaded: 5_000_000, total: 20_000_000 } });
    await waitFor(() => expect(screen.getByTestId("update-progress").textContent).toMatch(/Downloading… 5(\.0)? MB of 20(\.0)? MB/));
    expect(screen.getByTestId("update-progress").querySelector("progress")?.getAttribute("max")).toBe("20000000");
    await emit("update-progress-event", { progress: { downloaded: 20_000_000, total: 20_000_000 } });
    await waitFor(() => expect(screen.getByTestId("update-progress").textContent).toContain("Checking the signature"));

    finish({ version: "0.1.1", message: "Pactwise Desk 0.1.1 is installed and its signature checked. Restart Pactwise Desk to use it." });
    await waitFor(() => expect(screen.getByTestId("update-installed").textContent).toContain("0.1.1 is installed"));
    expect(screen.queryByTestId("update-offer")).toBeNull();
    expect(screen.getByTestId("update-current").parentElement?.textContent).toContain("Running version: 0.1.0");
    const restart = screen.getByTestId("update-restart");
    await waitFor(() => expect(document.activeElement).toBe(restart));
    await fireEvent.click(restart);
    await waitFor(() => expect(calls.filter((c) => c.cmd === "update_restart")).toHaveLength(1));
  });

  it("drops an earlier offer when a later check is refused (an update without a signature)", async () => {
    backend({ update_check: [offer, { error: { code: "update_refused", message: REFUSED } }] });
    render(UpdateSettings);
    await screen.findByTestId("update-offer");
    await fireEvent.click(screen.getByTestId("update-check"));
    expect((await screen.findByRole("alert")).textContent).toBe(REFUSED);
    expect(screen.queryByTestId("update-offer")).toBeNull();
    expect(screen.getByTestId("update-current").textContent).toBe("0.1.0");
  });

  it("shows a refused update right there in words, without its code, and keeps the offer", async () => {
    backend({
      update_check: [offer],
      update_install: [{ error: { code: "update_refused", message: REFUSED } }],
    });
    render(UpdateSettings);
    await fireEvent.click(await screen.findByTestId("update-install"));
    const alert = await screen.findByRole("alert");
    expect(alert.textContent).toBe(REFUSED);
    expect(document.body.textContent).not.toContain("update_refused");
    expect(document.body.textContent).not.toContain("{");
    expect(screen.getByTestId("update-offer")).toBeTruthy();
    expect(screen.queryByTestId("update-installed")).toBeNull();
  });

  it("says when the feed cannot be reached, and a later check that works clears it", async () => {
    backend({
      update_check: [
        { error: { code: "update_unavailable", message: "The update server could not be reached. Check the network connection and try again later; nothing was changed." } },
        upToDate,
      ],
    });
    render(UpdateSettings);
    expect((await screen.findByRole("alert")).textContent).toContain("could not be reached");
    expect(screen.queryByTestId("update-current")).toBeNull();
    await fireEvent.click(screen.getByTestId("update-check"));
    await waitFor(() => expect(screen.queryByRole("alert")).toBeNull());
    expect(screen.getByTestId("update-status").textContent).toContain("up to date");
    expect(screen.getByTestId("update-current").textContent).toBe("0.1.0");
  });
});
