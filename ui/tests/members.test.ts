import { describe, expect, it, vi } from "vitest";
import { fireEvent, render, screen, waitFor } from "@testing-library/svelte";
import userEvent from "@testing-library/user-event";
import Members from "../src/views/Members.svelte";
import Organizations from "../src/views/Organizations.svelte";
import Settings from "../src/views/Settings.svelte";
import { callsOf, installBackend } from "./backend";
import type { MembersView, SessionInfo } from "../src/lib/bindings";

const ANN = "0193a0b4-0000-7000-8000-0000000000aa";
const BO = "0193a0b4-0000-7000-8000-0000000000bb";

function team(extra: Partial<MembersView> = {}): MembersView {
  return {
    members: [
      { user_id: ANN, display_name: "Ann Admin", email: "ann@alpha.example", role: "admin", is_you: true, code_open_until: null },
      { user_id: BO, display_name: "Bo Buyer", email: "bo@alpha.example", role: "buyer", is_you: false, code_open_until: null },
      { user_id: "0193a0b4-0000-7000-8000-0000000000cc", display_name: "Olga Owner", email: "olga@alpha.example", role: "owner", is_you: false, code_open_until: null },
    ],
    synced: true,
    can_manage: true,
    can_manage_owners: false,
    offline_reason: null,
    ...extra,
  };
}

describe("Settings → Members", () => {
  it("says a local organization's members are managed once it syncs, and offers no form", async () => {
    installBackend({
      members: {
        members: [{ user_id: ANN, display_name: "Ann", email: null, role: "owner", is_you: true, code_open_until: null }],
        synced: false,
        can_manage: false,
        can_manage_owners: false,
        offline_reason: null,
      },
    });
    render(Members);
    expect((await screen.findByTestId("members-local")).textContent).toContain("Sign in to your organization's sync service");
    expect(screen.getAllByTestId("member-row")).toHaveLength(1);
    expect(screen.queryByTestId("member-add-form")).toBeNull();
  });

  it("adds a member and shows the one-time code once, with a copy button", async () => {
    const backend = installBackend({ members: team() });
    const writeText = vi.fn().mockResolvedValue(undefined);
    Object.defineProperty(navigator, "clipboard", { value: { writeText }, configurable: true });
    render(Members);
    await screen.findByTestId("member-add-form");
    // An admin is not offered the owner role; owners' rows have no controls for an admin.
    const roles = Array.from((screen.getByTestId("member-new-role") as HTMLSelectElement).options).map((o) => o.textContent);
    expect(roles).toEqual(["Admin", "Reviewer", "Buyer", "Approver", "Viewer"]);
    expect(screen.getAllByTestId("member-role")).toHaveLength(2);

    await fireEvent.submit(screen.getByTestId("member-add-form"));
    expect((await screen.findByTestId("member-add-error")).textContent).toContain("name and email");
    expect(callsOf(backend, "add_member")).toHaveLength(0);

    await fireEvent.input(screen.getByTestId("member-name"), { target: { value: "Cy Park" } });
    await fireEvent.input(screen.getByTestId("member-email"), { target: { value: "cy@alpha.example" } });
    await fireEvent.change(screen.getByTestId("member-new-role"), { target: { value: "approver" } });
    await fireEvent.click(screen.getByTestId("member-add"));
    const shown = await screen.findByTestId("member-code-shown");
    expect(callsOf(backend, "add_member")[0].args).toEqual({
      input: { email: "cy@alpha.example", display_name: "Cy Park", role: "approver" },
    });
    expect(screen.getByTestId("member-code-value").textContent).toBe("WXYZ-2345-ABCD-EFGH");
    expect(shown.textContent).toContain("Cy Park");
    expect(shown.textContent).toContain("works once");
    await fireEvent.click(screen.getByTestId("member-code-copy"));
    expect(writeText).toHaveBeenCalledWith("WXYZ-2345-ABCD-EFGH");
    expect(screen.getByTestId("member-code-copy").textContent).toBe("Copied");
    await waitFor(() => expect(screen.getAllByTestId("member-row")).toHaveLength(4));
    expect(screen.getByTestId("members-table").textContent).toContain("sign-in code open until");
    // Done: the code is gone from the screen for good.
    await fireEvent.click(screen.getByTestId("member-code-done"));
    expect(screen.queryByText("WXYZ-2345-ABCD-EFGH")).toBeNull();
  });

  it("keeps what was typed and shows the service's refusal beside the form", async () => {
    installBackend({ members: team() });
    render(Members);
    await screen.findByTestId("member-add-form");
    await fireEvent.input(screen.getByTestId("member-name"), { target: { value: "Bo again" } });
    await fireEvent.input(screen.getByTestId("member-email"), { target: { value: "bo@alpha.example" } });
    await fireEvent.click(screen.getByTestId("member-add"));
    expect((await screen.findByTestId("member-add-error")).textContent).toContain("already belongs");
    expect((screen.getByTestId("member-email") as HTMLInputElement).value).toBe("bo@alpha.example");
  });

  it("changes a role and removes a member only after a confirmation, by keyboard too", async () => {
    const backend = installBackend({ members: team() });
    const user = userEvent.setup();
    render(Members);
    const [, boRole] = await screen.findAllByTestId("member-role");
    await fireEvent.change(boRole, { target: { value: "approver" } });
    expect(await screen.findByText("Bo Buyer is now Approver.")).toBeTruthy();
    expect(callsOf(backend, "change_member_role")[0].args).toEqual({ member: BO, role: "approver" });

    // Remove… asks first; "Keep" keeps.
    const remove = screen.getByTestId("member-remove");
    remove.focus();
    await user.keyboard("{Enter}");
    await user.click(screen.getByTestId("member-remove-cancel"));
    expect(callsOf(backend, "remove_member")).toHaveLength(0);
    screen.getByTestId("member-remove").focus();
    await user.keyboard("{Enter}");
    const confirm = screen.getByTestId("member-remove-confirm");
    confirm.focus();
    await user.keyboard("{Enter}");
    await waitFor(() => expect(callsOf(backend, "remove_member")).toHaveLength(1));
    expect(callsOf(backend, "remove_member")[0].args).toEqual({ member: BO });
    expect((await screen.findByRole("status")).textContent).toContain("Bo Buyer was removed");
    await waitFor(() => expect(screen.getAllByTestId("member-row")).toHaveLength(2));
  });

  it("says when the list is this computer's copy because the service cannot be reached", async () => {
    installBackend({ members: team({ offline_reason: "the sync service cannot be reached (timed out)" }) });
    render(Members);
    expect((await screen.findByTestId("members-offline")).textContent).toContain("as this computer last saw it");
  });
});

