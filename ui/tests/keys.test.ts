// The keyboard helpers every view shares (lib/keys.ts): which key presses a single-key shortcut may take, and the
// list keys (j/k and the arrows) of the documents, queue, review, report, approvals and Prep Studio lists.
import { describe, expect, it } from "vitest";
import { isPlainKey, isTyping, listKeys, revealRow, stepIn } from "../src/lib/keys";

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

  it("a step selects the next or previous entry within the list, the first when none is selected", () => {
    const list = ["a", "b", "c"];
    const at = (selected: string | null) => (entry: string) => entry === selected;
    expect(stepIn(list, at("a"), 1)).toBe("b");
    expect(stepIn(list, at("b"), -1)).toBe("a");
    expect(stepIn(list, at("c"), 1)).toBe("c");
    expect(stepIn(list, at("a"), -1)).toBe("a");
    expect(stepIn(list, at(null), 1)).toBe("a");
    expect(stepIn(list, at(null), -1)).toBe("a");
    expect(stepIn([], at(null), 1)).toBeNull();
  });

  it("the selected row is scrolled into view once the view is drawn", async () => {
    const row = document.createElement("div");
    row.dataset.rowId = "r7";
    const seen: ScrollIntoViewOptions[] = [];
    row.scrollIntoView = ((options: ScrollIntoViewOptions) => seen.push(options)) as typeof row.scrollIntoView;
    document.body.append(row);
    revealRow('[data-row-id="r7"]');
    expect(seen).toEqual([]);
    await Promise.resolve();
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(seen).toEqual([{ block: "nearest" }]);
    revealRow('[data-row-id="missing"]');
    row.remove();
  });
});
