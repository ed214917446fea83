import { tick } from "svelte";

/** Whether a key press lands in a field the person is typing in (single-key shortcuts stay out of its way). */
export function isTyping(target: EventTarget | null): boolean {
  return target instanceof HTMLElement && (target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName));
}

/** A key pressed without Alt, Ctrl or Meta, outside a field being typed in: one a single-key shortcut may take. */
export function isPlainKey(event: KeyboardEvent): boolean {
  return !event.altKey && !event.ctrlKey && !event.metaKey && !isTyping(event.target);
}

/**
 * The keys of every list view: j or ↓ selects the next entry, k or ↑ the previous one (`move(1)`, `move(-1)`).
 * Handles the event (its default prevented) and returns true when it was one of them; a key with Alt, Ctrl or Meta
 * held, or typed into a field, is left alone.
 */
export function listKeys(event: KeyboardEvent, move: (step: 1 | -1) => void): boolean {
  if (!isPlainKey(event)) return false;
  const step = event.key === "j" || event.key === "ArrowDown" ? 1 : event.key === "k" || event.key === "ArrowUp" ? -1 : 0;
  if (step === 0) return false;
  event.preventDefault();
  move(step);
  return true;
}

/** The entry `step` places from the selected one (the first when none is selected), kept within the list; null for an
 * empty list. What j/k and the arrows select in a list view. */
export function stepIn<T>(list: T[], isSelected: (entry: T) => boolean, step: number): T | null {
  if (list.length === 0) return null;
  const at = list.findIndex(isSelected);
  return list[at < 0 ? 0 : Math.min(list.length - 1, Math.max(0, at + step))];
}

/** Once the view is drawn, scrolls the row matching `selector` into view (as little as needed). */
export function revealRow(selector: string): void {
  void tick().then(() => {
    const row = document.querySelector<HTMLElement>(selector);
    if (row && typeof row.scrollIntoView === "function") row.scrollIntoView({ block: "nearest" });
  });
}
