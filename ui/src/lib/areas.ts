/** The areas of the app, in the order of the navigation rail. Alt+number switches to an area. */
export type AreaId = "queue" | "documents" | "contracts" | "approvals" | "prep" | "assistant" | "settings" | "runs" | "vendors" | "tenders";

export interface Area {
  id: AreaId;
  label: string;
  /** What the area is for, shown as its subtitle. */
  purpose: string;
  /** Set while the area is not built yet: what it will do. */
  upcoming?: string;
}

export const AREAS: Area[] = [
  {
    id: "queue",
    label: "Review queue",
    purpose: "Documents that need a person, and why",
  },
  { id: "documents", label: "Documents", purpose: "Everything imported into this organization" },
  {
    id: "contracts",
    label: "Contracts",
    purpose: "Finalized contracts: their terms, risk and upcoming dates (/ searches, u shows the dates, l starts a lifecycle)",
  },
  {
    id: "approvals",
    label: "Approvals",
    purpose: "Workflow steps waiting for your decision",
  },
  {
    id: "prep",
    label: "Prep Studio",
    purpose: "Draft RFP packages: the model drafts, code checks, you approve",
  },
  {
    id: "assistant",
    label: "Assistant",
    purpose: "Questions about your contracts, answered with citations (Ctrl+/ opens it beside any view)",
  },
  { id: "settings", label: "Settings", purpose: "This installation and your organization" },
  {
    id: "runs",
    label: "Runs",
    purpose: "Start workflows (procurement, approvals, onboarding, invoices, budgets, renewals) and follow them",
  },
  {
    id: "vendors",
    label: "Vendors",
    purpose: "Vendor records: names, identifiers, status, their contracts; duplicates to merge and onboarding (n adds, m merges, o onboards)",
  },
  {
    id: "tenders",
    label: "Tenders",
    purpose: "Published tenders: invitations, questions, sealed submissions, opening, scores and the award (i invites, o opens)",
  },
];

/** The Alt+digit of the area at `index` in the rail: 1–9, then 0 for the tenth. */
export function areaDigit(index: number): string {
  return index === 9 ? "0" : String(index + 1);
}