const session: SessionInfo = {
  org_id: "0193a0b4-0000-7000-8000-000000000001",
  org_name: "Acme Legal",
  user_id: ANN,
  user_name: "Ann",
  role: "owner",
  data_dir: "/tmp/pactwise-data",
};

describe("Signing in and organizations", () => {
  function fill(values: Record<string, string>) {
    return Promise.all(
      Object.entries(values).map(([k, v]) => fireEvent.input(screen.getByTestId(`sync-${k}`), { target: { value: v } })),
    );
  }

  it("says what signing in will do before it happens, and keeps the local organization apart by default", async () => {
    const backend = installBackend();
    render(Settings, { session });
    const said = await screen.findByTestId("sync-consequence");
    expect(said.textContent).toContain('"Acme Legal" and everything in it');
    expect(said.textContent).toContain("switch back to it any time");
    expect((screen.getByTestId("sync-keep-apart") as HTMLInputElement).checked).toBe(true);
    await fill({ server: "https://sync.example.com", org: "alpha", email: "ann@alpha.example", password: "right-password" });
    await fireEvent.click(screen.getByTestId("sync-sign-in"));
    await waitFor(() => expect(callsOf(backend, "sync_sign_in")).toHaveLength(1));
    await screen.findByText(/Signed in\./);
    expect(callsOf(backend, "bring_over_documents")).toHaveLength(0);
  });

  it("a new member signs in with the code and a new password, bringing the local documents over", async () => {
    const backend = installBackend();
    render(Settings, { session });
    await fireEvent.click(await screen.findByTestId("sync-with-code"));
    await fill({ server: "https://sync.example.com", org: "alpha", email: "bea@alpha.example", code: " ABCD-EFGH-JKLM-NPQR ", password: "short" });
    await fireEvent.click(screen.getByTestId("sync-bring-over"));
    await fireEvent.click(screen.getByTestId("sync-sign-in"));
    expect((await screen.findByTestId("sync-error")).textContent).toContain("at least 10 characters");
    expect(callsOf(backend, "sync_sign_in_with_code")).toHaveLength(0);

    await fill({ password: "bea-chose-this-1" });
    await fireEvent.click(screen.getByTestId("sync-sign-in"));
    await waitFor(() => expect(callsOf(backend, "sync_sign_in_with_code")).toHaveLength(1));
    expect(callsOf(backend, "sync_sign_in_with_code")[0].args).toEqual({
      input: {
        server: "https://sync.example.com",
        org: "alpha",
        email: "bea@alpha.example",
        code: "ABCD-EFGH-JKLM-NPQR",
        password: "bea-chose-this-1",
      },
    });
    await waitFor(() => expect(callsOf(backend, "bring_over_documents")).toHaveLength(1));
    expect(callsOf(backend, "bring_over_documents")[0].args).toEqual({ from: session.org_id });
    const notice = await screen.findByText(/2 documents from "Acme Legal" are now in "Alpha LLP"/);
    expect(notice.textContent).toContain("with 3 corrections");
    expect(notice.textContent).toContain('"Acme Legal" keeps its own copies');
  });

  it("a wrong code says so and keeps what was typed", async () => {
    installBackend();
    render(Settings, { session });
    await fireEvent.click(await screen.findByTestId("sync-with-code"));
    await fill({ server: "https://sync.example.com", org: "alpha", email: "bea@alpha.example", code: "WRON-GCOD-E000-0000", password: "bea-chose-this-1" });
    await fireEvent.click(screen.getByTestId("sync-sign-in"));
    expect((await screen.findByTestId("sync-error")).textContent).toContain("did not accept this code");
    expect((screen.getByTestId("sync-code") as HTMLInputElement).value).toBe("WRON-GCOD-E000-0000");
  });

  it("switches organizations and brings another organization's documents in after a confirmation", async () => {
    const backend = installBackend({
      orgs: [
        { org_id: "0193a0b4-0000-7000-8000-000000000001", name: "Acme Legal", role: "owner", current: false },
        { org_id: "0193a0b4-0000-7000-8000-000000000002", name: "Alpha LLP", role: "admin", current: true },
      ],
    });
    let changed = 0;
    render(Organizations, { onsession: () => (changed += 1) });
    expect((await screen.findByTestId("org-current")).closest("li")?.textContent).toContain("Alpha LLP");
    await fireEvent.click(screen.getByTestId("org-bring"));
    await fireEvent.click(screen.getByTestId("org-bring-cancel"));
    expect(callsOf(backend, "bring_over_documents")).toHaveLength(0);
    await fireEvent.click(screen.getByTestId("org-bring"));
    await fireEvent.click(screen.getByTestId("org-bring-confirm"));
    expect((await screen.findByTestId("org-notice")).textContent).toContain('from "Acme Legal" are now in "Alpha LLP"');
    expect(callsOf(backend, "bring_over_documents")[0].args).toEqual({ from: "0193a0b4-0000-7000-8000-000000000001" });

    await fireEvent.click(screen.getByTestId("org-switch"));
    await waitFor(() => expect(callsOf(backend, "switch_organization")).toHaveLength(1));
    expect((await screen.findByTestId("org-notice")).textContent).toBe('"Acme Legal" is now the current organization.');
    await waitFor(() => expect(screen.getByTestId("org-current").closest("li")?.textContent).toContain("Acme Legal"));
    expect(changed).toBe(2);
  });
});
