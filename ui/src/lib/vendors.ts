import type { Identifier, VendorStatus, VendorSummary_Serialize } from "./bindings";

/** The statuses a person may set by hand (merged comes only from a merge), in people's words. */
export const SETTABLE_STATUSES: { value: VendorStatus; label: string }[] = [
  { value: "prospective", label: "Prospective" },
  { value: "onboarding", label: "Onboarding" },
  { value: "active", label: "Active" },
  { value: "blocked", label: "Blocked" },
];

/** The documents onboarding checks for, in people's words. */
export const ONBOARDING_DOCUMENTS: { value: string; label: string }[] = [
  { value: "w9", label: "W-9 form" },
  { value: "insurance_certificate", label: "Insurance certificate" },
  { value: "security_questionnaire", label: "Security questionnaire" },
];

/** An identifier as a person reads it: "Tax id: DE 123". */
export function identifierText(i: Identifier): string {
  const kind = i.kind.replace(/_/g, " ");
  return `${kind.charAt(0).toUpperCase()}${kind.slice(1)}: ${i.value}`;
}

/** Whether a vendor's name, another name or an identifier contains every word typed (case-insensitive). */
export function matchesVendor(v: VendorSummary_Serialize, typed: string): boolean {
  const words = typed.toLowerCase().split(/\s+/).filter(Boolean);
  if (words.length === 0) return true;
  const text = [v.name, ...v.aliases, ...v.identifiers.map((i) => i.value)].join(" ").toLowerCase();
  return words.every((w) => text.includes(w));
}
