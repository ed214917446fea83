import { describe, expect, it } from "vitest";
import { fireEvent, render, screen, waitFor } from "@testing-library/svelte";
import App from "../src/App.svelte";
import { installBackend } from "./backend";

describe("The welcome screen of a new installation", () => {
  it("is shown instead of the areas, says what works offline, and keyboard shortcuts wait", async () => {
    installBackend({ firstRunNeeded: true, orgName: "My organization" });
    render(App);
    const welcome = await screen.findByTestId("first-run");
    expect(welcome.textContent).toContain("What works without a network");
    expect(screen.queryByRole("navigation", { name: "Areas" })).toBeNull();
    // The placeholder name is not offered as the name; the field has the focus.
    const name = screen.getByLabelText("Your organization's name") as HTMLInputElement;
    expect(name.value).toBe("");
    await waitFor(() => expect(document.activeElement).toBe(name));
    await fireEvent.keyDown(window, { key: "7", altKey: true });
    expect(screen.getByTestId("first-run")).toBeTruthy();
  });

  it("refuses an empty name where the person looks and keeps what was typed", async () => {
    const backend = installBackend({ firstRunNeeded: true, orgName: "My organization" });
    render(App);
    await screen.findByTestId("first-run");
    await fireEvent.input(screen.getByLabelText(/Other names it signs as/), { target: { value: "Acme" } });
    await fireEvent.click(screen.getByRole("button", { name: "Create the organization" }));
    expect((await screen.findByTestId("first-run-error")).textContent).toContain("Type your organization's name");
    expect((screen.getByLabelText(/Other names it signs as/) as HTMLTextAreaElement).value).toBe("Acme");
    expect(backend.calls.some((c) => c.cmd === "complete_first_run")).toBe(false);
  });

  it("creates the organization with its other names and the API key, then opens the queue", async () => {
    const backend = installBackend({ firstRunNeeded: true, orgName: "My organization" });
    render(App);
    await screen.findByTestId("first-run");
    await fireEvent.input(screen.getByLabelText("Your organization's name"), { target: { value: "Acme GmbH" } });
    await fireEvent.input(screen.getByLabelText(/Other names it signs as/), { target: { value: "Acme\nACME Trading\n" } });
    await fireEvent.input(screen.getByLabelText(/Anthropic API key/), { target: { value: "sk-ant-test" } });
    await fireEvent.click(screen.getByRole("button", { name: "Create the organization" }));
    await waitFor(() => expect(screen.getByTestId("status-session").textContent).toContain("Acme GmbH"));
    expect(screen.queryByTestId("first-run")).toBeNull();
    expect(screen.getByRole("navigation", { name: "Areas" })).toBeTruthy();
    expect(screen.getByTestId("welcome-notice").textContent).toContain("Acme GmbH is set up. The API key is in this computer's keychain.");
    expect(backend.ownNames).toEqual(["Acme GmbH", "Acme", "ACME Trading"]);
    const order = backend.calls.map((c) => c.cmd).filter((c) => c === "complete_first_run" || c === "set_api_key");
    expect(order).toEqual(["complete_first_run", "set_api_key"]);
  });

  it("explores the demo instead", async () => {
    installBackend({ firstRunNeeded: true, orgName: "My organization" });
    render(App);
    await fireEvent.click(await screen.findByRole("button", { name: "Explore the demo instead" }));
    await waitFor(() => expect(screen.getByTestId("status-session").textContent).toContain("Northwind Traders (demo)"));
    expect(screen.getByTestId("welcome-notice").textContent).toContain("demo organization");
  });

  it("signs in to the organization's sync service instead, without offering to bring the empty one over", async () => {
    installBackend({ firstRunNeeded: true, orgName: "My organization" });
    render(App);
    await fireEvent.click(await screen.findByRole("button", { name: "Sign in to its sync service" }));
    expect(screen.queryByTestId("sync-consequence")).toBeNull();
    await fireEvent.input(screen.getByTestId("sync-server"), { target: { value: "https://sync.example.com" } });
    await fireEvent.input(screen.getByTestId("sync-org"), { target: { value: "alpha" } });
    await fireEvent.input(screen.getByTestId("sync-email"), { target: { value: "ann@alpha.example" } });
    await fireEvent.input(screen.getByTestId("sync-password"), { target: { value: "wrong" } });
    await fireEvent.click(screen.getByTestId("sync-sign-in"));
    expect((await screen.findByTestId("sync-error")).textContent).toContain("did not accept this sign-in");
    expect(screen.getByTestId("first-run")).toBeTruthy();
    await fireEvent.input(screen.getByTestId("sync-password"), { target: { value: "right-password" } });
    await fireEvent.click(screen.getByTestId("sync-sign-in"));
    await waitFor(() => expect(screen.getByTestId("status-session").textContent).toContain("Alpha LLP"));
    expect(screen.getByTestId("welcome-notice").textContent).toContain("Signed in");
  });
});
