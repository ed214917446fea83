/** The save dialog, through one door. End-to-end tests start the app with `PACTWISE_SAVE_DIR`, which makes the shell
 * set `window.__PACTWISE_SAVE_DIR__`: then no native dialog opens (WebDriver cannot drive one) and the answer is the
 * suggested file name in that folder. Without it the dialog opens as usual. */
import { save, type SaveDialogOptions } from "@tauri-apps/plugin-dialog";
import { humanSize } from "./format";
import { messageOf } from "./result";

declare global {
  interface Window {
    __PACTWISE_SAVE_DIR__?: string;
  }
}

/** The path the person chose, or null when they cancelled. */
export async function chooseSavePath(options: SaveDialogOptions & { defaultPath: string }): Promise<string | null> {
  const dir = typeof window !== "undefined" ? window.__PACTWISE_SAVE_DIR__ : undefined;
  if (dir) {
    const name = options.defaultPath.split(/[\\/]/).pop() || "export";
    return `${dir.replace(/[\\/]+$/, "")}/${name}`;
  }
  return save(options);
}

/** What an export tells the person, where they clicked. */
export interface ExportNotice {
  kind: "ok" | "error";
  text: string;
}

/** Asks where to save (through `chooseSavePath`), then writes there with `write`; `writing` is told when writing
 * starts and ends. Returns the notice to show ("Saved PATH (SIZE)" or what went wrong), or null when the person
 * cancelled the dialog. `failed` words a refused write (the raw message by default). */
export async function exportThroughDialog(
  options: SaveDialogOptions & { defaultPath: string },
  write: (path: string) => Promise<{ path: string; bytes: number }>,
  {
    writing = () => {},
    failed = messageOf,
  }: { writing?: (busy: boolean) => void; failed?: (e: unknown) => string | Promise<string> } = {},
): Promise<ExportNotice | null> {
  let path: string | null;
  try {
    path = await chooseSavePath(options);
  } catch (e) {
    return { kind: "error", text: `The save dialog could not open: ${messageOf(e)}` };
  }
  if (!path) return null;
  writing(true);
  try {
    const done = await write(path);
    return { kind: "ok", text: `Saved ${done.path} (${humanSize(done.bytes)}).` };
  } catch (e) {
    return { kind: "error", text: await failed(e) };
  } finally {
    writing(false);
  }
}
