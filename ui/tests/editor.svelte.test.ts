// The editing state the six Prep Studio editors share (lib/editor.svelte.ts), tested on its own: what loads the form,
// what makes it dirty, what save sends and says, what revert restores, and the row actions of the table editors.
import { describe, expect, it } from "vitest";
import { flushSync, tick } from "svelte";
import { ArtifactEditor, type EditorConfig } from "../src/lib/editor.svelte";

interface Doc {
  items: string[];
}

/** An editor over reactive props (content, hash, readonly) and a form of rows, inside an effect root. */
function harness(overrides: Partial<EditorConfig<Doc>> = {}) {
  const props = $state<{ content: Doc | null; hash: string | null; readonly: boolean }>({
    content: { items: ["a", "b"] },
    hash: "h1",
    readonly: false,
  });
  const form = $state<{ rows: string[] }>({ rows: [] });
  const sent: Doc[] = [];
  const dirtyCalls: boolean[] = [];
  const reply: { error: string | null; release: (() => void) | null; hold: boolean } = { error: null, release: null, hold: false };
  let loads = 0;
  let editor!: ArtifactEditor<Doc>;
  const cleanup = $effect.root(() => {
    editor = new ArtifactEditor<Doc>({
      content: () => props.content,
      hash: () => props.hash,
      readonly: () => props.readonly,
      load: (c) => {
        loads++;
        form.rows = [...(c?.items ?? [])];
      },
      build: () => (form.rows.some((r) => r === "") ? "Fill in every row." : { items: [...form.rows] }),
      send: (doc) => {
        sent.push(doc);
        if (!reply.hold) return Promise.resolve(reply.error);
        return new Promise((resolve) => (reply.release = () => resolve(reply.error)));
      },
      ondirty: (d) => dirtyCalls.push(d),
      ...overrides,
    });
  });
  flushSync();
  return { props, form, sent, dirtyCalls, reply, editor, cleanup, loads: () => loads };
}

