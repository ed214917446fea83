// The keyboard helpers every view shares (lib/keys.ts): which key presses a single-key shortcut may take, and the
// list keys (j/k and the arrows) of the documents, queue, review, report, approvals and Prep Studio lists.
import { describe, expect, it } from "vitest";
import { isPlainKey, isTyping, listKeys } from "../src/lib/keys";

function press(key: string, init: KeyboardEventInit = {}, target: EventTarget = document.body): KeyboardEvent {
  const event = new KeyboardEvent("keydown", { key, cancelable: true, bubbles: true, ...init });
  target.dispatchEvent(event);
  return event;
}

describe("keyboard helpers", () => {
  it("a key typed into a field, or held with Alt, Ctrl or Meta, is not a plain key", () => {
    const field = document.createElement("input");
    document.body.append(field);
    expect(isTyping(field)).toBe(true);
    expect(isTyping(document.body)).toBe(false);
    expect(isPlainKey(press("j"))).toBe(true);
    expect(isPlainKey(press("j", {}, field))).toBe(false);
    expect(isPlainKey(press("j", { ctrlKey: true }))).toBe(false);
    expect(isPlainKey(press("j", { altKey: true }))).toBe(false);
    expect(isPlainKey(press("j", { metaKey: true }))).toBe(false);
    field.remove();
  });

  it("j and ↓ move to the next entry, k and ↑ to the previous one, and the key is taken", () => {
    const steps: number[] = [];
    const move = (step: 1 | -1) => steps.push(step);
    for (const key of ["j", "ArrowDown", "k", "ArrowUp"]) {
      const event = press(key);
      expect(listKeys(event, move)).toBe(true);
      expect(event.defaultPrevented).toBe(true);
    }
    expect(steps).toEqual([1, 1, -1, -1]);
  });

  it("other keys, modified keys and keys typed into a field are left to the view", () => {
    const steps: number[] = [];
    const move = (step: 1 | -1) => steps.push(step);
    const field = document.createElement("textarea");
    document.body.append(field);
    for (const event of [press("Enter"), press("x"), press("j", { ctrlKey: true }), press("ArrowDown", { altKey: true }), press("k", {}, field)]) {
      expect(listKeys(event, move)).toBe(false);
      expect(event.defaultPrevented).toBe(false);
    }
    expect(steps).toEqual([]);
    field.remove();
  });
});
