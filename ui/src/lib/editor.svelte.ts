/**
 * The editing state every Prep Studio editor shares (intake, scope, requirements, criteria, pricing, milestones):
 * the form is loaded from the saved content whenever its hash changes, edits make it dirty, save sends the content
 * built from the form (after the form's own shape check) and says what happened, revert loads the saved content
 * again. Table editors also add and remove rows through it. The rules themselves are the backend's validators.
 */
import { tick, untrack } from "svelte";
import type { Violation } from "./bindings";
import { focusAfterRemoval, onRowKeydown } from "./prep";

export interface EditorMessage {
  kind: "ok" | "error";
  text: string;
}

export interface EditorConfig<C> {
  /** The saved content and its hash (read each time: pass getters over the component's props). */
  content: () => C | null;
  hash: () => string | null;
  readonly: () => boolean;
  /** Fills the form from saved content (or empties it for none). */
  load: (content: C | null) => void;
  /** The content the form holds, or the message of a shape problem the form must fix before sending. */
  build: () => C | string;
  /** Sends the content; resolves to an error message to show (what was typed stays), or null when saved. */
  send: (content: C) => Promise<string | null>;
  ondirty: (dirty: boolean) => void;
  /** What a successful save says (null: nothing). */
  savedText?: string | null;
  /** Whether save does nothing while the form is unchanged (the intake of a new package sends as it is). */
  onlyWhenDirty?: boolean;
}

/** The props every artifact editor of a package takes (each adds what it shows besides). */
export interface EditorProps<C> {
  content: C | null;
  hash: string | null;
  errors: Violation[];
  readonly?: boolean;
  /** Saves the content; resolves to an error message to show, or null when saved. */
  onsave: (content: C) => Promise<string | null>;
  ondirty?: (dirty: boolean) => void;
}

/** The editing state of an artifact editor over its props (`props()` reads them as they are now) and its form. */
export function artifactEditor<C>(props: () => EditorProps<C>, form: Pick<EditorConfig<C>, "load" | "build">): ArtifactEditor<C> {
  return new ArtifactEditor<C>({
    content: () => props().content,
    hash: () => props().hash,
    readonly: () => props().readonly ?? false,
    send: (content) => props().onsave(content),
    ondirty: (dirty) => props().ondirty?.(dirty),
    ...form,
  });
}

/** What the bar under an editor shows and does (see `EditorBar.svelte`). */
export interface EditorState {
  readonly dirty: boolean;
  readonly saving: boolean;
  readonly message: EditorMessage | null;
  save: () => void;
  revert: () => void;
}

const SAVED = "Saved and validated.";

/** Cells of a table row that take focus after adding or removing a row. */
const FIRST_CELL = "td:first-child";

export class ArtifactEditor<C> implements EditorState {
  dirty = $state(false);
  saving = $state(false);
  message = $state<EditorMessage | null>(null);
  readonly #config: EditorConfig<C>;

  /** Call while a component initialises: the form follows the saved content's hash from then on. */
  constructor(config: EditorConfig<C>) {
    this.#config = config;
    let seen: string | null | undefined = undefined;
    $effect(() => {
      const hash = config.hash();
      if (hash !== seen) {
        seen = hash;
        untrack(() => config.load(config.content()));
        this.setDirty(false);
      }
    });
  }

  setDirty = (value: boolean): void => {
    this.dirty = value;
    this.#config.ondirty(value);
  };

  /** A field changed: the form is dirty and the last message no longer applies. */
  changed = (): void => {
    this.setDirty(true);
    this.message = null;
  };

  save = async (): Promise<void> => {
    const config = this.#config;
    if ((config.onlyWhenDirty !== false && !this.dirty) || this.saving || config.readonly()) return;
    const built = config.build();
    if (typeof built === "string") {
      this.message = { kind: "error", text: built };
      return;
    }
    this.saving = true;
    this.message = null;
    const error = await config.send(built);
    this.saving = false;
    const saved = config.savedText === undefined ? SAVED : config.savedText;
    this.message = error ? { kind: "error", text: error } : saved ? { kind: "ok", text: saved } : null;
    if (!error) this.setDirty(false);
  };

  revert = (): void => {
    this.#config.load(this.#config.content());
    this.setDirty(false);
    this.message = null;
  };

  /** Ctrl+Enter or Ctrl+S from any field of a form saves it. */
  saveKey = (event: KeyboardEvent): boolean => {
    if ((event.ctrlKey || event.metaKey) && (event.key === "Enter" || event.key.toLowerCase() === "s")) {
      event.preventDefault();
      void this.save();
      return true;
    }
    return false;
  };

  /** Inserts `row` below row `after` and focuses its `cell` (by default its first cell). */
  async addRow<R>(table: HTMLTableElement | null, rows: R[], after: number, row: R, cell = FIRST_CELL): Promise<void> {
    rows.splice(after + 1, 0, row);
    this.changed();
    await tick();
    table?.querySelectorAll<HTMLInputElement>(`tr[data-row] ${cell} input`)[after + 1]?.focus();
  }

  /** Removes row `index` and focuses the row now in its place (see `focusAfterRemoval`). */
  async removeRow<R>(table: HTMLTableElement | null, rows: R[], index: number, cell = FIRST_CELL): Promise<void> {
    rows.splice(index, 1);
    this.changed();
    await tick();
    focusAfterRemoval(table, index, rows.length, cell);
  }

  /** The keys of a table row (see `onRowKeydown`): save, a new row (`blank()`) below this one, remove this one. */
  rowKeydown<R>(event: KeyboardEvent, table: HTMLTableElement | null, rows: R[], index: number, blank: () => R): void {
    onRowKeydown(event, this.#config.readonly(), {
      save: () => void this.save(),
      addRow: () => void this.addRow(table, rows, index, blank()),
      removeRow: () => void this.removeRow(table, rows, index),
    });
  }
}
