// The app as people run it paints directly (run.sh turns WebKit's compositing back on for the other tests, whose
// screenshots hang without it): the window's process then loads no OpenGL (`leave_opengl_to_the_web_process`,
// src-tauri/src/lib.rs), while WebKit's web process, which renders with EGL and stops without it, still finds Mesa.
// No screenshot here for that reason; the page is checked through the DOM instead.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { freshDataDir, launch } from "./app.mjs";

let app;

after(async () => {
  await app?.deleteSession().catch(() => {});
});

/** Every process as { pid, ppid, exe }, from /proc (processes that end while being read are skipped). */
function processes() {
  const all = [];
  for (const name of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      all.push({ pid: Number(name), ppid, exe: fs.readlinkSync(`/proc/${name}/exe`) });
    } catch {
      // gone, or not ours to read
    }
  }
  return all;
}

const loadsOpengl = (pid) => /\/dri\/|libLLVM/.test(fs.readFileSync(`/proc/${pid}/maps`, "utf8"));

test("painting directly, the window's process loads no OpenGL and the web process still renders", async () => {
  const dataDir = freshDataDir("painting");
  const wrapper = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "pactwise-e2e-painting-")), "pactwise-desk");
  const appPath = fs.realpathSync(process.env.PACTWISE_APP);
  fs.writeFileSync(wrapper, `#!/bin/sh\nunset WEBKIT_DISABLE_COMPOSITING_MODE\nexec "${appPath}" "$@"\n`, { mode: 0o755 });
  const before = new Set(processes().map((p) => p.pid));
  app = await launch(dataDir, { application: wrapper });
  assert.ok(await app.$("nav[aria-label=Areas]").isDisplayed(), "the app's areas are shown");

  const all = processes();
  const started = all.filter((p) => p.exe === appPath && !before.has(p.pid));
  assert.equal(started.length, 1, `one new app process, found ${started.length}`);
  const window = started[0];
  const web = all.filter((p) => p.ppid === window.pid && p.exe.endsWith("/WebKitWebProcess"));
  assert.equal(web.length, 1, "the app started one WebKit web process");
  // The web process was started with the app's environment as the app left it.
  const webEnviron = fs.readFileSync(`/proc/${web[0].pid}/environ`, "utf8").split("\0");
  assert.ok(webEnviron.includes("WEBKIT_DISABLE_COMPOSITING_MODE=1"), "the app chose to paint directly");
  assert.ok(
    !webEnviron.some((v) => v.startsWith("__EGL_VENDOR_LIBRARY_FILENAMES=")),
    "the web process's environment names no EGL drivers",
  );
  assert.equal(loadsOpengl(window.pid), false, "the window's process has no Mesa OpenGL driver or LLVM loaded");
  assert.equal(loadsOpengl(web[0].pid), true, "the web process renders with Mesa's EGL, as before");
});
