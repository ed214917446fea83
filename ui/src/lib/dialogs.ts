/** The save dialog, through one door. End-to-end tests start the app with `PACTWISE_SAVE_DIR`, which makes the shell
 * set `window.__PACTWISE_SAVE_DIR__`: then no native dialog opens (WebDriver cannot drive one) and the answer is the
 * suggested file name in that folder. Without it the dialog opens as usual. */
import { save, type SaveDialogOptions } from "@tauri-apps/plugin-dialog";

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
