// The sync service for the end-to-end tests: the real `pactwise-sync-server` (built beside the app) on loopback,
// with a temporary SQLite database; its admin command; and the `pactwise` command line on a data directory.
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import readline from "node:readline";
import { freshDataDir } from "./app.mjs";

const bin = path.dirname(process.env.PACTWISE_APP ?? "");
export const cliBin = process.env.PACTWISE_CLI ?? path.join(bin, "pactwise");
export const serverBin = path.join(bin, "pactwise-sync-server");

async function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/**
 * A sync service with its own database. `admin(args, input)` runs its admin command (a password goes in on stdin);
 * `start()` serves on a free loopback port and resolves to its address once its log says it listens (the log is
 * kept in the test output as `<name>.log`); `stop()` ends it. With `{ source: true }` PactWise Source is set up (a
 * key-wrapping key made by `source-key`) and `moveClock(seconds)` moves the service's time forward (its
 * `--clock-offset-file`), e.g. past a tender's deadline.
 */
export function syncService(name, { source = false } = {}) {
  const dir = freshDataDir(name);
  const database = `sqlite:${path.join(dir, "sync.sqlite3")}`;
  const sourceKey = path.join(dir, "source.key");
  const clockOffset = path.join(dir, "clock-offset");
  let server = null;
  let offset = 0;
  return {
    moveClock(seconds) {
      if (!source) throw new Error("moveClock needs syncService(name, { source: true })");
      offset += seconds;
      fs.writeFileSync(clockOffset, `${offset}\n`);
    },
    admin(args, input = "") {
      if (!fs.existsSync(serverBin)) throw new Error(`${serverBin} is missing: run make build`);
      return JSON.parse(execFileSync(serverBin, ["admin", "--database", database, ...args], { encoding: "utf8", input }));
    },
    async start() {
      const listen = `127.0.0.1:${await freePort()}`;
      const args = ["serve", "--listen", listen, "--database", database];
      if (source) {
        if (!fs.existsSync(sourceKey)) execFileSync(serverBin, ["source-key", sourceKey], { encoding: "utf8" });
        args.push("--source-key-file", sourceKey, "--clock-offset-file", clockOffset);
      }
      server = spawn(serverBin, args, {
        stdio: ["ignore", "ignore", "pipe"],
        env: { ...process.env, PACTWISE_LOG: "info" },
      });
      const log = fs.createWriteStream(path.join(process.env.E2E_OUTPUT ?? dir, `${name}.log`));
      await new Promise((resolve, reject) => {
        const lines = readline.createInterface({ input: server.stderr });
        lines.on("line", (line) => {
          log.write(`${line}\n`);
          if (/listening/.test(line)) resolve();
        });
        server.once("exit", (code) => reject(new Error(`the sync server exited (${code})`)));
        setTimeout(() => reject(new Error("the sync server did not start within 30 s")), 30000).unref();
      });
      return `http://${listen}`;
    },
    stop() {
      server?.kill("SIGTERM");
    },
  };
}

/**
 * The `pactwise` command on `dataDir`: `run(args, env)` answers its JSON; a refusal throws an Error whose `refusal`
 * is the command's JSON error ({ code, message }) and `stderr` what it said to a person.
 */
export function desktopCli(dataDir) {
  return {
    dataDir,
    /** What the command prints for a person (`input`: what a person would type, e.g. a key on stdin). */
    text(args, input) {
      return execFileSync(cliBin, ["--data-dir", dataDir, ...args], { encoding: "utf8", input });
    },
    run(args, env = {}) {
      try {
        const out = execFileSync(cliBin, ["--data-dir", dataDir, ...args, "--json"], {
          encoding: "utf8",
          env: { ...process.env, ...env },
          stdio: ["ignore", "pipe", "pipe"],
        });
        return JSON.parse(out);
      } catch (e) {
        const err = new Error(`pactwise ${args.join(" ")} failed: ${e.stderr || e.message}`);
        err.stderr = String(e.stderr ?? "");
        try {
          err.refusal = JSON.parse(String(e.stdout ?? "")).error;
        } catch {
          err.refusal = null;
        }
        throw err;
      }
    },
  };
}
