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
    default:
      return "checking…";
  }
}
