import { describe, expect, it } from "vitest";
import { boundsLabel, clauseEntries, partLabel, progressLabel, statusLabel } from "../src/lib/report";
import { reportFixture, reportView } from "./report-fixture";

describe("report helpers", () => {
  it("says where a report stands in words", () => {
    expect(statusLabel(reportView())).toBe("Incomplete, awaiting sign-off");
    const complete = reportView();
    complete.report!.completeness = "complete";
    expect(statusLabel(complete)).toBe("Complete, awaiting sign-off");
    expect(statusLabel(reportView({ status: "failed", reason: "no model" }))).toBe("Failed: no model");
    expect(statusLabel(reportView({ status: "running" }))).toMatch(/^Running/);
  });

  it("steps through clauses by type in playbook order, then the unassigned ones; a shared clause once per type", () => {
    const keys = clauseEntries(reportFixture()).map((e) => e.key);
    expect(keys).toEqual([
      "nda.parties.identified/W1-c1",
      "nda.parties.mutual/W1-c1",
      "nda.term.survival/W2-c1",
      "-/W2-c2",
    ]);
  });

  it("names unprocessed parts and bounds", () => {
    const r = reportFixture();
    expect(partLabel(r.unprocessed[0])).toBe("Clause type nda.remedies.injunctive");
    expect(partLabel({ part: "window", id: "3", label: "pages 5–6", reason: "time_limit", detail: null })).toBe("Window 3 (pages 5–6)");
    expect(boundsLabel(r)).toBe("6 of 6 model calls · 4 s of 300 s");
    expect(progressLabel(reportView())).toBe("Windows 2 of 2 · clause types 5 of 5 · 6 model calls");
  });
});
