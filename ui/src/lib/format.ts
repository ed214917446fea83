import type { SyncStatusView } from "./bindings";

/** "1.5 MB", the way a person writes sizes. */
export function humanSize(bytes: number): string {
  if (bytes < 1000) return `${bytes} B`;
  const units = ["KB", "MB", "GB", "TB"];
  let value = bytes;
  let unit = "B";
  for (const u of units) {
    if (value < 1000) break;
    value /= 1000;
    unit = u;
  }
  return `${value.toFixed(1)} ${unit}`;
}

/** A date and time in the person's locale, short. */
export function shortDateTime(iso: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return d.toLocaleString(undefined, { year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit" });
}

const mediaLabels: Record<string, string> = {
  pdf: "PDF",
  docx: "Word",
  txt: "Text",
  png: "PNG image",
  jpeg: "JPEG image",
  tiff: "TIFF image",
};

export function mediaLabel(mediaType: string): string {
  return mediaLabels[mediaType] ?? mediaType;
}

/** The file name of a path, for messages. */
export function baseName(path: string): string {
  const parts = path.split(/[\\/]/);
  return parts[parts.length - 1] || path;
}

/** The status line's words for the model's availability (never colour alone). */
export function modelLabel(model: string | null): string {
  switch (model) {
    case "ready":
      return "online";
    case "no_api_key":
      return "offline (no API key)";
    case "keychain_unavailable":
      return "offline (keychain unavailable)";
    case "paused":
      return "paused after errors (rules in use)";
    case "no_secure_connection":
      return "offline (no root certificates: install ca-certificates)";
    default:
      return "checking…";
  }
}

/** The status line's words for sync (never colour alone). */
export function syncLabel(sync: SyncStatusView | null): string {
  if (!sync) return "checking…";
  const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;
  switch (sync.phase) {
    case "not_signed_in":
      return "local only";
    case "syncing":
      return "syncing…";
    case "waiting_to_retry":
      return "waiting to retry";
    case "pending": {
      const parts = [];
      if (sync.pending_uploads > 0) parts.push(plural(sync.pending_uploads, "pending upload", "pending uploads"));
      if (sync.files_waiting > 0) parts.push(plural(sync.files_waiting, "file to fetch", "files to fetch"));
      return parts.join(", ") || "changes waiting";
    }
    case "synced":
      return "synced";
    case "not_synced_yet":
      return "not synced yet";
  }
}

/** The status line's tooltip for sync: where, when it last worked, and what goes wrong while stuck. */
export function syncTitle(sync: SyncStatusView | null): string {
  if (!sync || sync.phase === "not_signed_in") return "This computer does not sync; sign in to sync in Settings.";
  const lines = [];
  if (sync.org_name && sync.account) lines.push(`${sync.org_name} on ${sync.account.server}`);
  lines.push(sync.last_success ? `Last synced ${shortDateTime(sync.last_success)}` : "Not synced yet");
  lines.push(`${sync.pending_uploads} pending upload(s), ${sync.files_waiting} file(s) to fetch`);
  if (sync.next_retry_at) lines.push(`Retries by itself at ${shortDateTime(sync.next_retry_at)}`);
  if (sync.last_error) lines.push(sync.last_error.message);
  return lines.join("\n");
}

/** Characters that change how text around them is shown instead of being shown: control characters (C0, DEL,
 * C1: line breaks, escape sequences) and the bidirectional overrides and isolates that reorder a line. */
const HIDDEN_CONTROLS = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/** A name received from elsewhere (a document or user name from sync), fit to show: every control character is
 * shown as "�" so it cannot break a line, fake a row or reorder the text. For display only; the stored name keeps
 * its bytes. */
export function cleanText(text: string): string {
  return text.replace(HIDDEN_CONTROLS, "\ufffd");
}

/** A role as people call it. */
export function roleLabel(role: string): string {
  const labels: Record<string, string> = {
    owner: "Owner",
    admin: "Admin",
    reviewer: "Reviewer",
    buyer: "Buyer",
    approver: "Approver",
    viewer: "Viewer",
  };
  return labels[role] ?? role;
}

/**
 * An exact decimal amount computed by the backend ("14388.00", "-1234567.5") with its thousands grouped for reading
 * ("14,388.00"); the digits are never converted through a float. Anything else is shown as it came.
 */
export function groupDigits(amount: string): string {
  const match = /^(-?)(\d+)(\.\d+)?$/.exec(amount.trim());
  if (!match) return amount;
  const [, sign, whole, fraction = ""] = match;
  return sign + whole.replace(/\B(?=(\d{3})+(?!\d))/g, ",") + fraction;
}