describe("the shared editing state of the Prep Studio editors", () => {
  it("loads the form from the saved content when the hash changes, and only then", () => {
    const h = harness();
    expect(h.form.rows).toEqual(["a", "b"]);
    expect(h.loads()).toBe(1);
    expect(h.dirtyCalls).toEqual([false]);

    // A new content object with the same hash (a reload of the same version) keeps what is being typed.
    h.form.rows.push("typed");
    h.editor.changed();
    h.props.content = { items: ["a", "b"] };
    flushSync();
    expect(h.form.rows).toEqual(["a", "b", "typed"]);
    expect(h.editor.dirty).toBe(true);

    // A new version replaces the form and the form is clean again.
    h.props.content = { items: ["x"] };
    h.props.hash = "h2";
    flushSync();
    expect(h.form.rows).toEqual(["x"]);
    expect(h.editor.dirty).toBe(false);
    expect(h.dirtyCalls).toEqual([false, true, false]);
    h.cleanup();
  });

  it("saves only a changed, writable form; a shape problem is said and nothing is sent", async () => {
    const h = harness();
    await h.editor.save();
    expect(h.sent).toHaveLength(0);

    h.form.rows[0] = "";
    h.editor.changed();
    await h.editor.save();
    expect(h.sent).toHaveLength(0);
    expect(h.editor.message).toEqual({ kind: "error", text: "Fill in every row." });
    expect(h.editor.dirty).toBe(true);

    h.form.rows[0] = "a2";
    h.props.readonly = true;
    await h.editor.save();
    expect(h.sent).toHaveLength(0);

    h.props.readonly = false;
    await h.editor.save();
    expect(h.sent).toEqual([{ items: ["a2", "b"] }]);
    expect(h.editor.message).toEqual({ kind: "ok", text: "Saved and validated." });
    expect(h.editor.dirty).toBe(false);
    expect(h.dirtyCalls.at(-1)).toBe(false);
    h.cleanup();
  });

  it("shows the backend's refusal and keeps what was typed, and is saving while the answer is awaited", async () => {
    const h = harness();
    h.form.rows[1] = "b2";
    h.editor.changed();
    h.reply.error = "Not saved: the package changed.";
    h.reply.hold = true;
    const pending = h.editor.save();
    expect(h.editor.saving).toBe(true);
    // A second save while the first is in flight sends nothing.
    await h.editor.save();
    expect(h.sent).toHaveLength(1);
    h.reply.release?.();
    await pending;
    expect(h.editor.saving).toBe(false);
    expect(h.editor.message).toEqual({ kind: "error", text: "Not saved: the package changed." });
    expect(h.editor.dirty).toBe(true);
    expect(h.form.rows).toEqual(["a", "b2"]);
    h.cleanup();
  });

  it("revert loads the saved content again and clears the message", async () => {
    const h = harness();
    h.form.rows[0] = "";
    h.editor.changed();
    await h.editor.save();
    expect(h.editor.message?.kind).toBe("error");
    h.editor.revert();
    expect(h.form.rows).toEqual(["a", "b"]);
    expect(h.editor.dirty).toBe(false);
    expect(h.editor.message).toBeNull();
    h.cleanup();
  });

  it("a form that sends when unchanged and says nothing on success (the new package's intake)", async () => {
    const h = harness({ savedText: null, onlyWhenDirty: false });
    await h.editor.save();
    expect(h.sent).toEqual([{ items: ["a", "b"] }]);
    expect(h.editor.message).toBeNull();
    h.cleanup();
  });

  it("Ctrl+Enter and Ctrl+S save; other keys are left alone", async () => {
    const h = harness();
    h.form.rows[0] = "a2";
    h.editor.changed();
    const plain = new KeyboardEvent("keydown", { key: "Enter", cancelable: true });
    expect(h.editor.saveKey(plain)).toBe(false);
    expect(plain.defaultPrevented).toBe(false);
    const ctrlS = new KeyboardEvent("keydown", { key: "S", ctrlKey: true, cancelable: true });
    expect(h.editor.saveKey(ctrlS)).toBe(true);
    expect(ctrlS.defaultPrevented).toBe(true);
    await tick();
    expect(h.sent).toEqual([{ items: ["a2", "b"] }]);
    h.cleanup();
  });

  it("table rows: Alt+Enter adds a blank row below and focuses it, Alt+Delete removes one, read only changes nothing", async () => {
    const h = harness();
    const table = document.createElement("table");
    const body = document.createElement("tbody");
    table.append(body);
    document.body.append(table);
    const draw = () => {
      body.replaceChildren(
        ...h.form.rows.map((value) => {
          const tr = document.createElement("tr");
          tr.setAttribute("data-row", "");
          const td = document.createElement("td");
          const input = document.createElement("input");
          input.value = value;
          td.append(input);
          tr.append(td);
          return tr;
        }),
      );
    };
    draw();
    const key = (init: KeyboardEventInit) => new KeyboardEvent("keydown", { cancelable: true, ...init });

    const add = key({ key: "Enter", altKey: true });
    h.editor.rowKeydown(add, table, h.form.rows, 0, () => "");
    expect(add.defaultPrevented).toBe(true);
    expect(h.form.rows).toEqual(["a", "", "b"]);
    expect(h.editor.dirty).toBe(true);
    draw();
    await tick();
    await tick();
    expect(document.activeElement).toBe(body.querySelectorAll("input")[1]);

    h.editor.rowKeydown(key({ key: "Delete", altKey: true }), table, h.form.rows, 1, () => "");
    expect(h.form.rows).toEqual(["a", "b"]);

    h.props.readonly = true;
    const refused = key({ key: "Enter", altKey: true });
    h.editor.rowKeydown(refused, table, h.form.rows, 0, () => "");
    expect(h.form.rows).toEqual(["a", "b"]);
    expect(refused.defaultPrevented).toBe(false);
    table.remove();
    h.cleanup();
  });
});
