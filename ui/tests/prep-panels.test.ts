// The panels PackageView is made of, each on its own: the lease bar, the findings with their dismissal, and the
// publish panel. (The whole package, wired to the backend, is tested in prep.test.ts.)
import { describe, expect, it } from "vitest";
import { fireEvent, render, screen } from "@testing-library/svelte";
import FindingsPanel from "../src/views/prep/FindingsPanel.svelte";
import LeaseBar from "../src/views/prep/LeaseBar.svelte";
import PublishPanel from "../src/views/prep/PublishPanel.svelte";
import type { ArtifactKind, Finding_Serialize as Finding, PrepExportFormat } from "../src/lib/bindings";

const LATER = "2031-05-06T10:30:00Z";

function finding(extra: Partial<Finding> = {}): Finding {
  return {
    cycle: 1,
    perspective: "protest_lawyer",
    severity: "minor",
    target: "criteria",
    rationale: "The weights favour the incumbent.",
    status: "awaiting_buyer",
    dismissal: null,
    ...extra,
  };
}

describe("Prep Studio panels", () => {
  it("the lease bar says who holds the lease and offers what the buyer may do", async () => {
    const taken: string[] = [];
    const view = render(LeaseBar, {
      published: false,
      lock: null,
      ontake: () => taken.push("take"),
      ontakeover: () => taken.push("take over"),
      onrelease: () => taken.push("release"),
    });
    expect(screen.getByTestId("prep-lock").textContent).toContain("No one holds the edit lease");
    await fireEvent.click(screen.getByTestId("take-lease"));

    await view.rerender({ lock: { holder_name: "Ana", held_by_me: false, expires_at: LATER, expired: false, on_service: false } });
    const bar = screen.getByTestId("prep-lock");
    expect(bar.textContent).toContain("Read only: Ana holds the edit lease");
    expect(bar.classList.contains("warn")).toBe(true);
    expect(screen.queryByTestId("take-over")).toBeNull();

    await view.rerender({ lock: { holder_name: "Ana", held_by_me: false, expires_at: LATER, expired: true, on_service: true } });
    expect(screen.getByTestId("prep-lock").textContent).toContain("Taking it over is recorded in the audit log");
    await fireEvent.click(screen.getByTestId("take-over"));

    await view.rerender({ lock: { holder_name: "Bo", held_by_me: true, expires_at: LATER, expired: false, on_service: true } });
    expect(screen.getByTestId("prep-lock").textContent).toContain("edit lease for all of the organization's desktops");
    await fireEvent.click(screen.getByTestId("release-lease"));
    expect(taken).toEqual(["take", "take over", "release"]);

    await view.rerender({ published: true });
    expect(screen.getByTestId("prep-lock").textContent?.trim()).toBe("Published: read only.");
  });

  it("a finding is dismissed only with a reason; a refusal stays in the row with what was typed", async () => {
    const sent: [number, string][] = [];
    let answer: string | null = "This finding was already acted on.";
    render(FindingsPanel, {
      findings: [finding({ status: "re_run", severity: "major" }), finding()],
      criticCycles: 2,
      readonly: false,
      busy: false,
      onselect: () => {},
      ondismiss: async (index: number, reason: string) => {
        sent.push([index, reason]);
        return answer;
      },
    });
    // Only the finding left to the buyer can be dismissed.
    expect(screen.getAllByTestId("dismiss-finding")).toHaveLength(1);
    await fireEvent.click(screen.getByTestId("dismiss-finding"));
    await fireEvent.click(screen.getByTestId("dismiss-confirm"));
    expect(screen.getByTestId("dismiss-error").textContent).toContain("Say why this finding does not apply");
    expect(sent).toEqual([]);

    const reason = screen.getByTestId("dismiss-reason") as HTMLInputElement;
    await fireEvent.input(reason, { target: { value: "Weights follow the policy." } });
    await fireEvent.click(screen.getByTestId("dismiss-confirm"));
    expect(sent).toEqual([[1, "Weights follow the policy."]]);
    expect(await screen.findByTestId("dismiss-error")).toHaveProperty("textContent", "This finding was already acted on.");
    expect((screen.getByTestId("dismiss-reason") as HTMLInputElement).value).toBe("Weights follow the policy.");

    answer = null;
    await fireEvent.click(screen.getByTestId("dismiss-confirm"));
    expect(screen.queryByTestId("dismiss-reason")).toBeNull();
  });

  it("the publish panel lists what blocks publishing, opens its artifact, and offers export only when nothing does", async () => {
    const opened: ArtifactKind[] = [];
    const exported: PrepExportFormat[] = [];
    const view = render(PublishPanel, {
      precheck: [{ rule: "weights_not_hundred", artifact: "criteria", subject: null, message: "the weights sum to 95 %" }],
      notice: null,
      published: false,
      readonly: false,
      busy: false,
      onselect: (k: ArtifactKind) => opened.push(k),
      onpublish: () => {},
      onexport: (f: PrepExportFormat) => exported.push(f),
    });
    expect(screen.getByTestId("precheck").textContent).toContain("Evaluation criteria: the weights sum to 95 %");
    await fireEvent.click(screen.getByRole("button", { name: "Evaluation criteria" }));
    expect(opened).toEqual(["criteria"]);
    expect((screen.getByTestId("export-docx") as HTMLButtonElement).disabled).toBe(true);

    await view.rerender({ precheck: [], notice: { kind: "ok", text: "Published through the publish gate." }, published: true });
    expect(screen.getByTestId("precheck-ready")).toBeTruthy();
    expect(screen.queryByTestId("publish-button")).toBeNull();
    expect(screen.getByTestId("publish-notice").getAttribute("role")).toBe("status");
    await fireEvent.click(screen.getByTestId("export-ocds"));
    expect(exported).toEqual(["ocds"]);
  });
});
